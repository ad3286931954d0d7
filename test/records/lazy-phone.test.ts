import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

// libphonenumber-js is an optional peer dependency: `import 'oql'` must not load it; the first
// phone value to check does. A child process records every module it loads (the server suite's
// resolve hook).

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'oql-phone-'));
const PHONE = /\/node_modules\/libphonenumber-js\//;

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function modulesLoaded(name: string, body: string): Promise<string[]> {
  const trace = join(dir, `${name}.txt`);
  const script = `
    import { createRequire } from 'node:module';
    ${body}
    console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));
  `;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--import', './test/server/support/trace-loads.mjs', '--input-type=module', '-e', script], {
    cwd: process.cwd(), env: { ...process.env, OQL_TRACE_FILE: trace },
  });
  const cjs = JSON.parse(stdout.trim().split('\n').pop()!) as string[];
  const esm = readFileSync(trace, 'utf8').split('\n').filter((l) => l.length > 0);
  return [...esm, ...cjs.map((p) => pathToFileURL(p).href)];
}

describe('libphonenumber-js', () => {
  it("is not loaded by import 'oql'", async () => {
    const loaded = await modulesLoaded('entry', `await import(${JSON.stringify(pathToFileURL('src/index.ts').href)});`);
    expect(loaded.some((u) => u.endsWith('/src/records/write.ts'))).toBe(true);
    expect(loaded.filter((u) => PHONE.test(u))).toEqual([]);
  }, 60_000);

  it('missing, is a clear error naming the package', async () => {
    // A resolve hook makes the package unresolvable, as if it were not installed.
    const hook = `data:text/javascript,${encodeURIComponent(`export async function resolve(s, c, next) { if (s.startsWith('libphonenumber-js')) { const e = new Error('Cannot find package ' + s); e.code = 'ERR_MODULE_NOT_FOUND'; throw e; } return next(s, c); }`)}`;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `
      import { register } from 'node:module';
      register(${JSON.stringify(hook)});
      const { phoneLibrary } = await import(${JSON.stringify(pathToFileURL('src/records/phone.ts').href)});
      const e = await phoneLibrary().then(() => null, (x) => x);
      console.log(JSON.stringify({ name: e?.name, code: e?.code, status: e?.status, message: e?.message, hint: e?.hint }));
    `], { cwd: process.cwd() });
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({
      name: 'OqlError', code: 'MISSING_DEPENDENCY', status: 500,
      message: 'phone columns are validated with the package libphonenumber-js, which is not installed', hint: 'npm install libphonenumber-js',
    });
  }, 60_000);

  it('is loaded on the first phone number to check (the check sees it)', async () => {
    const loaded = await modulesLoaded('phone', `
      const { phoneLibrary, checkPhone, phoneRules } = await import(${JSON.stringify(pathToFileURL('src/records/phone.ts').href)});
      const lib = await phoneLibrary();
      if (!('ok' in checkPhone(lib, '+14155552671', phoneRules(null)))) throw new Error('a valid number was refused');
    `);
    expect(loaded.some((u) => PHONE.test(u))).toBe(true);
  }, 60_000);
});
