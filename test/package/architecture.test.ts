import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The dependency direction, checked by dependency-cruiser with the rule file that is the
 * architecture (.dependency-cruiser.cjs, drawn in docs/architecture.md): run exactly as
 * `npm run depcruise` runs it, over src/ and over a small tree built to break every rule.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const RULE_FILE = join(ROOT, '.dependency-cruiser.cjs');
const BIN = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const RULES = (createRequire(import.meta.url)(RULE_FILE) as { forbidden: { name: string }[] }).forbidden.map((r) => r.name);

interface Cruise {
  readonly modules: readonly { source: string; dependencies: readonly { resolved: string; couldNotResolve: boolean }[] }[];
  readonly summary: { readonly violations: readonly { from: string; to: string; rule: { name: string } }[] };
}

function depcruise(cwd: string): Cruise {
  const run = spawnSync(process.execPath, [BIN, 'src', '--config', RULE_FILE, '--output-type', 'json'], { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  // The exit code counts the violations; the JSON report is written either way.
  if (!run.stdout.startsWith('{')) throw new Error(`dependency-cruiser wrote no report (exit ${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout) as Cruise;
}

const violationsOf = (c: Cruise): string[] => c.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();

describe('the dependency rules over src/', () => {
  const result = depcruise(ROOT);

  it('hold: no violation', () => {
    expect(violationsOf(result)).toEqual([]);
  });

  it('saw the whole source tree, every import resolved', () => {
    // A rule over modules the tool could not read or resolve would pass by seeing nothing.
    const sources = new Set(result.modules.map((m) => m.source));
    for (const file of ['src/index.ts', 'src/compile.ts', 'src/emit/emit.ts', 'src/server/app.ts', 'src/mcp/tools.ts', 'src/console/web/main.tsx']) {
      expect(sources.has(file), file).toBe(true);
    }
    const app = result.modules.find((m) => m.source === 'src/server/app.ts')!;
    expect(app.dependencies.map((d) => d.resolved)).toContain('src/mcp/http.ts');
    const parser = result.modules.find((m) => m.source === 'src/syntax/parser.ts')!;
    expect(parser.dependencies.some((d) => d.resolved.startsWith('node_modules/chevrotain/'))).toBe(true);
    expect(result.modules.flatMap((m) => m.dependencies.filter((d) => d.couldNotResolve).map((d) => `${m.source} → ${d.resolved}`))).toEqual([]);
  });
});

/**
 * A tree shaped like src/ in which each forbidden edge breaks one rule, beside edges the
 * architecture allows. `to` null: an import of a module that does not exist.
 */
const FORBIDDEN: readonly (readonly [rule: string, from: string, to: string])[] = [
  ['no-cycles', 'src/plan/cycle-a.ts', 'src/plan/cycle-b.ts'],
  ['every-import-resolves', 'src/run/typo.ts', 'src/run/missing.ts'],
  ['product-never-imports-tests', 'src/demo/seed.ts', 'test/support/db.ts'],
  ['compiler-stages-never-import-the-service', 'src/bind/bind.ts', 'src/service/policy.ts'],
  ['syntax-never-imports-a-later-stage', 'src/syntax/parse.ts', 'src/validate/checks.ts'],
  ['validate-never-imports-a-later-stage', 'src/validate/validate.ts', 'src/bind/bound.ts'],
  ['bind-never-imports-a-later-stage', 'src/bind/binder.ts', 'src/plan/rewrites.ts'],
  ['plan-never-imports-a-later-stage', 'src/plan/plan.ts', 'src/emit/output-names.ts'],
  ['stages-never-import-their-front-ends', 'src/catalog/types.ts', 'src/lint/lint.ts'],
  ['catalog-and-diagnostics-sit-beside-the-pipeline', 'src/diagnostics/codes.ts', 'src/syntax/tokens.ts'],
  ['front-ends-build-run-runs', 'src/filter/page.ts', 'src/run/read.ts'],
  ['emit-only-through-the-planner-output', 'src/records/write.ts', 'src/emit/emit.ts'],
  ['run-sits-below-the-front-ends', 'src/run/decode.ts', 'src/compile.ts'],
  ['library-never-imports-the-service', 'src/query/execute.ts', 'src/server/app.ts'],
  ['shared-rules-are-leaves', 'src/rules.ts', 'src/catalog/quote.ts'],
  ['service-knows-no-surface', 'src/service/operations.ts', 'src/mcp/tools.ts'],
  ['surfaces-reach-data-through-operations', 'src/server/routes/keys.ts', 'src/service/store/api-keys.ts'],
  ['surfaces-reach-data-through-operations', 'src/console/plugin.ts', 'src/service/store/console-sessions.ts'],
  ['surfaces-reach-data-through-operations', 'src/cli/service-access.ts', 'src/service/store/api-keys.ts'],
  ['surfaces-reach-data-through-operations', 'src/server/admin.ts', 'src/service/store/workspaces.ts'],
  ['mcp-is-a-sibling-of-rest', 'src/mcp/http.ts', 'src/server/plugins/auth.ts'],
  ['oauth-imports-no-other-surface', 'src/oauth/token.ts', 'src/mcp/tools.ts'],
  ['console-is-a-sibling-of-rest', 'src/console/plugin.ts', 'src/server/plugins/auth.ts'],
  ['only-the-composition-root-mounts-surfaces', 'src/server/routes/records.ts', 'src/console/plugin.ts'],
  ['the-cli-is-the-top', 'src/server/routes/health.ts', 'src/cli/version.ts'],
  ['console-web-is-browser-code', 'src/console/web/page.ts', 'src/service/types.ts'],
  ['only-the-console-web-imports-itself', 'src/console/assets.ts', 'src/console/web/main.ts'],
  ['answer-shapes-import-nothing', 'src/wire/tool-log.ts', 'src/service/types.ts'],
];

/** The edge back that makes the first one a cycle (reported once, at the first edge the tool walks). */
const CLOSES_THE_CYCLE = ['src/plan/cycle-b.ts', 'src/plan/cycle-a.ts'] as const;

/** Edges the architecture allows, some from the same modules as forbidden ones. */
const ALLOWED: readonly (readonly [from: string, to: string])[] = [
  ['src/compile.ts', 'src/emit/emit.ts'],
  ['src/run/decode.ts', 'src/emit/output-names.ts'],
  ['src/query/execute.ts', 'src/compile.ts'],
  ['src/query/execute.ts', 'src/run/read.ts'],
  ['src/query/filter.ts', 'src/filter/page.ts'],
  ['src/emit/emit.ts', 'src/plan/rewrites.ts'],
  ['src/bind/binder.ts', 'src/validate/checks.ts'],
  ['src/lint/lint.ts', 'src/compile.ts'],
  ['src/filter/page.ts', 'src/compile.ts'],
  ['src/records/write.ts', 'src/run/read.ts'],
  ['src/server/app.ts', 'src/mcp/http.ts'],
  ['src/server/app.ts', 'src/console/plugin.ts'],
  ['src/server/app.ts', 'src/oauth/plugin.ts'],
  ['src/mcp/http.ts', 'src/oauth/context.ts'],
  ['src/mcp/http.ts', 'src/service/policy.ts'],
  ['src/server/routes/keys.ts', 'src/service/operations.ts'],
  ['src/service/operations.ts', 'src/service/store/api-keys.ts'],
  ['src/console/plugin.ts', 'src/oauth/consent.ts'],
  ['src/oauth/plugin.ts', 'src/service/policy.ts'],
  ['src/service/open.ts', 'src/demo/seed.ts'],
  ['src/demo/seed.ts', 'fixtures/crm/objects-list.json'],
  ['src/console/web/page.ts', 'src/catalog/payload.ts'],
  ['src/console/web/page.ts', 'src/wire/tool-log.ts'],
  ['src/service/store/tool-logs.ts', 'src/wire/tool-log.ts'],
  ['src/rules.ts', 'src/diagnostics/codes.ts'],
  ['src/cli/main.ts', 'src/server/app.ts'],
];

describe('the dependency rules over a tree that breaks each of them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'oql-architecture-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const imports = new Map<string, string[]>();
  const files = new Set<string>();
  for (const [, from, to] of FORBIDDEN) imports.set(from, [...(imports.get(from) ?? []), to]);
  for (const [from, to] of [...ALLOWED, CLOSES_THE_CYCLE]) imports.set(from, [...(imports.get(from) ?? []), to]);
  for (const [from, targets] of imports) {
    files.add(from);
    for (const to of targets) if (to !== 'src/run/missing.ts') files.add(to);
  }
  for (const file of files) {
    const lines = (imports.get(file) ?? []).map((to, i) => {
      let spec = posix.relative(posix.dirname(file), to).replace(/\.ts$/, '.js');
      if (!spec.startsWith('.')) spec = `./${spec}`;
      return `import * as m${i} from '${spec}';\nexport const use${i} = m${i};`;
    });
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), file.endsWith('.json') ? '{}\n' : `${lines.join('\n')}\nexport const leaf = 1;\n`);
  }
  writeFileSync(join(dir, 'tsconfig.json'), readFileSync(join(ROOT, 'tsconfig.json'), 'utf8').replace(/"include": \[[^\]]*\]/, '"include": ["src"]'));

  const result = depcruise(dir);

  it('reports each forbidden edge under its rule, and no allowed one', () => {
    const expected = FORBIDDEN.map(([rule, from, to]) => `${rule}: ${from} → ${to === 'src/run/missing.ts' ? './missing.js' : to}`).sort();
    expect(violationsOf(result)).toEqual(expected);
  });

  it('has a broken edge for every rule of the file, so none of them passes by never matching', () => {
    expect(new Set(FORBIDDEN.map(([rule]) => rule))).toEqual(new Set(RULES));
  });
});

describe('docs/architecture.md', () => {
  it('links the rule file and names every rule in it', () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    expect(doc).toContain('(../.dependency-cruiser.cjs)');
    for (const rule of RULES) expect(doc, rule).toContain(`\`${rule}\``);
  });
});
