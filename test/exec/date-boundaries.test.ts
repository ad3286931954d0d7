import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { fixtureData } from '../../fixtures/index.js';
import { pgFixtures } from '../support/pg-fixture.js';

/**
 * A date boundary from NOW() is written as a scalar subquery where it filters (WHERE, HAVING), so
 * PostgreSQL computes it once instead of once per row. It must select the rows the same boundary
 * selects as a number. The number is worked out by PostgreSQL on its own, from the same pinned
 * NOW, and written into the query text in its place: the oracle shares no SQL with what is checked.
 */

const fx = pgFixtures(['crm']);
const catalog = fx.catalog('crm');
const ORG = 'org_acme';

/** NOW pinned to the middle of the organization's opportunities, so a boundary near it splits them. */
const created = fixtureData('crm').get('opportunity')!.filter((r) => r['org_id'] === ORG).map((r) => Number(r['created_at'])).sort((a, b) => a - b);
const NOW = new Date(created[created.length >> 1]!);

/** The start of NOW's month in a zone, in epoch milliseconds, as the contract writes it. */
const BOUNDARY = "date_part('epoch', date_trunc('month', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata') * 1000";

/** Each query, and the same without its boundary (`all`): the boundary must keep some rows and drop others. */
const QUERIES: readonly { readonly slug: string; readonly text: string; readonly all: string }[] = [
  { slug: 'opportunity', text: 'SELECT id FROM opportunity WHERE created_at >= {B} ORDER BY id LIMIT 1000', all: 'SELECT id FROM opportunity ORDER BY id LIMIT 1000' },
  { slug: 'opportunity', text: 'SELECT id FROM opportunity WHERE created_at BETWEEN {B} - 86400000 * 90 AND {B} ORDER BY id LIMIT 1000', all: 'SELECT id FROM opportunity ORDER BY id LIMIT 1000' },
  { slug: 'opportunity', text: 'SELECT id FROM opportunity WHERE account.created_at < {B} ORDER BY id LIMIT 1000', all: 'SELECT id FROM opportunity ORDER BY id LIMIT 1000' },
  // A virtual relation in WHERE gives a row per related record that matches: `all` keeps them all.
  { slug: 'account', text: 'SELECT id FROM account WHERE opportunities.created_at >= {B} ORDER BY id LIMIT 1000', all: 'SELECT id FROM account WHERE opportunities.created_at >= 0 ORDER BY id LIMIT 1000' },
  {
    slug: 'opportunity',
    text: 'SELECT owner, COUNT(*) AS n FROM opportunity GROUP BY owner HAVING MAX(created_at) >= {B} ORDER BY owner LIMIT 100',
    all: 'SELECT owner, COUNT(*) AS n FROM opportunity GROUP BY owner ORDER BY owner LIMIT 100',
  },
];

describe('a date boundary computed once', () => {
  it.each(QUERIES)('selects the rows its value selects: $text', async ({ slug, text, all }) => {
    const pool = fx.pool('crm');
    const run = async (q: string, now?: number) => {
      const c = compile(q, { catalog, slug, orgId: ORG, cache: false, ...(now === undefined ? {} : { now }) });
      if (c.kind !== 'query') throw new Error('restricted');
      return { sql: c.sql, rows: (await pool.query(c.sql, c.params)).rows };
    };
    const value = (await pool.query(`SELECT (${BOUNDARY.replace('NOW()', '$1::timestamptz')})::float8 AS ms`, [NOW.toISOString()])).rows[0].ms as number;
    expect(Number.isInteger(value)).toBe(true);

    const computed = await run(text.replaceAll('{B}', BOUNDARY), NOW.getTime());
    expect(computed.sql).toContain('(SELECT date_part(');
    expect(computed.rows).toEqual((await run(text.replaceAll('{B}', String(value)))).rows);
    // The boundary keeps some rows and drops others, so a boundary read wrong would show.
    expect(computed.rows.length).toBeGreaterThan(0);
    expect(computed.rows.length).toBeLessThan((await run(all)).rows.length);
  });
});
