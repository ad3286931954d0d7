import type { ObjectDef } from './types.js';

// The service payload object each ObjectDef was read from, so that writing the catalog back
// (catalogPayload) can give the service's own objects unchanged, every key it sent included.
// Kept beside the catalog rather than in it: two catalogs read from different payloads of the
// same schema stay equal.
const sources = new WeakMap<ObjectDef, Readonly<Record<string, unknown>>>();

export function rememberSource(object: ObjectDef, source: Record<string, unknown>): void {
  sources.set(object, deepFrozenCopy(source));
}

export function sourceOf(object: ObjectDef): Readonly<Record<string, unknown>> | undefined {
  return sources.get(object);
}

function deepFrozenCopy<T>(v: T): T {
  const copy = JSON.parse(JSON.stringify(v)) as T;
  const freeze = (x: unknown): void => {
    if (typeof x === 'object' && x !== null) {
      for (const child of Object.values(x)) freeze(child);
      Object.freeze(x);
    }
  };
  freeze(copy);
  return copy;
}
