import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { DiagnosticCode } from '../../src/diagnostics/codes.js';
import { allPages, diagnosticsMarkdown } from '../../src/lint/docs.js';
import { lint } from '../../src/lint/lint.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';

/** The code pages are right: each wrong example raises its code, each right example does not. */

const catalog = loadFixtureCatalog('crm');

describe('diagnostic code pages', () => {
  for (const page of allPages().filter((p) => p.wrong !== undefined)) {
    it(`${page.code}: the wrong example raises it, the right one is clean of it`, () => {
      const slug = page.slug ?? 'opportunity';
      const wrong = lint(page.wrong!, { catalog, slug, ...page.options }).map((d) => d.code);
      expect(wrong, page.wrong).toContain(page.code as DiagnosticCode);
      const right = lint(page.right!, { catalog, slug, ...page.options });
      expect(right.map((d) => d.code), page.right).not.toContain(page.code);
      expect(right.filter((d) => d.severity === 'error'), page.right).toEqual([]);
    });
  }

  it('every example has both halves', () => {
    for (const p of allPages()) expect(p.wrong === undefined, p.code).toBe(p.right === undefined);
  });

  it('docs/diagnostics.md is the rendering of the pages (oql explain --markdown)', () => {
    const file = readFileSync(new URL('../../docs/diagnostics.md', import.meta.url), 'utf8');
    expect(file, 'docs/diagnostics.md is stale: run oql explain --markdown > docs/diagnostics.md').toBe(diagnosticsMarkdown());
  });
});
