import { beforeEach, describe, expect, it } from 'vitest';
import { clearCompileCache, compile as compileAny, compileCount, planOf, type CompiledQuery, type CompileOptions } from '../../src/compile.js';
import { emitCount } from '../../src/emit/emit.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { corpus } from '../../bench/corpus.js';

/**
 * The compiled-query cache keeps strings, not plans, and cuts the count query out of the row
 * query instead of emitting it again. These tests hold both to what a fresh, uncached emit of
 * the count writes, and to SQL derived by hand.
 */

const ORG = 'org_acme';
const crm = loadFixtureCatalog('crm');
const opts = (slug: string, extra: Partial<CompileOptions> = {}): CompileOptions => ({ catalog: crm, slug, orgId: ORG, ...extra });
const g = (t: string): string => `"${t}"."org_id" = $1 AND "${t}"."is_deleted" = false`;

beforeEach(() => clearCompileCache());

/** compile(), for queries that read no restricted object: the compiled query. */
function compile(text: string, o: CompileOptions): CompiledQuery {
  const r = compileAny(text, o);
  if (r.kind !== 'query') throw new Error(`expected a query, got ${r.kind}`);
  return r;
}

describe('count cut from the row query', () => {
  it('drops ORDER BY and wraps the rest, as written by hand', () => {
    const text = "SELECT id FROM account WHERE industry = 'retail' ORDER BY name DESC LIMIT 10";
    const rows = compile(text, opts('account'));
    const count = compileCount(text, opts('account'));
    expect(rows.sql).toBe(`SELECT "t0"."id" AS "c0" FROM "public"."account" AS "t0" WHERE ${g('t0')} AND ("t0"."industry" = $2::text) ORDER BY "t0"."name" DESC LIMIT $3::int8`);
    expect(count.sql).toBe(`SELECT count(*) AS "count" FROM (SELECT "t0"."id" AS "c0" FROM "public"."account" AS "t0" WHERE ${g('t0')} AND ("t0"."industry" = $2::text) LIMIT $3::int8) AS "q"`);
    expect(count.kind === 'query' && count.params).toEqual([ORG, 'retail', 10]);
  });

  it('renumbers parameters when ORDER BY has a literal of its own', () => {
    // ORDER BY introduces $2 (the 5), so the count, without it, numbers the LIMIT $2.
    const text = 'SELECT id FROM opportunity ORDER BY amount + 5 LIMIT 20';
    const count = compileCount(text, opts('opportunity'));
    expect(count.sql).toBe(`SELECT count(*) AS "count" FROM (SELECT "t0"."id" AS "c0" FROM "public"."opportunity" AS "t0" WHERE ${g('t0')} LIMIT $2::int8) AS "q"`);
    expect(count.kind === 'query' && count.params).toEqual([ORG, 20]);
    expect(compile(text, opts('opportunity')).params).toEqual([ORG, 5, 20]);
  });

  it('keeps a literal ORDER BY shares with an earlier clause', () => {
    const text = 'SELECT id FROM opportunity WHERE amount > 5 ORDER BY amount + 5 LIMIT 20';
    const count = compileCount(text, opts('opportunity'));
    expect(count.sql).toBe(`SELECT count(*) AS "count" FROM (SELECT "t0"."id" AS "c0" FROM "public"."opportunity" AS "t0" WHERE ${g('t0')} AND ("t0"."amount" > $2::numeric) LIMIT $3::int8) AS "q"`);
    expect(count.kind === 'query' && count.params).toEqual([ORG, 5, 20]);
  });

  it('equals a fresh emitCount for every benchmark corpus query, before and after compile(), with and without NOW pinned', () => {
    const catalogs = { crm, helpdesk: loadFixtureCatalog('helpdesk') };
    const extra = [
      "SELECT owner.name AS rep, count(id) AS n FROM opportunity GROUP BY owner.name ORDER BY count(id) * 2 DESC, rep LIMIT 7",
      "SELECT id FROM opportunity WHERE created_at < date_part('epoch', NOW()) * 1000 ORDER BY date_part('epoch', NOW()) * 1000 - created_at LIMIT 9",
      'SELECT id FROM opportunity ORDER BY 1 LIMIT 5 OFFSET 10',
    ].map((text) => ({ fixture: 'crm' as const, slug: 'opportunity', text }));
    for (const q of [...corpus(), ...extra]) {
      for (const now of [undefined, '2025-06-15T20:00:00Z']) {
        const o = { catalog: catalogs[q.fixture], slug: q.slug, orgId: ORG, ...(now ? { now } : {}) };
        const expected = emitCount(planOf(q.text, o), { orgId: ORG, ...(now ? { now: new Date(now) } : {}) });
        const first = compileCount(q.text, o);
        compile(q.text, o);
        const again = compileCount(q.text, o);
        const uncached = compileCount(q.text, { ...o, cache: false });
        for (const c of [first, again, uncached]) {
          expect(c.kind).toBe('query');
          expect(c.sql, q.text).toBe(expected.sql);
          expect(c.kind === 'query' && c.params, q.text).toEqual(expected.params);
        }
      }
    }
  });
});

