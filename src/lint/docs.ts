import { CODES, statusOf, type DiagnosticCode } from '../diagnostics/codes.js';

/**
 * One page per diagnostic code: what it means (CODES), and for codes about the query text a
 * wrong and a right example. The one source of `oql explain CODE`, of SARIF rule descriptions
 * and of docs/diagnostics.md (`oql explain --markdown` writes it; a test keeps it in step).
 */
export interface CodePage {
  readonly code: DiagnosticCode;
  readonly meaning: string;
  /** Why it matters or how to read it, when the meaning alone does not say. */
  readonly detail?: string;
  readonly wrong?: string;
  readonly right?: string;
  /** The slug the examples are written for. */
  readonly slug?: string;
  /** Compile options the examples need (a code only an option raises). */
  readonly options?: { readonly fanout?: 'exact' };
}

type Example = Omit<CodePage, 'code' | 'meaning'>;

const EXAMPLES: Partial<Record<DiagnosticCode, Example>> = {
  EMPTY_QUERY: { wrong: '', right: 'SELECT id FROM opportunity LIMIT 10' },
  SYNTAX_ERROR: { wrong: 'SELECT id opportunity LIMIT 10', right: 'SELECT id FROM opportunity LIMIT 10' },
  UNEXPECTED_END: { wrong: 'SELECT id FROM', right: 'SELECT id FROM opportunity LIMIT 10' },
  UNTERMINATED_STRING: { wrong: "SELECT id FROM opportunity WHERE stage = 'won LIMIT 10", right: "SELECT id FROM opportunity WHERE stage = 'won' LIMIT 10" },
  UNTERMINATED_IDENTIFIER: { wrong: 'SELECT "amount FROM opportunity LIMIT 10', right: 'SELECT amount FROM opportunity LIMIT 10' },
  UNTERMINATED_COMMENT: { wrong: 'SELECT id /* deals FROM opportunity LIMIT 10', right: 'SELECT id /* deals */ FROM opportunity LIMIT 10' },
  MULTIPLE_STATEMENTS: { wrong: 'SELECT id FROM opportunity LIMIT 10; SELECT id FROM lead LIMIT 10', right: 'SELECT id FROM opportunity LIMIT 10' },
  NOT_SELECT: { wrong: "UPDATE opportunity SET stage = 'won'", right: "SELECT id FROM opportunity WHERE stage = 'won' LIMIT 10" },
  UNSUPPORTED_JOIN: { slug: 'account', wrong: 'SELECT a.name FROM account a JOIN contact c ON c.account = a.id LIMIT 10', right: 'SELECT name, contacts.name AS contact FROM account LIMIT 10' },
  UNSUPPORTED_SET_OPERATION: { wrong: "SELECT id FROM opportunity WHERE stage = 'won' UNION SELECT id FROM opportunity WHERE stage = 'lost' LIMIT 10", right: "SELECT id FROM opportunity WHERE stage IN ('won', 'lost') LIMIT 10" },
  UNSUPPORTED_WITH: { wrong: 'WITH w AS (SELECT id FROM opportunity) SELECT id FROM w LIMIT 10', right: 'SELECT id FROM opportunity LIMIT 10' },
  UNSUPPORTED_EXTRACT: { wrong: 'SELECT EXTRACT(year FROM close_date) AS y FROM opportunity LIMIT 10', right: "SELECT date_part('year', to_timestamp(close_date / 1000) AT TIME ZONE 'UTC') AS y FROM opportunity LIMIT 10" },
  UNSUPPORTED_FILTER: { wrong: "SELECT COUNT(*) FILTER (WHERE stage = 'won') AS won FROM opportunity LIMIT 1", right: "SELECT SUM(if(stage = 'won', 1, 0)) AS won FROM opportunity LIMIT 1" },
  UNSUPPORTED_CAST: { wrong: 'SELECT amount::numeric AS a FROM opportunity LIMIT 10', right: 'SELECT amount AS a FROM opportunity LIMIT 10' },
  UNSUPPORTED_SUBSCRIPT: { wrong: 'SELECT sources[1] AS s FROM opportunity LIMIT 10', right: "SELECT id FROM opportunity WHERE sources && ARRAY['web'] LIMIT 10" },
  UNSUPPORTED_WINDOW: { wrong: 'SELECT id, ROW_NUMBER() OVER (ORDER BY amount) AS n FROM opportunity LIMIT 10', right: 'SELECT id FROM opportunity ORDER BY amount LIMIT 10' },
  UNSUPPORTED_OPERATOR: { wrong: "SELECT id FROM opportunity WHERE name ~ 'Acme' LIMIT 10", right: "SELECT id FROM opportunity WHERE name LIKE '%Acme%' LIMIT 10" },
  UNSUPPORTED_FUNCTION: { wrong: 'SELECT id FROM opportunity WHERE array_length(sources, 1) > 0 LIMIT 10', right: 'SELECT id FROM opportunity WHERE NOT (sources = ARRAY[NULL]) LIMIT 10' },
  UNSUPPORTED_SYSTEM_REFERENCE: { wrong: 'SELECT usename FROM pg_user LIMIT 10', right: 'SELECT name FROM user LIMIT 10', slug: 'user' },
  TOO_MANY_SELECT_ITEMS: { detail: 'The maximum is maxSelectItems (default 200). It is reported once, at the first item past it; the items from there on are not checked, and names and types are not checked until the list is within it.' },
  PATH_TOO_DEEP: { detail: 'The maximum is maxPathDepth (default 6) relation hops in one dot path.' },
  COMPILE_BUDGET_EXCEEDED: { detail: 'Compile and lint take time in proportion to the text, a few milliseconds for a typical report and about 100 ms for the largest texts the length cap admits; the budget (maxCompileMs, default 1,000 ms) bounds the time one text can hold the service for everybody else. It names no place in the text: split the report into smaller queries.' },
  MISSING_LIMIT: { wrong: 'SELECT id FROM opportunity', right: 'SELECT id FROM opportunity LIMIT 100' },
  INVALID_LIMIT: { wrong: 'SELECT id FROM opportunity LIMIT 0', right: 'SELECT id FROM opportunity LIMIT 100' },
  LIMIT_TOO_LARGE: { wrong: 'SELECT id FROM opportunity LIMIT 50000', right: 'SELECT id FROM opportunity LIMIT 10000' },
  MISSING_ALIAS: { wrong: 'SELECT stage, COUNT(*) FROM opportunity GROUP BY stage LIMIT 10', right: 'SELECT stage, COUNT(*) AS count FROM opportunity GROUP BY stage LIMIT 10' },
  UNKNOWN_FUNCTION: { wrong: "SELECT id FROM opportunity WHERE 'web' = ANY(sources) LIMIT 10", right: "SELECT id FROM opportunity WHERE sources && ARRAY['web'] LIMIT 10" },
  WRONG_ARGUMENT_COUNT: { wrong: 'SELECT round(amount, 2, 3) AS r FROM opportunity LIMIT 10', right: 'SELECT round(amount, 2) AS r FROM opportunity LIMIT 10' },
  INVALID_ARGUMENT: { wrong: 'SELECT date_part(year, NOW()) AS y FROM opportunity LIMIT 1', right: "SELECT date_part('year', NOW()) AS y FROM opportunity LIMIT 1" },
  NESTED_AGGREGATE: { wrong: 'SELECT SUM(COUNT(id)) AS s FROM opportunity LIMIT 10', right: 'SELECT COUNT(id) AS s FROM opportunity LIMIT 10' },
  AGGREGATE_NOT_ALLOWED: { wrong: 'SELECT owner FROM opportunity WHERE SUM(amount) > 5 GROUP BY owner LIMIT 10', right: 'SELECT owner FROM opportunity GROUP BY owner HAVING SUM(amount) > 5 LIMIT 10' },
  NUMBER_OUT_OF_RANGE: {
    detail: 'Integer literals are sent exactly as written: as bigint up to 9223372036854775807, as numeric beyond. A number beyond double precision (about 1.8e308), or too small for it and not zero, could not come back in a result as a number, so it is refused rather than rounded.',
    wrong: 'SELECT id FROM opportunity WHERE amount < 1e400 LIMIT 10',
    right: 'SELECT id FROM opportunity WHERE amount < 1e308 LIMIT 10',
  },
  UNSUPPORTED_DATE_KEYWORD: { wrong: 'SELECT id FROM opportunity WHERE close_date >= CURRENT_DATE LIMIT 10', right: "SELECT id FROM opportunity WHERE close_date >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')*1000 LIMIT 10" },
  DATE_STRING_COMPARISON: { detail: 'The operator is kept; = with a whole day becomes the day\'s range, read in the query\'s zone or the timeZone option (UTC by default).', wrong: "SELECT id FROM opportunity WHERE created_at < '2024-01-01' LIMIT 10", right: 'SELECT id FROM opportunity WHERE created_at < 1704067200000 LIMIT 10' },
  TO_TIMESTAMP_COMPARISON: { wrong: 'SELECT id FROM opportunity WHERE to_timestamp(created_at / 1000) > NOW() LIMIT 10', right: "SELECT id FROM opportunity WHERE created_at > date_part('epoch', NOW())*1000 LIMIT 10" },
  INVALID_SLUG: { detail: 'The top-level FROM must name the request\'s slug (the singular object slug, such as opportunity).', wrong: 'SELECT id FROM opportunities LIMIT 10', right: 'SELECT id FROM opportunity LIMIT 10' },
  UNKNOWN_OBJECT: { wrong: 'SELECT id FROM opportunity WHERE EXISTS (SELECT 1 FROM contacts c WHERE c.owner = opportunity.owner) LIMIT 10', right: 'SELECT id FROM opportunity WHERE EXISTS (SELECT 1 FROM contact c WHERE c.owner = opportunity.owner) LIMIT 10' },
  UNKNOWN_COLUMN: { detail: 'Double quotes name a column and are case-sensitive; strings take single quotes. HAVING cannot name an output alias.', wrong: 'SELECT id FROM opportunity WHERE stage = "won" LIMIT 10', right: "SELECT id FROM opportunity WHERE stage = 'won' LIMIT 10" },
  NOT_A_RELATION: { wrong: 'SELECT name.first FROM opportunity LIMIT 10', right: 'SELECT owner.name FROM opportunity LIMIT 10' },
  VIRTUAL_NEEDS_FIELD: { slug: 'account', wrong: 'SELECT id FROM account WHERE contacts > 0 LIMIT 10', right: 'SELECT id FROM account p WHERE EXISTS (SELECT 1 FROM contact x WHERE x.account = p.id) LIMIT 10' },
  VIRTUAL_IN_SUBQUERY: { slug: 'account', wrong: "SELECT id FROM account WHERE opportunities IN (SELECT id FROM opportunity WHERE stage = 'won') LIMIT 10", right: "SELECT id FROM account p WHERE EXISTS (SELECT 1 FROM opportunity x WHERE x.account = p.id AND x.stage = 'won') LIMIT 10" },
  SUBQUERY_COLUMNS: { wrong: 'SELECT id FROM opportunity WHERE amount > (SELECT AVG(amount), MAX(amount) FROM opportunity) LIMIT 10', right: 'SELECT id FROM opportunity WHERE amount > (SELECT AVG(amount) FROM opportunity) LIMIT 10' },
  DUPLICATE_ALIAS: { detail: 'Reserved: each scope has one FROM item, so the current dialect does not raise it.' },
  AMBIGUOUS_NAME: { slug: 'account', wrong: 'SELECT id FROM account WHERE EXISTS (SELECT 1 FROM contact x WHERE x.account = account.id) LIMIT 10', right: 'SELECT id FROM account p WHERE EXISTS (SELECT 1 FROM contact x WHERE x.account = p.id) LIMIT 10' },
  DUPLICATE_KEY: { wrong: 'SELECT name, amount AS name FROM opportunity ORDER BY id LIMIT 10', right: 'SELECT name, amount AS amount FROM opportunity ORDER BY id LIMIT 10' },
  TYPE_MISMATCH: { wrong: 'SELECT id FROM opportunity WHERE created_at > now() - 86400000 LIMIT 10', right: "SELECT id FROM opportunity WHERE created_at > date_part('epoch', now())*1000 - 86400000 LIMIT 10" },
  MULTISELECT_EQUALITY: { wrong: "SELECT id FROM opportunity WHERE sources = 'web' LIMIT 10", right: "SELECT id FROM opportunity WHERE sources && ARRAY['web'] LIMIT 10" },
  UNKNOWN_OPTION: { detail: 'Option slugs are case-sensitive: the fix writes the option in its own case.', slug: 'account', wrong: "SELECT id FROM account WHERE industry = 'Retail' LIMIT 10", right: "SELECT id FROM account WHERE industry = 'retail' LIMIT 10" },
  UNGROUPED_COLUMN: { wrong: 'SELECT stage, owner, COUNT(*) AS n FROM opportunity GROUP BY stage LIMIT 10', right: 'SELECT stage, owner, COUNT(*) AS n FROM opportunity GROUP BY stage, owner LIMIT 10' },
  ORDER_NOT_SELECTED: { wrong: 'SELECT DISTINCT stage FROM opportunity ORDER BY amount LIMIT 10', right: 'SELECT DISTINCT stage FROM opportunity ORDER BY stage LIMIT 10' },
  INVALID_ORDINAL: { wrong: 'SELECT stage, COUNT(*) AS n FROM opportunity GROUP BY 3 LIMIT 10', right: 'SELECT stage, COUNT(*) AS n FROM opportunity GROUP BY 1 LIMIT 10' },
  FANOUT_AGGREGATE: {
    detail: 'Each one-to-many relation in a query joins one row per child, so the parent\'s rows repeat. SUM, AVG and COUNT then count them again; MIN, MAX and COUNT(DISTINCT ...) do not. The fix reads each relation in a correlated subquery per parent (and a filter on a relation as EXISTS).',
    slug: 'account',
    wrong: 'SELECT name, COUNT(contacts.id) AS contacts_n, SUM(opportunities.amount) AS pipeline FROM account GROUP BY name LIMIT 10',
    right: 'SELECT name, SUM((SELECT COUNT(x.id) FROM contact x WHERE x.account = p.id)) AS contacts_n, SUM((SELECT SUM(x.amount) FROM opportunity x WHERE x.account = p.id)) AS pipeline FROM account p GROUP BY name LIMIT 10',
  },
  FANOUT_CROSS_PRODUCT: {
    slug: 'account',
    wrong: 'SELECT name, contacts.name AS contact, opportunities.name AS deal FROM account ORDER BY name LIMIT 100',
    right: 'SELECT name, contacts.name AS contact FROM account ORDER BY name LIMIT 100',
  },
  FANOUT_OR: {
    detail: 'OR across two one-to-many relations joins both; count each side with EXISTS, or add the two counts and subtract the rows matching both (inclusion-exclusion).',
    slug: 'account',
    wrong: "SELECT COUNT(*) AS n FROM account WHERE contacts.status = 'bounced' OR opportunities.stage = 'won' LIMIT 10",
    right: "SELECT COUNT(*) AS n FROM account p WHERE (EXISTS (SELECT 1 FROM contact x WHERE x.account = p.id AND (x.status = 'bounced')) OR EXISTS (SELECT 1 FROM opportunity x WHERE x.account = p.id AND (x.stage = 'won'))) LIMIT 10",
  },
  FANOUT_EXACT_UNSUPPORTED: {
    detail: "Raised only under fanout: 'exact' (oql --fanout exact). Exact aggregates read each record once per group, among the rows the query keeps; conditions across relations (AND, OR, NOT, one condition reading two relations), DISTINCT aggregates and relations reached through a to-one hop all have that reading and compile. Three shapes have none and are refused rather than given a number that could be wrong: a one-to-many column outside an aggregate (the children become the rows, so COUNT(*) could count parents or children); one aggregate reading two relations (its values are pairs of children, and a pair with the row of NULLs is no record); and an aggregate over a relation reached through a to-one hop that also reads the query's own row (pairs of a row and a child, for the same reason).",
    slug: 'account',
    options: { fanout: 'exact' },
    wrong: 'SELECT contacts.status AS status, SUM(opportunities.amount) AS pipeline FROM account GROUP BY 1 LIMIT 10',
    right: 'SELECT industry, SUM(opportunities.amount) AS pipeline FROM account GROUP BY 1 LIMIT 10',
  },
  RELATIVE_DAY_ONE_ZONE: {
    wrong: "SELECT id FROM opportunity WHERE created_at >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata'))*1000 ORDER BY id LIMIT 10",
    right: "SELECT id FROM opportunity WHERE created_at >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 ORDER BY id LIMIT 10",
  },
  EPOCH_SECONDS: { wrong: 'SELECT id FROM opportunity WHERE created_at >= 1704067200 ORDER BY id LIMIT 10', right: 'SELECT id FROM opportunity WHERE created_at >= 1704067200000 ORDER BY id LIMIT 10' },
  TO_TIMESTAMP_MILLISECONDS: {
    wrong: "SELECT date_trunc('month', to_timestamp(created_at) AT TIME ZONE 'UTC') AS m, COUNT(*) AS n FROM opportunity GROUP BY 1 LIMIT 10",
    right: "SELECT date_trunc('month', to_timestamp(created_at / 1000) AT TIME ZONE 'UTC') AS m, COUNT(*) AS n FROM opportunity GROUP BY 1 LIMIT 10",
  },
  LIMIT_WITHOUT_ORDER: { wrong: "SELECT id, name FROM opportunity WHERE stage = 'won' LIMIT 10", right: "SELECT id, name FROM opportunity WHERE stage = 'won' ORDER BY id LIMIT 10" },
  RELATION_ID_COMPARISON: { detail: 'The relation column holds the id, so comparing it needs no join. The two differ where the relation names a record the caller cannot see (deleted or missing): its .id is NULL, the column still holds the id. So --fix leaves it to a person.', wrong: "SELECT id FROM opportunity WHERE owner.id = 'usr_1' ORDER BY id LIMIT 10", right: "SELECT id FROM opportunity WHERE owner = 'usr_1' ORDER BY id LIMIT 10" },
  INVALID_REPORT_FILE: { detail: 'A .sql or .oql file is one query, checked against the slug of its header comment (-- slug: opportunity), else --slug, else the object its FROM names; a .json file is the body of a report request ({"query": "...", "slug": "opportunity"}) or an array of {"name", "slug", "query"}.' },
};

