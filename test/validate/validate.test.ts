import { describe, expect, it } from 'vitest';
import { LINT_CODES, lint as lintAll, type LintOptions } from '../../src/lint/lint.js';

/** The compiler's own diagnostics: the report rules (test/lint) are off here. */
const lint = (text: string, options: LintOptions) => lintAll(text, { ...options, rules: Object.fromEntries(LINT_CODES.map((c) => [c, 'off'])) });
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { marked } from '../syntax/helpers.js';

const catalog = loadFixtureCatalog('crm');

/** The diagnostics of a query whose expected span is marked with «...». */
function diagnose(source: string, slug = 'opportunity', extra: Record<string, unknown> = {}) {
  const { text, span } = marked(source);
  return { diagnostics: lint(text, { catalog, slug, ...extra }), span, text };
}

function expectOne(source: string, code: string, hint?: RegExp, slug = 'opportunity', extra: Record<string, unknown> = {}) {
  const { diagnostics, span } = diagnose(source, slug, extra);
  const found = diagnostics.filter((d) => d.code === code);
  expect(found, JSON.stringify(diagnostics, null, 1)).toHaveLength(1);
  expect({ start: found[0]!.span.start, end: found[0]!.span.end }).toEqual(span);
  if (hint) expect(found[0]!.hint).toMatch(hint);
  return found[0]!;
}

describe('LIMIT', () => {
  it('is required at the top level, pointing at the end of the query', () => {
    expectOne('SELECT id FROM opportunity«»', 'MISSING_LIMIT', /LIMIT 100/);
  });
  it('is not required in subqueries', () => {
    const { diagnostics } = diagnose('SELECT id FROM account a WHERE EXISTS (SELECT 1 FROM contact c WHERE c.account = a.id) LIMIT 5«»', 'account');
    expect(diagnostics).toEqual([]);
  });
  it('must be a positive whole number', () => {
    expectOne('SELECT id FROM opportunity LIMIT «0»', 'INVALID_LIMIT', /LIMIT 100/);
    expectOne('SELECT id FROM opportunity LIMIT «2.5»', 'INVALID_LIMIT');
  });
  it('has a configurable maximum', () => {
    expectOne('SELECT id FROM opportunity LIMIT «501»', 'LIMIT_TOO_LARGE', /LIMIT 500 or less/, 'opportunity', { maxLimit: 500 });
    expect(diagnose('SELECT id FROM opportunity LIMIT 500«»', 'opportunity', { maxLimit: 500 }).diagnostics).toEqual([]);
  });
});

describe('select list', () => {
  it('needs an alias on aggregates and computed items, with a suggestion', () => {
    expectOne('SELECT stage, «COUNT(*)» FROM opportunity GROUP BY stage LIMIT 5', 'MISSING_ALIAS', /COUNT\(\*\) AS count/);
    expectOne('SELECT «SUM(amount) / 100» FROM opportunity LIMIT 5', 'MISSING_ALIAS', /AS sum_amount/);
  });
  it('accepts bare columns, dot paths and * without aliases', () => {
    expect(diagnose('SELECT id, owner.name, account.owner.email FROM opportunity LIMIT 5«»').diagnostics).toEqual([]);
    expect(diagnose('SELECT * FROM opportunity LIMIT 5«»').diagnostics).toEqual([]);
  });
  it('has a configurable maximum number of items', () => {
    expectOne('SELECT id, name, «stage» FROM opportunity LIMIT 5', 'TOO_MANY_SELECT_ITEMS', undefined, 'opportunity', { maxSelectItems: 2 });
  });
});

