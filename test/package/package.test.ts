import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { missingPackage, reportFailure } from '../../src/cli/errors.js';

/** What a user installs: the manifest, the licence, and what the library entry pulls in. */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, any>;

/** Packages only some features need: drivers, the HTTP service and MCP, demo data. */
const OPTIONAL = ['pg', '@electric-sql/pglite', 'fastify', '@fastify/swagger', '@fastify/formbody', 'libphonenumber-js', '@modelcontextprotocol/server', '@modelcontextprotocol/node', 'zod', '@faker-js/faker'];

describe('package.json', () => {
  it('installs no runtime dependency: the drivers, service and demo packages are optional peers', () => {
    expect(Object.keys(pkg.dependencies ?? {})).toEqual([]);
    for (const name of OPTIONAL) {
      expect(pkg.peerDependencies?.[name], name).toBeTypeOf('string');
      expect(pkg.peerDependenciesMeta?.[name], name).toEqual({ optional: true });
      // The repository's own `npm install` still installs them, for its tests.
      expect(pkg.devDependencies?.[name], name).toBe(pkg.peerDependencies[name]);
    }
  });

  it('names its licence and ships it', () => {
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
  });

  it('exports the example catalog and ships JSON fixtures, not their TypeScript or source maps', () => {
    expect(pkg.exports['./fixtures/crm/objects-list.json']).toBe('./fixtures/crm/objects-list.json');
    expect(pkg.exports['./fixtures/crm/type-codes.json']).toBe('./fixtures/crm/type-codes.json');
    expect(existsSync(join(ROOT, 'fixtures/crm/objects-list.json'))).toBe(true);
    const files = pkg.files as string[];
    expect(files).toContain('fixtures/**/*.json');
    expect(files.some((f) => f === 'fixtures' || (f.endsWith('.ts') && !f.endsWith('.d.ts')) || f.endsWith('.map') || f === 'dist')).toBe(false);
  });
});

describe('the library entry', () => {
  it('imports none of the optional packages, directly or through its modules', () => {
    // Follow the static imports from src/index.ts; dynamic import() is how optional features load.
    const seen = new Set<string>();
    const external = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)) {
        const spec = m[1]!;
        if (/^\s*import\s+type\s/.test(m[0]) || /^\s*export\s+type\s/.test(m[0])) continue;
        if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
        else external.add(spec);
      }
    };
    visit(join(ROOT, 'src/index.ts'));
    expect(seen.size).toBeGreaterThan(10);
    for (const name of OPTIONAL) expect([...external].filter((e) => e === name || e.startsWith(`${name}/`)), name).toEqual([]);
  });
});

describe('a feature run without its optional package', () => {
  it('names the missing package and how to install it', async () => {
    const failure = await import('oql-optional-package-that-is-not-installed' as string).then(() => null, (e: unknown) => e);
    expect(missingPackage(failure)).toBe('oql-optional-package-that-is-not-installed');
    const scoped = await import('@oql-none/absent/server' as string).then(() => null, (e: unknown) => e);
    expect(missingPackage(scoped)).toBe('@oql-none/absent');
    expect(missingPackage(new Error('Cannot find package \'x\''))).toBeNull();

    let stderr = '';
    const code = reportFailure({ stdout: () => {}, stderr: (t) => { stderr += t; } }, failure);
    expect(code).not.toBe(0);
    expect(stderr).toContain("needs the package 'oql-optional-package-that-is-not-installed'");
    expect(stderr).toContain('npm install oql-optional-package-that-is-not-installed');
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
