import { describe, expect, it } from 'vitest';
import { compile, planOf } from '../../src/compile.js';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { LINT_CODES, lint as lintAll, type LintOptions } from '../../src/lint/lint.js';

/** The compiler's own diagnostics: the report rules (test/lint) are off here. */
const lint = (text: string, options: LintOptions) => lintAll(text, { ...options, rules: Object.fromEntries(LINT_CODES.map((c) => [c, 'off'])) });
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { marked } from '../syntax/helpers.js';

const crm = loadFixtureCatalog('crm');
const helpdesk = loadFixtureCatalog('helpdesk');

function expectOne(source: string, code: string, opts: { slug?: string; hint?: RegExp; message?: RegExp; severity?: string; catalog?: typeof crm; maxPathDepth?: number } = {}) {
  const { text, span } = marked(source);
  const diagnostics = lint(text, { catalog: opts.catalog ?? crm, slug: opts.slug ?? 'opportunity', ...(opts.maxPathDepth ? { maxPathDepth: opts.maxPathDepth } : {}) });
  const found = diagnostics.filter((d) => d.code === code);
  expect(found, JSON.stringify(diagnostics, null, 1)).toHaveLength(1);
  const d = found[0]!;
  expect({ start: d.span.start, end: d.span.end }).toEqual(span);
  if (opts.hint) expect(d.hint).toMatch(opts.hint);
  if (opts.message) expect(d.message).toMatch(opts.message);
  expect(d.severity).toBe(opts.severity ?? 'error');
  return d;
}

function clean(text: string, slug = 'opportunity', catalog = crm) {
  expect(lint(text, { catalog, slug })).toEqual([]);
}