describe('functions', () => {
  it('rejects functions outside the whitelist with near matches', () => {
    expectOne('SELECT «cont»(id) AS n FROM opportunity LIMIT 5', 'UNKNOWN_FUNCTION', /did you mean 'count'/);
    expectOne('SELECT «sqrt»(amount) AS n FROM opportunity LIMIT 5', 'UNKNOWN_FUNCTION', /the functions are count, sum/);
  });
  it('rejects array_length with the emptiness test as hint', () => {
    expectOne('SELECT id FROM opportunity WHERE «array_length»(sources, 1) > 0 LIMIT 5', 'UNSUPPORTED_FUNCTION', /= ARRAY\[NULL\]/);
  });
  it('rejects pg_* references', () => {
    expectOne('SELECT «pg_sleep»(10) AS s FROM opportunity LIMIT 5', 'UNSUPPORTED_SYSTEM_REFERENCE');
    expectOne('SELECT id FROM «pg_user» LIMIT 5', 'UNSUPPORTED_SYSTEM_REFERENCE');
  });
  it('checks arity', () => {
    expectOne("SELECT «round(amount, 2, 3)» AS r FROM opportunity LIMIT 5", 'WRONG_ARGUMENT_COUNT', /round\(x \[, digits\]\)/);
    expectOne("SELECT «if(stage = 'won', 1)» AS w FROM opportunity LIMIT 5", 'WRONG_ARGUMENT_COUNT', /if\(condition, then, else\)/);
  });
  it('rejects nested aggregates and aggregates in WHERE and GROUP BY', () => {
    expectOne('SELECT SUM(«COUNT(id)») AS s FROM opportunity LIMIT 5', 'NESTED_AGGREGATE');
    expectOne('SELECT id FROM opportunity WHERE «SUM(amount)» > 5 LIMIT 5', 'AGGREGATE_NOT_ALLOWED', /HAVING/);
    expectOne('SELECT stage FROM opportunity GROUP BY «COUNT(id)» LIMIT 5', 'AGGREGATE_NOT_ALLOWED');
  });
  it('allows aggregates inside a subquery in WHERE', () => {
    expect(diagnose('SELECT id FROM opportunity WHERE amount > (SELECT AVG(amount) FROM opportunity) LIMIT 5«»').diagnostics).toEqual([]);
  });
});

describe('dates', () => {
  it('rejects CURRENT_DATE with the epoch form', () => {
    expectOne('SELECT id FROM opportunity WHERE created_at > «CURRENT_DATE» LIMIT 5', 'UNSUPPORTED_DATE_KEYWORD', /date_part\('epoch', date_trunc\('day', NOW\(\) AT TIME ZONE/);
  });
  it('rejects date strings in WHERE and computes the epoch value', () => {
    const d = expectOne("SELECT id FROM opportunity WHERE close_date >= «'2024-01-01'» LIMIT 5", 'DATE_STRING_COMPARISON');
    expect(d.hint).toContain(String(Date.UTC(2024, 0, 1)));
  });
  it('rejects to_timestamp comparisons in WHERE', () => {
    expectOne("SELECT id FROM opportunity WHERE «to_timestamp(created_at / 1000)» > NOW() LIMIT 5", 'TO_TIMESTAMP_COMPARISON', /created_at > date_part\('epoch', NOW\(\)\)\*1000/);
  });
  it('accepts to_timestamp for grouping and display', () => {
    const q = "SELECT date_trunc('day', to_timestamp(created_at/1000) AT TIME ZONE 'Asia/Kolkata') AS day, COUNT(*) AS n FROM opportunity GROUP BY day LIMIT 5«»";
    expect(diagnose(q).diagnostics).toEqual([]);
  });
  it('rejects casts other than ::date and EXTRACT', () => {
    expectOne('SELECT amount::«numeric» AS a FROM opportunity LIMIT 5', 'UNSUPPORTED_CAST', /need no cast/);
    expectOne('SELECT «EXTRACT(year FROM NOW())» AS y FROM opportunity LIMIT 5', 'UNSUPPORTED_EXTRACT', /date_part\('year', NOW\(\)\)/);
  });
});

describe('several problems at once', () => {
  it('reports every diagnostic, in source order', () => {
    const diagnostics = lint('SELECT cont(id), amout FROM opportunity', { catalog, slug: 'opportunity' });
    expect(diagnostics.map((d) => d.code)).toEqual(['UNKNOWN_FUNCTION', 'MISSING_ALIAS', 'UNKNOWN_COLUMN', 'MISSING_LIMIT']);
  });
});
