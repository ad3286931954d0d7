import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { applyFixes, fixQuery } from '../../src/lint/fix.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';

const catalog = loadFixtureCatalog('crm');

describe('fixQuery', () => {
  it('applies every safe fix over several passes, and the result compiles', () => {
    const q = "SELECT owner, SUM(amount) FROM opportunity WHERE stage = 'Won' AND owner.id <> 'usr_9' AND close_date BETWEEN '2024-01-01' AND '2024-03-31' GROUP BY owner";
    const r = fixQuery(q, { catalog, slug: 'opportunity' });
    expect(r.output).toBe(`SELECT owner, SUM(amount) AS sum_amount FROM opportunity WHERE stage = 'won' AND owner.id <> 'usr_9' AND close_date BETWEEN ${Date.UTC(2024, 0, 1)} AND ${Date.UTC(2024, 2, 31)} GROUP BY owner LIMIT 100`);
    // owner.id <> 'usr_9' stays: owner <> 'usr_9' would also keep the rows whose owner is deleted.
    expect(r.remaining.map((d) => d.code)).toEqual(['RELATION_ID_COMPARISON']);
    expect(r.fixed.map((d) => d.code).sort()).toEqual(['DATE_STRING_COMPARISON', 'DATE_STRING_COMPARISON', 'MISSING_ALIAS', 'MISSING_LIMIT', 'UNKNOWN_OPTION']);
    expect(() => compile(r.output, { catalog, slug: 'opportunity', orgId: 'org_a' })).not.toThrow();
  });

  it('is idempotent and leaves a clean query alone', () => {
    const once = fixQuery('SELECT COUNT(*) FROM lead', { catalog, slug: 'lead' }).output;
    expect(fixQuery(once, { catalog, slug: 'lead' }).output).toBe(once);
    const clean = 'SELECT id FROM lead ORDER BY id LIMIT 5';
    expect(fixQuery(clean, { catalog, slug: 'lead' })).toMatchObject({ output: clean, fixed: [] });
  });

  it('does not apply suggestions that change what runs (EXTRACT, fan-out)', () => {
    const q = 'SELECT EXTRACT(year FROM close_date) AS y FROM opportunity LIMIT 5';
    expect(fixQuery(q, { catalog, slug: 'opportunity' }).output).toBe(q);
  });
});

describe('applyFixes', () => {
  it('applies non-overlapping fixes and skips one that overlaps an earlier one', () => {
    const r = applyFixes('abcdef', [{ range: [4, 5], text: 'E' }, { range: [0, 2], text: 'AB' }, { range: [1, 3], text: 'x' }, { range: [6, 6], text: '!' }]);
    expect(r).toEqual({ text: 'ABcdEf!', applied: 3 });
  });
});
