import type { OutputColumn } from '../compile.js';

/** A bind parameter as a SQL literal, for reading (never executed). */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return `'${value.replace(/'/g, "''")}'`;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `ARRAY[${value.map(sqlLiteral).join(', ')}]`;
  if (value instanceof Date) return `'${value.toISOString()}'`;
  return `'${JSON.stringify(value)}'`;
}

/** `-- $1 = 'org_acme'` lines: SQL comments, so SQL plus parameters can be pasted as is. */
export function formatParams(params: readonly unknown[]): string {
  return params.map((p, i) => `-- $${i + 1} = ${sqlLiteral(p)}`).join('\n');
}

export function formatColumns(columns: readonly OutputColumn[]): string {
  return `-- columns: ${columns.map((c) => `${c.key} (${c.type})`).join(', ')}`;
}

export function formatElapsed(ms: number): string {
  return ms < 1000 ? `${ms.toFixed(1)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export function rowCount(n: number): string {
  return `${n} ${n === 1 ? 'row' : 'rows'}`;
}
