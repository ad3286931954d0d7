import { execFile } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { importOf, modulesLoaded } from '../support/modules-loaded.js';

// libphonenumber-js is an optional peer dependency: `import 'oql'` must not load it; the first
// phone value to check does. A child process records every module it loads (the server suite's
// resolve hook).

const run = promisify(execFile);
const PHONE = /\/node_modules\/libphonenumber-js\//;

describe('libphonenumber-js', () => {
  it("is not loaded by import 'oql'", async () => {
    const loaded = await modulesLoaded(importOf('src/index.ts'));
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
    const loaded = await modulesLoaded(`
      const { phoneLibrary, checkPhone, phoneRules } = await import(${JSON.stringify(pathToFileURL('src/records/phone.ts').href)});
      const lib = await phoneLibrary();
      if (!('ok' in checkPhone(lib, '+14155552671', phoneRules(null)))) throw new Error('a valid number was refused');
    `);
    expect(loaded.some((u) => PHONE.test(u))).toBe(true);
  }, 60_000);
});