describe('the cache', () => {
  it("forgets texts beyond the last 1,000 and still compiles them right afterwards", () => {
    const text = (n: number) => `SELECT id FROM lead WHERE score > ${n} LIMIT 10`;
    const expectedSql = `SELECT "t0"."id" AS "c0" FROM "public"."lead" AS "t0" WHERE ${g('t0')} AND ("t0"."score" > $2::numeric) LIMIT $3::int8`;
    // A hit hands back the cached entry's own columns; a recompiled text has new ones. A text
    // is cached the second time it is compiled.
    const once = compile(text(0), opts('lead')).columns;
    const first = compile(text(0), opts('lead')).columns;
    expect(first, 'a text compiled once is not kept').not.toBe(once);
    expect(compile(text(0), opts('lead')).columns).toBe(first);
    const hot = "SELECT id FROM lead WHERE status = 'new' LIMIT 10";
    compile(hot, opts('lead'));
    const hotColumns = compile(hot, opts('lead')).columns;
    for (let n = 1; n < 1100; n++) {
      // Twice, so each is cached and pushes older entries out.
      compile(text(n), opts('lead'));
      compile(text(n), opts('lead'));
      if (n % 100 === 0) expect(compile(hot, opts('lead')).columns, 'a text in steady use stays cached').toBe(hotColumns);
    }
    expect(compile(text(0), opts('lead')).columns, 'the oldest text was dropped').not.toBe(first);
    for (const n of [0, 50, 1099]) {
      const r = compile(text(n), opts('lead'));
      expect(r.sql).toBe(expectedSql);
      expect(r.params).toEqual([ORG, n, 10]);
    }
  });

  it('keeps texts apart by slug, catalog and the options that change the SQL', () => {
    const text = 'SELECT id FROM account LIMIT 10';
    expect(compile(text, opts('account')).kind).toBe('query');
    expect(() => compile(text, opts('contact'))).toThrow(/slug/i);
    expect(() => compile(text, opts('account', { maxLimit: 5 }))).toThrow();
    expect(compile(text, opts('account')).params).toEqual([ORG, 10]);
    const helpdesk = loadFixtureCatalog('helpdesk');
    expect(() => compile(text, { catalog: helpdesk, slug: 'account', orgId: ORG })).toThrow();
  });

  it('binds the tenant of each call on a hit', () => {
    const text = "SELECT id FROM contact WHERE status = 'active' LIMIT 5";
    expect(compile(text, opts('contact')).params).toEqual([ORG, 'active', 5]);
    expect(compile(text, { ...opts('contact'), orgId: 'org_other' }).params).toEqual(['org_other', 'active', 5]);
  });
});
