import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { compile } from '../../src/index.js';
import pkg from '../../package.json' with { type: 'json' };
import { cli, compiledQuery, STACK_LINE, tempTree } from './helpers.js';
import { NODE_FLAGS } from '../support/node-flags.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const exec = promisify(execFile);

interface Proc { code: number; stdout: string; stderr: string }

async function node(args: readonly string[], cwd = ROOT): Promise<Proc> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [...NODE_FLAGS, CLI, ...args], { cwd, env: { ...process.env, NO_COLOR: '1' } });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** Timings are the only thing allowed to differ between two runs of the demo. */
function withoutTimings(text: string): string {
  return text.replace(/\d+(\.\d+)? (ms|s)\b/g, '<t>');
}

describe('the built CLI (dist/cli.js)', () => {
  it('starts with a shebang, prints its version and compiles', async () => {
    expect((await node(['--version'])).stdout).toBe(`${pkg.version}\n`);
    const q = 'SELECT name, account.owner.email AS owner_email FROM contact LIMIT 3';
    const r = await node(['compile', q, '--slug', 'contact', '--json']);
    expect(r.code).toBe(0);
    const expected = compiledQuery(q, { catalog: loadFixtureCatalog('crm'), slug: 'contact', orgId: 'org_acme' });
    expect(JSON.parse(r.stdout)).toEqual({ sql: expected.sql, params: expected.params, columns: expected.columns });
  });

  it('lint exit codes 0, 1, 2 as a process', async () => {
    const dir = tempTree({
      'ok.sql': '-- slug: lead\nSELECT id FROM lead LIMIT 1\n',
      'bad.sql': '-- slug: lead\nSELECT idd FROM lead LIMIT 1\n',
    });
    expect((await node(['lint', 'ok.sql'], dir)).code).toBe(0);
    const bad = await node(['lint', '.'], dir);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('bad.sql:2:8  error  UNKNOWN_COLUMN');
    const missing = await node(['lint', 'missing.sql'], dir);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("oql lint: no such file or directory: 'missing.sql'\nRun 'oql lint --help' for usage.\n");
  });

  it("an uncaught OqlError from the built library prints as OqlError, with its message", async () => {
    const lib = join(ROOT, 'dist/index.js');
    const script = `import(${JSON.stringify(lib)}).then((m) => m.compile('SELEC x', { catalog: m.loadCatalog({ objects: {} }), slug: 'a', orgId: 'o' }))`;
    let stderr = '';
    try {
      await exec(process.execPath, ['-e', script], { cwd: ROOT });
    } catch (e) {
      stderr = (e as { stderr: string }).stderr;
    }
    expect(stderr).toMatch(/^OqlError: a query starts with SELECT, not 'SELEC'$/m);
    expect(stderr).not.toMatch(/_OqlError/);
  });

  it('the built library reads dist/grammar.cjs only for an invalid text, and reports it as the sources do', async () => {
    const catalog = join(ROOT, 'fixtures/crm/objects-list.json');
    const invalid = 'SELECT id FROM opportunity WHERE LIMIT 5';
    // ESM and CommonJS entries: each loads the grammar through its own require.
    for (const [entry, load] of [['dist/index.js', 'await import(lib)'], ['dist/index.cjs', 'req(lib)']] as const) {
      const script = `
        const { createRequire } = require('node:module');
        const { readFileSync } = require('node:fs');
        const lib = ${JSON.stringify(join(ROOT, entry))};
        const req = createRequire(lib);
        (async () => {
          const m = ${load};
          const loaded = () => Object.keys(req.cache).some((p) => p.endsWith('grammar.cjs'));
          const catalog = m.loadCatalog(JSON.parse(readFileSync(${JSON.stringify(catalog)}, 'utf8')));
          m.compile('SELECT id, name FROM opportunity WHERE amount > 10 LIMIT 5', { catalog, slug: 'opportunity', orgId: 'o' });
          const before = loaded();
          let error;
          try { m.compile(${JSON.stringify(invalid)}, { catalog, slug: 'opportunity', orgId: 'o' }); } catch (e) { error = { code: e.code, message: e.message, span: e.span }; }
          console.log(JSON.stringify({ before, after: loaded(), error }));
        })();`;
      const { stdout } = await exec(process.execPath, ['-e', script], { cwd: ROOT });
      let expected: { code: string; message: string; span: unknown } | undefined;
      try {
        compile(invalid, { catalog: loadFixtureCatalog('crm'), slug: 'opportunity', orgId: 'o' });
      } catch (e) {
        expected = { code: (e as { code: string }).code, message: (e as Error).message, span: (e as { span: unknown }).span };
      }
      expect(expected?.code).toBe('SYNTAX_ERROR');
      expect(JSON.parse(stdout), entry).toEqual({ before: false, after: true, error: expected });
    }
  });

  it('without grammar.cjs beside it (a bundler left it behind), an invalid text is still a coded syntax error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oql-no-grammar-'));
    try {
      copyFileSync(join(ROOT, 'dist/index.js'), join(dir, 'index.js'));
      writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');
      const script = `
        import { compile, loadCatalog } from ${JSON.stringify(pathToFileURL(join(dir, 'index.js')).href)};
        import { readFileSync } from 'node:fs';
        const catalog = loadCatalog(JSON.parse(readFileSync(${JSON.stringify(join(ROOT, 'fixtures/crm/objects-list.json'))}, 'utf8')));
        const ok = compile('SELECT id FROM opportunity LIMIT 5', { catalog, slug: 'opportunity', orgId: 'o' }).kind;
        const errors = [];
        for (const text of ['SELECT id FROM opportunity WHERE LIMIT 5', 'SELECT id FROM opportunity WHERE']) {
          try { compile(text, { catalog, slug: 'opportunity', orgId: 'o' }); } catch (e) { errors.push({ name: e.name, code: e.code, span: [e.span.start, e.span.end], hint: e.hint }); }
        }
        console.log(JSON.stringify({ ok, errors }));`;
      const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], { cwd: dir });
      const r = JSON.parse(stdout) as { ok: string; errors: { name: string; code: string; span: number[]; hint: string }[] };
      expect(r.ok).toBe('query');
      expect(r.errors.map((e) => [e.name, e.code, e.span])).toEqual([['OqlError', 'SYNTAX_ERROR', [33, 38]], ['OqlError', 'UNEXPECTED_END', [32, 32]]]);
      for (const e of r.errors) expect(e.hint).toMatch(/grammar\.cjs beside the bundle\), which could not be loaded: Cannot find module/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('every built file is ASCII: one other character makes V8 read a whole bundle as two-byte text, slower to load', () => {
    const built = readdirSync(join(ROOT, 'dist')).filter((f) => /\.c?js$/.test(f));
    expect(built).toContain('grammar.cjs');
    for (const f of built) expect(readFileSync(join(ROOT, 'dist', f), 'latin1'), f).toMatch(/^[\x00-\x7f]*$/);
  });

  it('no built file points at a source map: the package ships none, so the comment would name a missing file', () => {
    const built = readdirSync(join(ROOT, 'dist')).filter((f) => /\.c?js$/.test(f));
    expect(built).toContain('server.js');
    for (const f of built) expect(readFileSync(join(ROOT, 'dist', f), 'utf8'), f).not.toContain('sourceMappingURL');
  });

  it('an OqlError of one copy of the library is an OqlError to the others: ESM, CommonJS and oql/server', async () => {
    // A program that loads both builds, or oql beside oql/server (which bundles its own copy),
    // holds several OqlError classes; the service must still answer one with its code and status.
    const script = `
      import { createRequire } from 'node:module';
      const esm = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/index.js')).href)});
      const cjs = createRequire(import.meta.url)(${JSON.stringify(join(ROOT, 'dist/index.cjs'))});
      const server = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/server.js')).href)});
      const catalog = esm.loadCatalog({ objects: { lead: { columns: { name: 'text' } } } });
      let fromEsm; try { esm.compile('SELECT nope FROM lead LIMIT 1', { catalog, slug: 'lead', orgId: 'o' }); } catch (e) { fromEsm = e; }
      let fromCjs; try { cjs.compile('SELECT id FROM lead', { catalog: cjs.loadCatalog({ objects: { lead: { columns: { name: 'text' } } } }), slug: 'lead', orgId: 'o' }); } catch (e) { fromCjs = e; }
      let sent;
      const reply = { code(c) { sent = { status: c }; return this; }, type() { return this; }, send(body) { sent.body = body; return this; } };
      server.sendError(reply, fromEsm);
      process.stdout.write(JSON.stringify({
        distinctClasses: esm.OqlError !== cjs.OqlError,
        esmIsCjs: fromEsm instanceof cjs.OqlError && cjs.isOqlError(fromEsm),
        cjsIsEsm: fromCjs instanceof esm.OqlError && esm.isOqlError(fromCjs),
        envelope: cjs.errorEnvelope(fromEsm).data.error_code,
        sent: [sent.status, sent.body.data.error_code],
        notErrors: [new Error('x') instanceof esm.OqlError, esm.isOqlError({ code: 'UNKNOWN_COLUMN' }), esm.isOqlError(null)],
      }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT });
    expect(JSON.parse(stdout)).toEqual({
      distinctClasses: true,
      esmIsCjs: true,
      cjsIsEsm: true,
      envelope: 'UNKNOWN_COLUMN',
      sent: [400, 'UNKNOWN_COLUMN'],
      notErrors: [false, false, false],
    });
  });

  it('errors are a code frame or one line, never a stack trace', async () => {
    const r = await node(['run', 'SELECT FROM', '--slug', 'lead']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error [A-Z_]+: /);
    expect(r.stderr).not.toMatch(STACK_LINE);
    const now = await node(['compile', 'SELECT id FROM lead LIMIT 1', '--slug', 'lead', '--now', 'yesterday']);
    expect(now.code).toBe(2);
    expect(now.stderr).toMatch(/^oql compile: --now must be an ISO 8601 instant or epoch milliseconds .*got 'yesterday'/);
    expect(now.stderr).not.toMatch(STACK_LINE);
  });

  it('demo exits 0 and prints the same as in process, timings aside', async () => {
    const [built, inProcess] = await Promise.all([node(['demo']), cli(['demo'])]);
    expect(built.code).toBe(0);
    expect(built.stderr).toBe('');
    expect(withoutTimings(built.stdout)).toBe(withoutTimings(inProcess.stdout));
    // Two embedded databases start side by side here: a ceiling for a loaded machine, not a measure.
  }, 180_000);
});

describe('the source entry (npx tsx src/cli/main.ts)', () => {
  it('runs as a program and exits non-zero without a stack trace', async () => {
    const r = await exec('npx', ['tsx', 'src/cli/main.ts', 'compile', 'SELECT amout FROM opportunity LIMIT 1', '--slug', 'opportunity'], { cwd: ROOT })
      .then(() => ({ code: 0, stderr: '' }), (e: { code: number; stderr: string }) => e);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("hint: did you mean 'amount'?");
    expect(r.stderr).not.toMatch(STACK_LINE);
  });
});
