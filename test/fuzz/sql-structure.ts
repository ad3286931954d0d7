import { loadModule, parseSync } from 'libpg-query';
import type { Catalog } from '../../src/catalog/types.js';

/**
 * Structural invariants of compiled SQL, checked on the real PostgreSQL parser's tree
 * (libpg-query), never on the text:
 *
 * - exactly one statement, a plain SELECT (no INTO, locking, WITH, set operations);
 * - every table reference (RangeVar) is a catalog table in the catalog's schema, with an alias
 *   unique in the statement; FROM items are tables and LEFT JOINs of tables only;
 * - every alias carries the tenant predicate `alias.org_id = $1` and the soft-delete predicate
 *   `alias.is_deleted = false` as top-level conjuncts of the WHERE of its own SELECT (the FROM
 *   table) or of the ON of its own JoinExpr (a joined table);
 * - every function is on the whitelist (possibly qualified as pg_catalog.name);
 * - no string constants (every value of the query text is a bind parameter), casts only to the
 *   types the emitter uses, every ParamRef within the parameters and every parameter used;
 * - column references name an alias of the statement and a physical column of its table, or an
 *   output column (c0, c1, ...).
 */

export const FUNCTION_WHITELIST: ReadonlySet<string> = new Set([
  'count', 'sum', 'avg', 'min', 'max', 'lower', 'upper', 'concat', 'trim', 'abs', 'round', 'coalesce',
  'date_trunc', 'to_timestamp', 'date_part', 'now', 'cardinality', 'timezone', 'btrim',
]);

/** Types the emitter casts to (parameters, ::date, round(x::numeric)). */
const CAST_TYPES: ReadonlySet<string> = new Set(['text', 'int8', 'int4', 'numeric', 'boolean', 'bool', 'date', 'timestamptz', 'timestamp']);

let ready: Promise<void> | null = null;

export function loadSqlParser(): Promise<void> {
  return (ready ??= loadModule());
}

type Node = Record<string, unknown>;

function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function strings(list: unknown): string[] {
  return Array.isArray(list) ? list.map((x) => ((x as { String?: { sval?: string } }).String?.sval ?? '\u0000')) : [];
}

/** Top-level AND conjuncts. */
function conjuncts(e: unknown): Node[] {
  if (!isNode(e)) return [];
  const b = e['BoolExpr'] as Node | undefined;
  if (b && b['boolop'] === 'AND_EXPR') return (b['args'] as unknown[]).flatMap(conjuncts);
  return [e];
}

function columnRef(e: unknown): string[] | null {
  const c = isNode(e) ? (e['ColumnRef'] as Node | undefined) : undefined;
  return c ? strings(c['fields']) : null;
}

function isEq(e: Node): { l: unknown; r: unknown } | null {
  const a = e['A_Expr'] as Node | undefined;
  if (!a || a['kind'] !== 'AEXPR_OP' || strings(a['name']).join('.') !== '=') return null;
  return { l: a['lexpr'], r: a['rexpr'] };
}

function hasGuard(conds: Node[], alias: string, column: string, value: (e: unknown) => boolean): boolean {
  return conds.some((c) => {
    const eq = isEq(c);
    if (!eq) return false;
    const [col, other] = columnRef(eq.l) ? [eq.l, eq.r] : [eq.r, eq.l];
    const f = columnRef(col);
    return f !== null && f.length === 2 && f[0] === alias && f[1] === column && value(other);
  });
}

const isParam1 = (e: unknown): boolean => isNode(e) && (e['ParamRef'] as Node | undefined)?.['number'] === 1;
const isFalse = (e: unknown): boolean => {
  const c = isNode(e) ? (e['A_Const'] as Node | undefined) : undefined;
  if (!c || !('boolval' in c)) return false;
  const b = c['boolval'] as Node;
  return b['boolval'] !== true;
};

export interface StructureResult {
  readonly problems: string[];
  readonly tables: number;
  readonly functions: string[];
}

/**
 * Problems with the compiled SQL, or an empty list. Call `loadSqlParser()` once first. `count`:
 * the SQL of compileCount, whose outer `SELECT count(*) FROM (<query>) AS q` reads no table.
 */
