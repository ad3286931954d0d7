import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * What `npm ci` reads: package.json and package-lock.json. A fresh clone must install exactly, on
 * any platform, on every supported Node line, with nothing for the user to approve.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, any>;
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  lockfileVersion: number;
  packages: Record<string, { version?: string; engines?: Record<string, string> | string[]; optionalDependencies?: Record<string, string>; hasInstallScript?: boolean; os?: string[] }>;
};
const installed = Object.entries(lock.packages).filter(([path]) => path !== '');

/** The first release of each line package.json admits: `^22.13.0` gives 22.13.0. */
function firstReleases(range: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const set of new semver.Range(range).set) {
    const first = semver.minVersion(set.map((c) => c.value).join(' '));
    if (first && !out.has(first.major)) out.set(first.major, first.version);
  }
  return out;
}

/** Node's resolution in the lock: the nearest node_modules/<name> at or above `from`. */
function resolveInLock(from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = `${dir === '' ? '' : `${dir}/`}node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (dir === '') return undefined;
    const at = dir.lastIndexOf('/node_modules/');
    dir = at < 0 ? '' : dir.slice(0, at);
  }
}

describe('supported Node lines', () => {
  const lines = firstReleases(pkg.engines.node);

  it('package.json declares Node 20 (end of life, still working), 22 and 24', () => {
    expect([...lines.keys()].sort((a, b) => a - b)).toEqual([20, 22, 24]);
    // A later line (26, ...) is admitted too: >=24 is open-ended.
    expect(semver.satisfies('26.0.0', pkg.engines.node)).toBe(true);
    expect(semver.satisfies('23.11.0', pkg.engines.node)).toBe(false);
  });

  it('every locked package admits the first release of every supported line (no EBADENGINE)', () => {
    const conflicts: string[] = [];
    for (const [path, p] of installed) {
      const range = p.engines && !Array.isArray(p.engines) ? p.engines.node : undefined;
      if (range === undefined) continue;
      for (const version of lines.values()) {
        if (!semver.satisfies(version, range)) conflicts.push(`${path}@${p.version} wants node ${range}, not ${version}`);
      }
    }
    expect(conflicts).toEqual([]);
  });
});

describe('package-lock.json', () => {
  it('is a version 3 lock file in step with package.json', () => {
    expect(lock.lockfileVersion).toBe(3);
    const root = lock.packages[''] as Record<string, any>;
    expect(root.devDependencies).toEqual(pkg.devDependencies);
    expect(root.peerDependencies).toEqual(pkg.peerDependencies);
    expect(root.engines).toEqual(pkg.engines);
  });

  it("holds every platform's optional binary packages, so npm ci installs on any OS and CPU", () => {
    const missing: string[] = [];
    for (const [path, p] of installed) {
      for (const name of Object.keys(p.optionalDependencies ?? {})) {
        if (!resolveInLock(path, name)) missing.push(`${path} -> ${name}`);
      }
    }
    expect(missing).toEqual([]);
    // The build's own tool chain, spelled out: esbuild and rollup for macOS, Windows and Linux on Arm.
    const names = new Set(installed.map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)));
    for (const name of ['@esbuild/darwin-arm64', '@esbuild/win32-x64', '@esbuild/linux-arm64', '@rollup/rollup-darwin-arm64', '@rollup/rollup-win32-x64-msvc', '@rollup/rollup-linux-arm64-gnu']) {
      expect(names.has(name), name).toBe(true);
    }
  });

  it('every package with an install script is approved in allowScripts (npm 11 asks nothing of the user)', () => {
    const allowed = pkg.allowScripts as Record<string, boolean>;
    const unapproved = installed
      .filter(([, p]) => p.hasInstallScript)
      .map(([path, p]) => ({ name: path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length), version: p.version }))
      .filter(({ name, version }) => allowed[name] === undefined && allowed[`${name}@${version}`] === undefined);
    expect(unapproved).toEqual([]);
    expect(allowed.esbuild).toBe(true);
  });
});
