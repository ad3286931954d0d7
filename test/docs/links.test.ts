import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link of the README and the docs pages leads somewhere: the file exists, and an
 * anchor names a heading of that file as GitHub renders it (lower case, punctuation dropped,
 * spaces to hyphens, a repeated heading numbered -1, -2, …). Links inside code are not links.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The text outside fenced code blocks and inline code spans. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading's text. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '');
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const base = slug(heading!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

interface Link {
  readonly page: string;
  readonly target: string;
}

function linksOf(page: string): Link[] {
  const text = prose(readFileSync(join(ROOT, page), 'utf8'));
  const out: Link[] = [];
  for (const [, target] of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // https:, mailto: and other schemes
    out.push({ page, target: target! });
  }
  return out;
}

const links = PAGES.flatMap(linksOf);

describe('links of the README and the docs pages', () => {
  it('there are links to check', () => {
    expect(links.length).toBeGreaterThan(50);
    expect(links.some((l) => l.target.includes('#'))).toBe(true);
  });

  it.each(links.map((l) => [`${l.page} → ${l.target}`, l] as const))('%s resolves', (_name, link) => {
    const [path, anchor] = link.target.split('#', 2) as [string, string | undefined];
    const file = path === '' ? join(ROOT, link.page) : resolve(ROOT, dirname(link.page), decodeURIComponent(path));
    expect(relative(ROOT, file).startsWith('..'), `${link.target} leaves the repository`).toBe(false);
    expect(existsSync(file), `${link.page}: ${link.target} names no file`).toBe(true);
    if (anchor !== undefined) {
      expect(statSync(file).isFile() && file.endsWith('.md'), `${link.page}: an anchor into ${path}, which is not a page`).toBe(true);
      const anchors = anchorsOf(file);
      expect([...anchors], `${link.page}: ${link.target} names no heading`).toContain(anchor);
    }
  });
});
