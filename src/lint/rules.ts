import type * as B from '../bind/bound.js';
import { forEachBoundChild } from '../bind/exprs.js';
import type { DiagnosticBag } from '../diagnostics/diagnostic.js';
import type * as A from '../syntax/ast.js';

/**
 * Report rules: queries that compile and run but answer something other than what their
 * author meant. They read the bound tree, so they cost nothing on the compile path.
 */

export interface RuleContext {
  readonly bag: DiagnosticBag;
  readonly ast: A.Select;
  readonly bound: B.BoundQuery;
}

function ownExprs(q: B.BoundQuery): B.BExpr[] {
  return [...q.outputs.map((o) => o.expr), ...(q.where ? [q.where] : []), ...q.groupBy, ...(q.having ? [q.having] : []), ...q.orderBy.map((o) => o.expr)];
}

/** Visits every expression of the query and its subqueries. */
function walk(q: B.BoundQuery, visit: (e: B.BExpr) => void): void {
  const go = (e: B.BExpr): void => {
    visit(e);
    if (e.kind === 'Exists' || e.kind === 'Subquery' || e.kind === 'InSubquery') walk(e.query, visit);
    forEachBoundChild(e, go);
  };
  ownExprs(q).forEach(go);
}

const EPOCH_SECONDS_MIN = 1e9;
const EPOCH_SECONDS_MAX = 1e10;

export function reportRules(ctx: RuleContext): void {
  const { bag, bound } = ctx;
  const src = bag.source;
  const show = (x: { span: B.BExpr['span'] }): string => src.slice(x.span.start, x.span.end);
  walk(bound, (e) => {
    bag.step();
    switch (e.kind) {
      case 'Call':
        if (e.fn === 'date_part') relativeDay(bag, e, show);
        if (e.fn === 'to_timestamp') {
          const arg = e.args[0];
          if (arg?.kind === 'Column' && arg.type === 'epoch') {
            const text = `${show(arg)} / 1000`;
            bag.warning(
              'TO_TIMESTAMP_MILLISECONDS',
              arg.span,
              `to_timestamp() takes epoch seconds, but ${show(arg)} holds milliseconds: the result is tens of thousands of years off`,
              `write to_timestamp(${text})`,
              { range: [arg.span.start, arg.span.end], text },
            );
          }
        }
        return;
      case 'Binary':
        if (['=', '<>', '<', '<=', '>', '>='].includes(e.op)) {
          epochSeconds(bag, e.left, e.right, show);
          epochSeconds(bag, e.right, e.left, show);
          if (e.op === '=' || e.op === '<>') relationId(bag, e.left, [e.right], show);
          if (e.op === '=' || e.op === '<>') relationId(bag, e.right, [e.left], show);
        }
        return;
      case 'Between':
        epochSeconds(bag, e.operand, e.low, show);
        epochSeconds(bag, e.operand, e.high, show);
        return;
      case 'InList':
        for (const i of e.items) epochSeconds(bag, e.operand, i, show);
        relationId(bag, e.operand, e.items, show);
        return;
      default:
        return;
    }
  });
  limitWithoutOrder(ctx);
}

/**
 * `date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'z'))`: the inner AT TIME ZONE gives
 * the local wall clock without a zone, and date_part reads it as UTC, so the bound is off by
 * the zone's offset. The second AT TIME ZONE turns the local midnight back into an instant.
 */
function relativeDay(bag: DiagnosticBag, e: B.BCall, show: (x: { span: B.BExpr['span'] }) => string): void {
  const field = e.args[0];
  const value = e.args[1];
  if (field?.kind !== 'Value' || field.value !== 'epoch' || !value || value.type !== 'timestamp') return;
  const zone = innerZone(value);
  if (!zone) return;
  const text = ` AT TIME ZONE ${show(zone)}`;
  bag.warning(
    'RELATIVE_DAY_ONE_ZONE',
    value.span,
    `'${show(value)}' is a local time without a zone; date_part('epoch', ...) reads it as UTC, so the instant is off by the zone's offset`,
    `convert it back with a second AT TIME ZONE: ${show(value)}${text}`,
    { range: [value.span.end, value.span.end], text },
  );
}

