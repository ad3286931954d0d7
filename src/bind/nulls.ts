import type * as B from './bound.js';

/**
 * NULL has no type of its own. PostgreSQL gives a bare NULL the type its context needs when
 * one operator or function fits, but `- NULL`, `sum(NULL)` or `date_trunc('day', NULL)` fit
 * several (SQLSTATE 42725), and a subquery, CASE or coalesce that yields only NULL is text to
 * it, which no arithmetic or comparison accepts. So wherever the binder knows the type a place
 * needs, an expression of type 'null' takes it here, down to the NULLs it is made of; the
 * emitter writes a typed NULL as `NULL::<type>`.
 */
export function typeNull(e: B.BExpr, type: B.ValueType): B.BExpr {
  if (e.type !== 'null' || type === 'null') return e;
  switch (e.kind) {
    case 'Null':
      return { ...e, type };
    case 'Case':
      return {
        ...e,
        whens: e.whens.map((w) => ({ when: w.when, then: typeNull(w.then, type) })),
        else: e.else && typeNull(e.else, type),
        type,
      };
    case 'Call':
      switch (e.fn) {
        case 'coalesce':
        case 'min':
        case 'max':
          return { ...e, args: e.args.map((a) => typeNull(a, type)), type };
        case 'if':
          return { ...e, args: [e.args[0]!, typeNull(e.args[1]!, type), typeNull(e.args[2]!, type)], type };
        default:
          return e;
      }
    case 'Subquery': {
      const query = typeOutput(e.query, type);
      return { ...e, query, type };
    }
    default:
      return e;
  }
}

/** The subquery with its single output typed (`amount IN (SELECT NULL ...)`). */
export function typeOutput(q: B.BoundQuery, type: B.ValueType): B.BoundQuery {
  const out = q.outputs[0];
  if (!out || out.expr.type !== 'null') return q;
  const expr = typeNull(out.expr, type);
  return { ...q, outputs: [{ ...out, expr, type: expr.type }, ...q.outputs.slice(1)] };
}

/** Values compared or chosen among each other: the untyped ones take the type of the first typed one. */
export function unifyNulls(exprs: readonly B.BExpr[]): B.BExpr[] {
  const typed = exprs.find((e) => e.type !== 'null');
  return typed ? exprs.map((e) => typeNull(e, typed.type)) : [...exprs];
}
