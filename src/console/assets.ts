import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The console's front end, built by scripts/build-console.ts into dist/console (index.html,
 * app.js, app.css, icon.svg) and served from memory: a handful of files, read once at start.
 * Nothing is fetched from anywhere else, so the console works offline.
 */

// The bundles (dist/server.js, dist/cli.js) sit beside dist/console; tsup defines this for them.
declare const OQL_CONSOLE_DIR: string | undefined;

/** Where the built front end is: beside the bundle, or dist/console of the checkout when running from source. */
export function defaultAssetsDir(): string {
  const relative = typeof OQL_CONSOLE_DIR === 'string' ? OQL_CONSOLE_DIR : '../../dist/console/';
  return fileURLToPath(new URL(relative, import.meta.url));
}

const TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'icon.svg': 'image/svg+xml',
};

export const ASSET_FILES = Object.keys(TYPES);

interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

export interface Assets {
  /** The directory they were read from. */
  readonly dir: string;
  /** Null when the front end is not built there. */
  readonly files: ReadonlyMap<string, Asset> | null;
}

export function loadAssets(dir: string): Assets {
  if (!ASSET_FILES.every((f) => existsSync(join(dir, f)))) return { dir, files: null };
  const files = new Map<string, Asset>();
  for (const name of ASSET_FILES) {
    const body = readFileSync(join(dir, name));
    files.set(name, { body, type: TYPES[name]!, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
  }
  return { dir, files };
}

/**
 * The policy of every console page: scripts and styles from this origin only (no inline script,
 * no inline style, no eval), requests to this origin only, never in a frame.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers of every console response, pages and files alike. */
export function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    // same-origin, not no-referrer: with no-referrer browsers send `Origin: null` on posts, and the
    // origin check could not tell the console from a sandboxed attacker's page.
    .header('referrer-policy', 'same-origin')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('cross-origin-resource-policy', 'same-origin');
}

/** Sends one built file, answering 304 to a browser that has it already. */
export function sendAsset(request: FastifyRequest, reply: FastifyReply, asset: Asset, cacheControl: string): FastifyReply {
  securityHeaders(reply).header('etag', asset.etag).header('cache-control', cacheControl).type(asset.type);
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  return reply.send(asset.body);
}