function innerZone(e: B.BExpr): B.BExpr | null {
  if (e.kind === 'AtTimeZone') return e.zone;
  if (e.kind === 'Call' && e.fn === 'date_trunc' && e.args[1]) return innerZone(e.args[1]);
  return null;
}

/** `created_at > 1704067200`: ten digits are epoch seconds, a date in 1970 as milliseconds. */
function epochSeconds(bag: DiagnosticBag, column: B.BExpr, value: B.BExpr, show: (x: { span: B.BExpr['span'] }) => string): void {
  if (column.type !== 'epoch' || value.kind !== 'Value' || typeof value.value !== 'number') return;
  const v = Math.abs(value.value);
  if (v < EPOCH_SECONDS_MIN || v >= EPOCH_SECONDS_MAX) return;
  const text = String(value.value * 1000);
  bag.warning(
    'EPOCH_SECONDS',
    value.span,
    `${show(value)} looks like epoch seconds (${new Date(value.value * 1000).toISOString()}), but ${show(column)} holds milliseconds (as milliseconds it is in January 1970)`,
    `write ${text}`,
    { range: [value.span.start, value.span.end], text },
  );
}

/**
 * `owner.id = 'usr_1'` joins the user table to read a value the opportunity already holds:
 * `owner = 'usr_1'` compares the relation column itself, which holds the id, and needs no join.
 */
function relationId(bag: DiagnosticBag, column: B.BExpr, values: readonly B.BExpr[], show: (x: { span: B.BExpr['span'] }) => string): void {
  if (column.kind !== 'Column' || column.column !== 'id' || column.hops.length === 0) return;
  if (column.hops.some((h) => h.kind !== 'to-one')) return;
  if (!values.every((v) => v.kind === 'Value' || v.kind === 'Null')) return;
  const path = show(column);
  const m = /^(.*?)\s*\.\s*(?:id|"id")$/s.exec(path);
  if (!m) return;
  const text = m[1]!;
  bag.warning(
    'RELATION_ID_COMPARISON',
    column.span,
    `${path} joins ${column.object} only to read the id that ${text} already holds`,
    `compare the relation column itself: ${text} (it also matches where ${text} names a ${column.object} record the caller cannot see, deleted or missing, whose ${path} is NULL)`,
    { range: [column.span.start, column.span.end], text },
  );
}

function limitWithoutOrder(ctx: RuleContext): void {
  const { bag, ast, bound } = ctx;
  if (!ast.limit || bound.aggregated || bound.distinct || bound.orderBy.length > 0) return;
  // LIMIT 1 of a single-row lookup (WHERE id = ...) has one answer whatever the order.
  if (bound.where && isIdLookup(bound.where)) return;
  const before = bag.source.slice(0, ast.limit.span.start);
  const m = /LIMIT\s*$/i.exec(before);
  const at = m ? m.index : ast.limit.span.start;
  bag.warning(
    'LIMIT_WITHOUT_ORDER',
    ast.limit.span,
    `LIMIT ${ast.limit.text} without ORDER BY: which rows come back may change from one run to the next`,
    'order by something unique before the LIMIT, e.g. ORDER BY id',
    { range: [at, at], text: 'ORDER BY id ' },
  );
}

function isIdLookup(e: B.BExpr): boolean {
  if (e.kind === 'Binary' && e.op === '=') {
    return [e.left, e.right].some((s) => s.kind === 'Column' && s.hops.length === 0 && s.column === 'id');
  }
  if (e.kind === 'Logical' && e.op === 'AND') return e.operands.some(isIdLookup);
  return false;
}
