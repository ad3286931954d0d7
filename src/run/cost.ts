import type { Catalog } from '../catalog/types.js';
import { runtimeError } from './errors.js';

/**
 * Refusing up front what the planner estimates too costly: EXPLAIN (no execution) gives the
 * plan's total cost in the planner's own units; above the ceiling the statement is refused with
 * the plan node that costs most, named in the user's terms (its object, not its table), as
 * Salesforce refuses a non-selective query before running it.
 */
export interface PlanNode {
  readonly 'Node Type'?: string;
  readonly 'Relation Name'?: string;
  readonly 'Parent Relationship'?: string;
  readonly 'Total Cost'?: number;
  readonly 'Plan Rows'?: number;
  readonly Plans?: readonly PlanNode[];
}

/** The root plan of `EXPLAIN (FORMAT JSON)` output, as node-postgres or PGlite return it. */
export function planOf(rows: readonly Record<string, unknown>[]): PlanNode | undefined {
  let value: unknown = rows[0]?.['QUERY PLAN'];
  if (typeof value === 'string') value = JSON.parse(value) as unknown;
  return Array.isArray(value) ? ((value[0] as { Plan?: PlanNode } | undefined)?.Plan) : undefined;
}

/** The node whose own cost (its total less its children's) is largest: what makes the plan expensive. */
export function costliestNode(root: PlanNode): PlanNode {
  let best = root;
  let bestOwn = -Infinity;
  const stack: PlanNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const children = node.Plans ?? [];
    const own = (node['Total Cost'] ?? 0) - children.reduce((sum, c) => sum + (c['Total Cost'] ?? 0), 0);
    if (own > bestOwn) {
      bestOwn = own;
      best = node;
    }
    stack.push(...children);
  }
  return best;
}

/** Throws QUERY_TOO_COSTLY when the plan's cost is above `maxCost`. */
export function checkCost(plan: PlanNode | undefined, maxCost: number, catalog: Catalog | undefined): number {
  const cost = plan?.['Total Cost'] ?? 0;
  if (!plan || cost <= maxCost) return cost;
  const node = costliestNode(plan);
  const table = node['Relation Name'];
  const object = table === undefined ? undefined : [...(catalog?.objects.values() ?? [])].find((o) => o.table === table)?.slug ?? undefined;
  const where = node['Parent Relationship'] === 'SubPlan' || node['Parent Relationship'] === 'InitPlan' ? ' inside a subquery' : '';
  const part = `${(node['Node Type'] ?? 'a step').toLowerCase()}${object ? ` of ${object}` : ''}${where}`;
  throw runtimeError('QUERY_TOO_COSTLY',
    `the database estimates this query at ${Math.round(cost).toLocaleString('en-US')} cost units, above the ceiling of ${Math.round(maxCost).toLocaleString('en-US')}; the costliest part is a ${part} (about ${Math.round(node['Plan Rows'] ?? 0).toLocaleString('en-US')} rows)`,
    { hint: 'narrow it with a selective condition (compare a relation column with a known id, or a date range), drop correlated subqueries over large objects, or lower the LIMIT' });
}