export function codePage(code: DiagnosticCode): CodePage {
  return { code, meaning: CODES[code], ...(EXAMPLES[code] ?? {}) };
}

export function allPages(): CodePage[] {
  return (Object.keys(CODES) as DiagnosticCode[]).map(codePage);
}

/** The page as `oql explain CODE` prints it. */
export function explainText(code: DiagnosticCode): string {
  const p = codePage(code);
  const lines = [`${code} (status ${statusOf(code)})`, '', p.meaning];
  if (p.detail) lines.push('', p.detail);
  if (p.wrong !== undefined) lines.push('', `Wrong${p.slug ? ` (slug ${p.slug}${p.options?.fanout ? ', --fanout exact' : ''})` : ''}:`, `  ${p.wrong || "''  (an empty query)"}`);
  if (p.right !== undefined) lines.push('', 'Right:', `  ${p.right}`);
  // No web address: the package has none of its own. The same pages, all of them, are
  // docs/diagnostics.md in the repository and `oql explain --markdown` anywhere.
  lines.push('', 'Every code: oql explain --markdown (docs/diagnostics.md in the repository).');
  return `${lines.join('\n')}\n`;
}

/** docs/diagnostics.md, generated from the same pages. */
export function diagnosticsMarkdown(): string {
  const out = [
    '# Diagnostic codes',
    '',
    '<!-- Generated from src/lint/docs.ts by `oql explain --markdown > docs/diagnostics.md`; edit that file, not this one. -->',
    '',
    'Every code `compile`, `lint` and the runtime report, with what it means and, for codes about the query text, a wrong query and its right form. `oql explain CODE` prints the same page.',
    '',
  ];
  for (const p of allPages()) {
    out.push(`## ${p.code}`, '', `${p.meaning} (status ${statusOf(p.code)})`, '');
    if (p.detail) out.push(p.detail, '');
    if (p.wrong !== undefined) out.push(`Wrong${p.slug ? ` (slug \`${p.slug}\`${p.options?.fanout ? ', `--fanout exact`' : ''})` : ''}:`, '', '```sql', p.wrong, '```', '');
    if (p.right !== undefined) out.push('Right:', '', '```sql', p.right, '```', '');
  }
  return out.join('\n');
}
