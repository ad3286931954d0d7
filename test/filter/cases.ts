import type { ColumnDef } from '../../src/catalog/types.js';
import type { FixtureName } from '../../fixtures/index.js';
import type { Row } from '../support/oracle.js';
import type { filterHarness } from './harness.js';

/** Conditions for every operator that applies to a column, with values taken from the data. */

type Env = ReturnType<typeof filterHarness>['env'];

export type Cond = { field: string; operator: string; value?: unknown };

/** Objects whose columns cover every logical type between them. */
export const OBJECTS: Record<FixtureName, string[]> = { crm: ['account', 'contact', 'opportunity', 'lead'], helpdesk: ['customer', 'asset', 'ticket'] };

function sample(rows: readonly Row[], col: string, k: number): unknown {
  const present = rows.map((r) => r[col]).filter((v) => v !== null && v !== '' && !(Array.isArray(v) && v.length === 0));
  return present.length ? present[(k * 7919) % present.length] : null;
}

export function conditions(env: Env, fixture: FixtureName, slug: string, col: ColumnDef): Cond[] {
  const f = col.slug;
  const rows = env[fixture].data.get(slug)!;
  const presence: Cond[] = ['is_empty', 'not_empty', 'exists', 'not_exists'].map((operator) => ({ field: f, operator }));
  const v = col.column ? sample(rows, col.column, 1) : null;
  const w = col.column ? sample(rows, col.column, 2) : null;
  switch (col.type) {
    case 'id':
    case 'text':
    case 'email':
    case 'phone':
    case 'url': {
      const s = String(v);
      const mid = s.slice(1, Math.max(2, Math.min(s.length - 1, 5)));
      return [
        ...presence,
        { field: f, operator: 'eq', value: s },
        { field: f, operator: 'neq', value: s },
        { field: f, operator: 'in', value: [s, String(w), 'no such value'] },
        { field: f, operator: 'nin', value: [s, String(w)] },
        { field: f, operator: 'in', value: [] },
        { field: f, operator: 'nin', value: [] },
        { field: f, operator: 'like', value: `${s.slice(0, 2)}%` },
        { field: f, operator: 'like', value: `%${mid.toUpperCase()}%` },
        { field: f, operator: 'like', value: '%under_score%' },
        { field: f, operator: 'like', value: '%back\\slash%' },
        { field: f, operator: 'ilike', value: `%${mid.toUpperCase()}%` },
        { field: f, operator: 'ilike', value: '%_%' },
        { field: f, operator: 'starts_with', value: s.slice(0, 3).toUpperCase() },
        { field: f, operator: 'ends_with', value: s.slice(-2) },
        { field: f, operator: 'contains', value: mid.toLowerCase() },
        { field: f, operator: 'contains', value: '100%' },
        { field: f, operator: 'contains', value: '_' },
        { field: f, operator: 'contains', value: '\\' },
        { field: f, operator: 'starts_with', value: '%' },
        { field: f, operator: 'not_contains', value: mid },
        { field: f, operator: 'not_contains', value: '%' },
      ];
    }
    case 'number':
    case 'integer':
    case 'currency': {
      const n = Number(v);
      return [
        ...presence,
        ...['eq', 'neq', 'gt', 'lt', 'gte', 'lte', 'leq', 'nleq'].map((operator) => ({ field: f, operator, value: n })),
        { field: f, operator: 'gte', value: String(n) },
        { field: f, operator: 'in', value: [n, Number(w)] },
        { field: f, operator: 'nin', value: [n, 0] },
        { field: f, operator: 'between', value: [n / 2, n] },
        { field: f, operator: 'between', value: [n, n] },
      ];
    }
    case 'date':
    case 'datetime': {
      const n = Number(v);
      const iso = new Date(n).toISOString();
      return [
        ...presence,
        ...['eq', 'neq', 'gt', 'lt', 'gte', 'lte', 'leq', 'nleq'].map((operator) => ({ field: f, operator, value: n })),
        { field: f, operator: 'eq', value: iso },
        { field: f, operator: 'gte', value: iso.slice(0, 10) },
        { field: f, operator: 'lt', value: `${iso.slice(0, 19)}+05:30` },
        { field: f, operator: 'in', value: [n, Number(w)] },
        { field: f, operator: 'nin', value: [n] },
        { field: f, operator: 'between', value: [n - 90 * 86_400_000, iso] },
      ];
    }
    case 'boolean':
      return [...presence, { field: f, operator: 'eq', value: true }, { field: f, operator: 'eq', value: 0 }, { field: f, operator: 'neq', value: true }];
    case 'enum':
    case 'relation': {
      const a = String(v);
      const b = String(w);
      return [
        ...presence,
        { field: f, operator: 'eq', value: a },
        { field: f, operator: 'neq', value: a },
        { field: f, operator: 'in', value: [a, b] },
        { field: f, operator: 'nin', value: [a, b] },
        { field: f, operator: 'in', value: [] },
        { field: f, operator: 'nin', value: [] },
      ];
    }
    case 'multiselect': {
      const [a, b] = col.options!;
      return [
        ...presence,
        { field: f, operator: 'eq', value: a },
        { field: f, operator: 'neq', value: a },
        { field: f, operator: 'in', value: [a, b] },
        { field: f, operator: 'nin', value: [a, b] },
        { field: f, operator: 'in', value: [] },
        { field: f, operator: 'nin', value: [] },
      ];
    }
    case 'json':
    case 'virtual':
      return presence;
    default:
      throw new Error(`no cases for ${col.type}`);
  }
}

