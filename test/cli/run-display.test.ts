import { describe, expect, it } from 'vitest';
import { checkDatabaseUrl } from '../../src/cli/database.js';
import { readable } from '../../src/cli/table.js';
import { cli, STACK_LINE, embeddedDemoOracle } from './helpers.js';

// oql run loads the example CRM with its demo data: the oracle reads the same rows.
const oracle = await embeddedDemoOracle();

/** `2025-03-04 18:30:05 UTC` from epoch ms, written out here rather than with the CLI's helper. */
function utc(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const frac = d.getUTCMilliseconds() ? `.${p(d.getUTCMilliseconds(), 3)}` : '';
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}${frac} UTC`;
}

describe('readable datetimes in tables', () => {
  it('reads epoch milliseconds of datetime and date columns as UTC', () => {
    expect(readable(1741113005123, 'datetime')).toBe('2025-03-04 18:30:05.123 UTC');
    expect(readable(1741113005000, 'datetime')).toBe('2025-03-04 18:30:05 UTC');
    expect(readable(1735689600000, 'datetime')).toBe('2025-01-01 00:00:00 UTC');
    expect(readable(Date.UTC(2025, 0, 31), 'date')).toBe('2025-01-31');
    // Anything else is left as it is: numbers of other types, text, NULL.
    expect(readable(1741113005000, 'number')).toBe(1741113005000);
    expect(readable('2025-01-01 00:00:00', 'datetime')).toBe('2025-01-01 00:00:00');
    expect(readable(null, 'datetime')).toBeNull();
    expect(readable(Number.NaN, 'datetime')).toBeNaN();
  });

  it('oql run shows datetime and date columns as UTC times, matching the data', async () => {
    const q = 'SELECT id, created_at, close_date FROM opportunity WHERE created_at IS NOT NULL AND close_date IS NOT NULL ORDER BY id LIMIT 4';
    const r = await cli(['run', q, '--slug', 'opportunity']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^id +\| created_at +\| close_date$/);
    const rows = lines.slice(2, 6).map((l) => l.split(/\s*\|\s*/).map((c) => c.trim()));
    const expected = oracle.live('opportunity', 'org_acme')
      .filter((o) => o['created_at'] != null && o['close_date'] != null)
      .sort((a, b) => (String(a['id']) < String(b['id']) ? -1 : 1))
      .slice(0, 4)
      .map((o) => [o['id'], utc(o['created_at'] as number), new Date(o['close_date'] as number).toISOString().slice(0, 10)]);
    expect(rows).toEqual(expected);
  });
});

describe('--database', () => {
  it('a value that is not a PostgreSQL URL is rejected as such, before any connection', async () => {
    const r = await cli(['run', 'SELECT id FROM lead LIMIT 1', '--slug', 'lead', '--database', 'notaurl']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error INVALID_OPTIONS: --database "notaurl" is not a valid PostgreSQL URL');
    expect(r.stderr).toContain('hint: write postgres://user:password@host:5432/database');
    expect(r.stderr).not.toContain('ENOTFOUND');
    expect(r.stderr).not.toMatch(STACK_LINE);
  });

  it('accepts postgres:// and postgresql:// URLs with a host or a socket, and hides a password when rejecting', () => {
    for (const ok of ['postgres://u:p@db.internal:5432/crm', 'postgresql://localhost/crm', 'postgres:///crm?host=/var/run/postgresql']) {
      expect(() => checkDatabaseUrl(ok), ok).not.toThrow();
    }
    for (const bad of ['notaurl', 'base', 'mysql://u@h/db', 'postgres://', 'localhost:5432/crm', '']) {
      expect(() => checkDatabaseUrl(bad), bad).toThrow(/is not a valid PostgreSQL URL/);
    }
    expect(() => checkDatabaseUrl('mysql://u:secret@h/db')).toThrow(/mysql:\/\/u:\*\*\*@h\/db/);
  });
});
