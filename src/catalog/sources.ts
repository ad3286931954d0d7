import type { ObjectDef } from './types.js';

// The service payload object each ObjectDef was read from, so that writing the catalog back
// (catalogPayload) can give the service's own objects unchanged, every key it sent included.
// Kept beside the catalog rather than in it: two catalogs read from different payloads of the
// same schema stay equal. Kept as JSON text, read back (and frozen) only when asked for: a copy
// protects it from later changes to the caller's payload, and text is the cheapest copy to
// make while loading, which every start of a process pays.
const sources = new WeakMap<ObjectDef, string | Readonly<Record<string, unknown>>>();

export function rememberSource(object: ObjectDef, source: Record<string, unknown>): void {
  sources.set(object, JSON.stringify(source));
}

export function sourceOf(object: ObjectDef): Readonly<Record<string, unknown>> | undefined {
  const kept = sources.get(object);
  if (typeof kept !== 'string') return kept;
  const copy = deepFreeze(JSON.parse(kept) as Record<string, unknown>);
  sources.set(object, copy);
  return copy;
}

function deepFreeze<T>(x: T): T {
  if (typeof x === 'object' && x !== null) {
    for (const child of Object.values(x)) deepFreeze(child);
    Object.freeze(x);
  }
  return x;
}
