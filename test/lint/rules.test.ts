import { describe, expect, it } from 'vitest';
import { lint, type LintOptions } from '../../src/lint/lint.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';

/** Report rules: each fires on the mistake, not on the correct form, and its fix is the correct form. */

const catalog = loadFixtureCatalog('crm');

function codes(query: string, slug = 'opportunity', extra: Partial<LintOptions> = {}): string[] {
  return lint(query, { catalog, slug, ...extra }).map((d) => d.code);
}

function fixed(query: string, code: string, slug = 'opportunity'): string {
  const d = lint(query, { catalog, slug }).find((x) => x.code === code);
  expect(d?.fix, `${code} in ${query}`).toBeDefined();
  return query.slice(0, d!.fix!.range[0]) + d!.fix!.text + query.slice(d!.fix!.range[1]);
}

const rules: readonly { code: string; wrong: string; right: string; slug?: string; clean?: readonly string[] }[] = [
  {
    code: 'RELATIVE_DAY_ONE_ZONE',
    wrong: "SELECT id FROM opportunity WHERE created_at >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata'))*1000 ORDER BY id LIMIT 10",
    right: "SELECT id FROM opportunity WHERE created_at >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 ORDER BY id LIMIT 10",
    clean: ["SELECT id FROM opportunity WHERE created_at >= date_part('epoch', NOW())*1000 - 86400000 ORDER BY id LIMIT 10"],
  },
  {
    code: 'EPOCH_SECONDS',
    wrong: 'SELECT id FROM opportunity WHERE close_date BETWEEN 1704067200 AND 1706745599000 ORDER BY id LIMIT 10',
    right: 'SELECT id FROM opportunity WHERE close_date BETWEEN 1704067200000 AND 1706745599000 ORDER BY id LIMIT 10',
    clean: ['SELECT id FROM opportunity WHERE probability > 1704067200 ORDER BY id LIMIT 10', 'SELECT id FROM opportunity WHERE created_at > 1704067200000 ORDER BY id LIMIT 10'],
  },
  {
    code: 'TO_TIMESTAMP_MILLISECONDS',
    wrong: "SELECT date_trunc('month', to_timestamp(created_at) AT TIME ZONE 'UTC') AS m, COUNT(*) AS n FROM opportunity GROUP BY 1 LIMIT 10",
    right: "SELECT date_trunc('month', to_timestamp(created_at / 1000) AT TIME ZONE 'UTC') AS m, COUNT(*) AS n FROM opportunity GROUP BY 1 LIMIT 10",
  },
  {
    code: 'LIMIT_WITHOUT_ORDER',
    wrong: "SELECT id, name FROM opportunity WHERE stage = 'won' LIMIT 10",
    right: "SELECT id, name FROM opportunity WHERE stage = 'won' ORDER BY id LIMIT 10",
    clean: ['SELECT stage, COUNT(*) AS n FROM opportunity GROUP BY stage LIMIT 10', "SELECT name FROM opportunity WHERE id = 'opp_1' LIMIT 1"],
  },
  {
    code: 'RELATION_ID_COMPARISON',
    wrong: "SELECT id FROM opportunity WHERE account.owner.id IN ('usr_1', 'usr_2') ORDER BY id LIMIT 10",
    right: "SELECT id FROM opportunity WHERE account.owner IN ('usr_1', 'usr_2') ORDER BY id LIMIT 10",
    clean: ["SELECT id FROM opportunity WHERE owner.name = 'x' ORDER BY id LIMIT 10", 'SELECT id FROM opportunity WHERE owner.id = account.owner.id ORDER BY id LIMIT 10'],
  },
];

describe('report rules', () => {
  for (const r of rules) {
    it(`${r.code} fires, and its fix is the right form`, () => {
      expect(codes(r.wrong, r.slug)).toContain(r.code);
      expect(fixed(r.wrong, r.code, r.slug)).toBe(r.right);
      expect(codes(r.right, r.slug)).not.toContain(r.code);
      expect(lint(r.right, { catalog, slug: r.slug ?? 'opportunity' }).filter((d) => d.severity === 'error')).toEqual([]);
    });
    for (const q of r.clean ?? []) {
      it(`${r.code} is quiet on ${q}`, () => {
        expect(codes(q, r.slug)).not.toContain(r.code);
      });
    }
  }

  it('rule levels turn a rule off or into an error', () => {
    const q = "SELECT id FROM opportunity WHERE stage = 'won' LIMIT 10";
    expect(codes(q, 'opportunity', { rules: { LIMIT_WITHOUT_ORDER: 'off' } })).toEqual([]);
    const [d] = lint(q, { catalog, slug: 'opportunity', rules: { LIMIT_WITHOUT_ORDER: 'error' } });
    expect(d?.severity).toBe('error');
  });

  it('report rules do not run on a query with errors (they need its types)', () => {
    expect(codes('SELECT nope FROM opportunity LIMIT 10')).toEqual(['UNKNOWN_COLUMN']);
  });

  it('an enum option in the wrong case is a warning with the right case as fix', () => {
    expect(fixed("SELECT id FROM contact WHERE status IN ('Active', 'bounced') ORDER BY id LIMIT 10", 'UNKNOWN_OPTION', 'contact')).toBe("SELECT id FROM contact WHERE status IN ('active', 'bounced') ORDER BY id LIMIT 10");
  });
});
