import { OqlError } from '../../diagnostics/diagnostic.js';
import { accessOf, type ServiceContext } from '../context.js';
import type { Principal } from '../../service/types.js';

/**
 * Record and schema endpoints for an object the role may not read answer 403. An unknown slug is
 * left to the library, which answers 'Invalid slug' as the analytics endpoints do.
 */
export function checkObjectAccess(ctx: ServiceContext, principal: Principal, slug: string): void {
  const access = accessOf(ctx, principal);
  if (access === undefined || access.includes(slug) || !ctx.catalog.objects.has(slug)) return;
  throw OqlError.plain('PERMISSION_DENIED', `the ${principal.role} role may not use the object '${slug}'`);
}

/** The catalog's objects the principal may read, in catalog order. */
export function readableSlugs(ctx: ServiceContext, principal: Principal): Set<string> {
  const access = accessOf(ctx, principal);
  return new Set([...ctx.catalog.objects.keys()].filter((slug) => access === undefined || access.includes(slug)));
}