describe('the FROM object', () => {
  it('must equal the request slug', () => {
    expectOne('SELECT id FROM «account» LIMIT 5', 'INVALID_SLUG', { message: /^Invalid slug/, hint: /send slug 'account'/ });
  });
  it('must exist, with a did-you-mean for plurals', () => {
    expectOne('SELECT id FROM «opportunities» LIMIT 5', 'INVALID_SLUG', { message: /did you mean 'opportunity'/ });
  });
  it('has status 400 as an error', () => {
    try {
      compile('SELECT id FROM account LIMIT 5', { catalog: crm, slug: 'opportunity', orgId: 'o' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(OqlError);
      expect((e as OqlError).status).toBe(400);
      expect((e as OqlError).message).toMatch(/^Invalid slug/);
    }
  });
  it('of a subquery may be any object', () => {
    clean('SELECT id FROM account a WHERE EXISTS (SELECT 1 FROM opportunity o WHERE o.account = a.id) LIMIT 5', 'account');
    expectOne('SELECT id FROM account a WHERE EXISTS (SELECT 1 FROM «contacts» c) LIMIT 5', 'UNKNOWN_OBJECT', { slug: 'account', hint: /did you mean 'contact'/ });
  });
});

describe('names', () => {
  it('suggests the closest column', () => {
    expectOne('SELECT «amout» FROM opportunity LIMIT 5', 'UNKNOWN_COLUMN', { message: /unknown column 'amout' on object 'opportunity'/, hint: /did you mean 'amount'/ });
  });
  it('names the object a path segment was looked up on', () => {
    expectOne('SELECT owner.«emial» FROM opportunity LIMIT 5', 'UNKNOWN_COLUMN', { message: /on object 'user'/, hint: /did you mean 'email'/ });
  });
  it('rejects a dot after a plain column', () => {
    expectOne('SELECT «amount.value» FROM opportunity LIMIT 5', 'NOT_A_RELATION', { hint: /relations of opportunity are .*account/ });
  });
  it('needs a field after a virtual relation', () => {
    expectOne('SELECT «contacts» FROM account LIMIT 5', 'VIRTUAL_NEEDS_FIELD', { slug: 'account', hint: /contacts\.id|EXISTS/ });
  });
  it('caps the depth of dot paths', () => {
    expectOne('SELECT «owner.manager.manager.email» FROM opportunity LIMIT 5', 'PATH_TOO_DEEP', { maxPathDepth: 2 });
    clean('SELECT ticket.asset.site.customer.account_manager.team.name FROM ticket_comment LIMIT 5', 'ticket_comment', helpdesk);
  });
  it('resolves aliases, object names and outer scopes in correlated subqueries', () => {
    clean('SELECT a.name FROM account a WHERE NOT EXISTS (SELECT 1 FROM contact WHERE contact.account = a.id AND contact.owner.name ILIKE a.name) LIMIT 5', 'account');
    clean('SELECT name FROM account AS a WHERE EXISTS (SELECT 1 FROM contact c WHERE c.account = a.id) LIMIT 5', 'account');
  });
  it('reads a qualified name as an outer FROM object first, as PostgreSQL does, and warns', () => {
    // Inside FROM contact, `account.id` is the outer account's id, though contact has an account relation.
    expectOne('SELECT name FROM account WHERE EXISTS (SELECT 1 FROM contact c WHERE c.account = «account».id) LIMIT 5', 'AMBIGUOUS_NAME', {
      slug: 'account',
      severity: 'warning',
      hint: /write c\.account\.id/,
    });
    const p = planOf('SELECT name FROM account WHERE EXISTS (SELECT 1 FROM contact c WHERE c.account = account.id) LIMIT 5', { catalog: crm, slug: 'account' });
    const exists = p.query.where!;
    if (exists.kind !== 'Exists') throw new Error('expected EXISTS');
    const cond = exists.query.where!;
    if (cond.kind !== 'Binary' || cond.right.kind !== 'Column') throw new Error('expected a comparison with a column');
    expect({ scope: cond.right.scope, hops: cond.right.hops.length }).toEqual({ scope: p.query.scope, hops: 0 });
  });
  it('lets an inner column shadow an outer one of the same name', () => {
    // `name` inside the subquery is the contact's, as in PostgreSQL.
    const p = planOf("SELECT id FROM account WHERE EXISTS (SELECT 1 FROM contact c WHERE name = 'x') LIMIT 5", { catalog: crm, slug: 'account' });
    const exists = p.query.where!;
    expect(exists.kind).toBe('Exists');
    if (exists.kind !== 'Exists') return;
    const cond = exists.query.where!;
    expect(cond.kind === 'Binary' && cond.left.kind === 'Column' && cond.left.object).toBe('contact');
  });
});

describe('virtual relations in IN subqueries', () => {
  it('is an error on the relation column, with EXISTS as the hint', () => {
    expectOne('SELECT id FROM account WHERE «contacts» IN (SELECT id FROM contact) LIMIT 5', 'VIRTUAL_IN_SUBQUERY', { slug: 'account', hint: /EXISTS \(SELECT 1 FROM contact x WHERE x\.account = a\.id AND x\.id IN \(SELECT id FROM contact\)\).*FROM account a/ });
  });
  it('is fine on to-one and id columns', () => {
    clean("SELECT id FROM account WHERE id IN (SELECT account FROM opportunity WHERE stage = 'won') LIMIT 5", 'account');
  });
});

describe('types', () => {
  it('rejects comparing a date column with a string, with the epoch value', () => {
    const d = expectOne("SELECT id FROM opportunity HAVING 1 = 1 AND MAX(close_date) > «'2024-03-01'» LIMIT 5", 'DATE_STRING_COMPARISON');
    expect(d.hint).toContain(String(Date.UTC(2024, 2, 1)));
  });
  it('rejects arithmetic on text', () => {
    expectOne('SELECT «name» + 1 AS x FROM opportunity LIMIT 5', 'TYPE_MISMATCH', { hint: /concat/ });
  });
  it('rejects comparing text with a number', () => {
    expectOne('SELECT id FROM opportunity WHERE «name = 5» LIMIT 5', 'TYPE_MISMATCH', { hint: /quote/ });
  });
  it('warns about an enum option that does not exist, listing the options', () => {
    expectOne("SELECT id FROM opportunity WHERE stage = «'closed_won'» LIMIT 5", 'UNKNOWN_OPTION', { severity: 'warning', hint: /'prospecting', 'qualification'/ });
    expectOne("SELECT id FROM opportunity WHERE sources && ARRAY['web', «'webinar'»] LIMIT 5", 'UNKNOWN_OPTION', { severity: 'warning', hint: /did you mean 'web'/ });
  });
  it('compiles despite warnings and returns them', () => {
    const q = compile("SELECT id FROM opportunity WHERE stage = 'closed_won' LIMIT 5", { catalog: crm, slug: 'opportunity', orgId: 'o' });
    expect(q.warnings.map((w) => w.code)).toEqual(['UNKNOWN_OPTION']);
  });
  it('rejects = on a multiselect except ARRAY[NULL]', () => {
    expectOne("SELECT id FROM opportunity WHERE «sources = ARRAY['web']» LIMIT 5", 'MULTISELECT_EQUALITY', { hint: /&& ARRAY/ });
    clean('SELECT id FROM opportunity WHERE sources = ARRAY[NULL] OR sources <> ARRAY[NULL] LIMIT 5');
  });
  it('binds 0 and 1 compared with a boolean column as booleans', () => {
    const q = compile('SELECT id FROM contact WHERE is_primary = 1 AND is_primary <> 0 LIMIT 5', { catalog: crm, slug: 'contact', orgId: 'o' });
    expect(q.kind === 'query' && q.params).toEqual(['o', true, false, 5]);
    expectOne('SELECT id FROM contact WHERE «is_primary = 2» LIMIT 5', 'TYPE_MISMATCH', { slug: 'contact' });
  });
  it('needs a timestamp for AT TIME ZONE, with the conversion as hint', () => {
    expectOne("SELECT «created_at» AT TIME ZONE 'UTC' AS t FROM opportunity LIMIT 5", 'TYPE_MISMATCH', { hint: /to_timestamp\(created_at \/ 1000\)/ });
  });
  it('needs a condition in WHERE', () => {
    expectOne('SELECT id FROM opportunity WHERE «amount» LIMIT 5', 'TYPE_MISMATCH', { message: /WHERE needs a condition/ });
  });
});

describe('grouping', () => {
  it('rejects a select item that is neither grouped nor aggregated', () => {
    expectOne('SELECT «name», COUNT(*) AS n FROM opportunity GROUP BY stage LIMIT 5', 'UNGROUPED_COLUMN', { hint: /GROUP BY/ });
    expectOne('SELECT COUNT(*) AS n, «stage» FROM opportunity LIMIT 5', 'UNGROUPED_COLUMN');
  });
  it('accepts grouped expressions, aliases and ordinals', () => {
    clean("SELECT date_trunc('day', to_timestamp(created_at/1000) AT TIME ZONE 'Asia/Kolkata') AS d, COUNT(*) AS n FROM opportunity GROUP BY d ORDER BY d LIMIT 5");
    clean('SELECT stage, owner.name, COUNT(*) AS n FROM opportunity GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5');
  });
  it('rejects an ordinal outside the select list', () => {
    expectOne('SELECT stage FROM opportunity ORDER BY «3» LIMIT 5', 'INVALID_ORDINAL');
  });
  it('requires ORDER BY of a DISTINCT query to be selected', () => {
    expectOne('SELECT DISTINCT stage FROM opportunity ORDER BY «amount» LIMIT 5', 'ORDER_NOT_SELECTED');
  });
});

describe('output keys', () => {
  it('are the alias, or the path as written without the FROM alias', () => {
    const q = compile('SELECT o.name, owner.manager.email, amount AS "Total Amount", stage AS Stage FROM opportunity o LIMIT 5', { catalog: crm, slug: 'opportunity', orgId: 'o' });
    expect(q.columns.map((c) => c.key)).toEqual(['name', 'owner.manager.email', 'Total Amount', 'stage']);
    expect(q.columns.map((c) => c.type)).toEqual(['text', 'email', 'currency', 'enum']);
  });
  it('must be unique', () => {
    expectOne('SELECT name, «owner.name AS name» FROM opportunity LIMIT 5', 'DUPLICATE_KEY', { hint: /alias/ });
  });
  it('of * are the stored columns in catalog order', () => {
    const q = compile('SELECT * FROM account LIMIT 5', { catalog: crm, slug: 'account', orgId: 'o' });
    const expected = [...crm.objects.get('account')!.columns.values()].filter((c) => c.type !== 'virtual').map((c) => c.slug);
    expect(q.columns.map((c) => c.key)).toEqual(expected);
    expect(expected).not.toContain('contacts');
  });
});

describe('checks PostgreSQL would only make when running the query', () => {
  it('rejects min/max of a boolean, with a conditional count as hint', () => {
    expectOne('SELECT max(«is_active») AS any_active FROM user LIMIT 5', 'TYPE_MISMATCH', { slug: 'user', hint: /COUNT\(CASE WHEN is_active THEN 1 END\)/ });
  });
  it('rejects a LIKE pattern ending in its escape character', () => {
    expectOne("SELECT id FROM account WHERE name ILIKE «'Acme\\'» LIMIT 5", 'INVALID_ARGUMENT', { slug: 'account', hint: /\\\\/ });
    // An escaped backslash at the end is a literal backslash: fine.
    clean("SELECT id FROM account WHERE name ILIKE 'Acme\\\\' LIMIT 5", 'account');
  });
  it('takes the length of left() as a whole number from 0, and its first argument as text', () => {
    expectOne('SELECT left(name, «-1») AS n FROM account LIMIT 5', 'INVALID_ARGUMENT', { slug: 'account', hint: /^write left\(name, 100\)$/ });
    expectOne('SELECT left(name, «annual_revenue») AS n FROM account LIMIT 5', 'INVALID_ARGUMENT', { slug: 'account' });
    expectOne('SELECT left(«annual_revenue», 3) AS n FROM account LIMIT 5', 'TYPE_MISMATCH', { slug: 'account' });
    clean('SELECT left(name, 3) AS n, LEFT(concat(name, city), 0) AS z FROM account LIMIT 5', 'account');
  });
});