export function checkSqlStructure(sql: string, params: readonly unknown[], catalog: Catalog, options: { count?: boolean } = {}): StructureResult {
  const problems: string[] = [];
  let tree: { stmts?: { stmt: Node }[] };
  try {
    tree = parseSync(sql) as typeof tree;
  } catch (e) {
    return { problems: [`the PostgreSQL parser rejects the SQL: ${(e as Error).message}`], tables: 0, functions: [] };
  }
  const stmts = tree.stmts ?? [];
  if (stmts.length !== 1) problems.push(`${stmts.length} statements`);
  const top = stmts[0]?.stmt;
  if (!top || !('SelectStmt' in top)) {
    problems.push(`the statement is ${top ? Object.keys(top)[0] : 'missing'}, not a SELECT`);
    return { problems, tables: 0, functions: [] };
  }

  const { schema, tenantColumn, softDeleteColumn } = catalog.mapping;
  const tables = new Map<string, string>(); // physical table → object slug
  for (const o of catalog.objects.values()) tables.set(o.table, o.slug);
  const aliases = new Map<string, string>(); // alias → object slug
  const functions: string[] = [];
  const columnRefs: string[][] = [];
  let maxParam = 0;
  const usedParams = new Set<number>();

  const checkRangeVar = (rv: Node, guards: Node[], where: string): void => {
    const alias = (rv['alias'] as Node | undefined)?.['aliasname'] as string | undefined;
    const rel = String(rv['relname']);
    if (rv['schemaname'] !== schema) problems.push(`table ${rel} is not in schema ${schema} (schema ${String(rv['schemaname'])})`);
    if (!tables.has(rel)) problems.push(`table ${rel} is not a catalog table`);
    if (!alias) {
      problems.push(`table ${rel} has no alias`);
      return;
    }
    // One subquery may be written twice (in SELECT and again in GROUP BY, which must repeat the
    // expression): the same alias for the same table is that, an alias for two tables is a bug.
    const known = aliases.get(alias);
    if (known !== undefined && known !== (tables.get(rel) ?? rel)) problems.push(`alias ${alias} names two different tables`);
    aliases.set(alias, tables.get(rel) ?? rel);
    if (!hasGuard(guards, alias, tenantColumn, isParam1)) problems.push(`${alias} (${rel}) has no ${alias}.${tenantColumn} = $1 in the ${where}`);
    if (softDeleteColumn && !hasGuard(guards, alias, softDeleteColumn, isFalse)) problems.push(`${alias} (${rel}) has no ${alias}.${softDeleteColumn} = false in the ${where}`);
  };

  const fromItem = (item: Node, whereGuards: Node[]): void => {
    if ('RangeVar' in item) return checkRangeVar(item['RangeVar'] as Node, whereGuards, 'WHERE of its SELECT');
    const j = item['JoinExpr'] as Node | undefined;
    if (!j) {
      problems.push(`FROM item ${Object.keys(item)[0]} is not a table or join`);
      return;
    }
    if (j['jointype'] !== 'JOIN_LEFT') problems.push(`join type ${String(j['jointype'])}`);
    fromItem(j['larg'] as Node, whereGuards);
    const rarg = j['rarg'] as Node;
    if (!('RangeVar' in rarg)) problems.push('the right side of a join is not a table');
    else checkRangeVar(rarg['RangeVar'] as Node, conjuncts(j['quals']), 'ON of its JOIN');
  };

  let countWrapper = options.count === true;
  // `(SELECT <expression>)`: a comparison's side computed once (a date boundary from now()); it
  // reads no table, so it needs no guard, and it may hold nothing but its one expression.
  const scalars = new WeakSet<Node>();
  const select = (s: Node): void => {
    if (scalars.has(s)) {
      const targets = (s['targetList'] as Node[] | undefined) ?? [];
      const clauses = Object.keys(s).filter((k) => k !== 'targetList' && k !== 'limitOption' && k !== 'op');
      if (targets.length !== 1 || clauses.length > 0) problems.push(`a subquery without FROM holds ${targets.length} expressions and ${clauses.join(', ') || 'no clause'}`);
      return;
    }
    if (countWrapper) {
      countWrapper = false;
      const from = (s['fromClause'] as Node[] | undefined) ?? [];
      const sub = from.length === 1 ? (from[0]!['RangeSubselect'] as Node | undefined) : undefined;
      const targets = (s['targetList'] as Node[] | undefined) ?? [];
      const fn = targets.length === 1 ? ((targets[0]!['ResTarget'] as Node)['val'] as Node)['FuncCall'] as Node | undefined : undefined;
      if (!sub || !fn || strings(fn['funcname']).join('.') !== 'count' || fn['agg_star'] !== true || s['whereClause'] || s['groupClause'] || s['limitCount']) {
        problems.push('the count SQL is not SELECT count(*) FROM (<query>) AS q');
      }
      return; // the subquery is checked by the walk
    }
    for (const k of ['intoClause', 'lockingClause', 'withClause', 'larg', 'rarg', 'valuesLists']) if (s[k]) problems.push(`SELECT with ${k}`);
    if (s['op'] && s['op'] !== 'SETOP_NONE') problems.push(`set operation ${String(s['op'])}`);
    const from = (s['fromClause'] as Node[] | undefined) ?? [];
    if (from.length !== 1) problems.push(`${from.length} FROM items`);
    for (const item of from) fromItem(item, conjuncts(s['whereClause']));
  };

  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      v.forEach(walk);
      return;
    }
    if (!isNode(v)) return;
    for (const [k, child] of Object.entries(v)) {
      if (!isNode(child) && !Array.isArray(child)) continue;
      switch (k) {
        case 'SubLink': {
          const sub = ((child as Node)['subselect'] as Node | undefined)?.['SelectStmt'] as Node | undefined;
          if ((child as Node)['subLinkType'] === 'EXPR_SUBLINK' && sub && !sub['fromClause']) scalars.add(sub);
          break;
        }
        case 'SelectStmt':
          select(child as Node);
          break;
        case 'FuncCall': {
          const name = strings((child as Node)['funcname']);
          const fn = name[name.length - 1]!;
          functions.push(fn);
          if (!FUNCTION_WHITELIST.has(fn) || (name.length === 2 && name[0] !== 'pg_catalog') || name.length > 2) problems.push(`function ${name.join('.')} is not on the whitelist`);
          break;
        }
        case 'A_Const':
          if ('sval' in (child as Node)) problems.push(`string constant '${String(((child as Node)['sval'] as Node)['sval'])}' in the SQL`);
          break;
        case 'TypeCast': {
          const tn = (child as Node)['typeName'] as Node;
          const name = strings(tn['names']);
          const type = name[name.length - 1]!;
          if (!CAST_TYPES.has(type) || (name.length === 2 && name[0] !== 'pg_catalog')) problems.push(`cast to ${name.join('.')}`);
          break;
        }
        case 'ParamRef': {
          const n = Number((child as Node)['number']);
          usedParams.add(n);
          maxParam = Math.max(maxParam, n);
          break;
        }
        case 'ColumnRef':
          columnRefs.push(strings((child as Node)['fields']));
          break;
        case 'RangeSubselect':
          if (!options.count) problems.push(`${k} in the SQL`);
          break;
        case 'RangeFunction':
        case 'RangeTableFunc':
        case 'CopyStmt':
        case 'InsertStmt':
        case 'UpdateStmt':
        case 'DeleteStmt':
        case 'VariableSetStmt':
        case 'CreateStmt':
        case 'CommonTableExpr':
          problems.push(`${k} in the SQL`);
          break;
        default:
          break;
      }
      walk(child);
    }
  };
  walk(top);

  if (maxParam > params.length) problems.push(`$${maxParam} but only ${params.length} parameters`);
  for (let i = 1; i <= params.length; i++) if (!usedParams.has(i)) problems.push(`parameter $${i} is never used`);
  for (const f of columnRefs) {
    if (f.length === 1 && /^c\d+$/.test(f[0]!)) continue; // ORDER BY an output column
    if (f.length !== 2) {
      problems.push(`column reference ${f.join('.')}`);
      continue;
    }
    const slug = aliases.get(f[0]!);
    if (!slug) {
      problems.push(`column reference ${f.join('.')} names no table alias of the statement`);
      continue;
    }
    const obj = catalog.objects.get(slug);
    const physical = new Set<string>([catalog.mapping.idColumn, tenantColumn, ...(softDeleteColumn ? [softDeleteColumn] : [])]);
    for (const c of obj?.columns.values() ?? []) if (c.column) physical.add(c.column);
    if (!physical.has(f[1]!)) problems.push(`column ${f[1]} is not a column of ${slug}`);
  }
  return { problems, tables: aliases.size, functions };
}
