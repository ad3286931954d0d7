import type * as B from './bound.js';

/** The child side of a one-to-many relation: the child object in its own scope, and its column that points at the parent. */
export interface ChildSide {
  readonly scope: number;
  readonly object: string;
  /** The child's relation column holding the parent's id. */
  readonly via: string;
}

/**
 * "Some child of this parent matches": `EXISTS (SELECT NULL FROM child WHERE child.via = parent.id
 * AND where)`, correlated on the relation's column, so a parent counts once however many of its
 * children match. The one builder of it, for the record filter's one-to-many conditions and the
 * planner's semi-joins alike; `where` null: any child at all.
 */
export function correlatedExists(child: ChildSide, parentId: B.BColumn, where: B.BExpr | null, span: B.BExpr['span']): B.BExists {
  const correlation: B.BExpr = {
    kind: 'Binary',
    op: '=',
    left: { kind: 'Column', scope: child.scope, hops: [], object: child.object, column: child.via, logical: 'relation', type: 'text', span },
    right: parentId,
    type: 'boolean',
    span,
  };
  return {
    kind: 'Exists',
    type: 'boolean',
    span,
    query: {
      kind: 'Query',
      scope: child.scope,
      object: child.object,
      distinct: false,
      outputs: [{ key: '1', expr: { kind: 'Null', type: 'null', span }, type: 'null', span }],
      where: where ? { kind: 'Logical', op: 'AND', operands: [correlation, where], type: 'boolean', span } : correlation,
      groupBy: [],
      having: null,
      orderBy: [],
      limit: null,
      offset: null,
      aggregated: false,
      span,
    },
  };
}
