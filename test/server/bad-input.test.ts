import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentCheck, type OpenApiDocument } from '../support/openapi.js';
import { KEYS, crmServiceOnPglite, liveRows, type Answer, type CrmService, type Running } from './support.js';

/**
 * Bad input for every endpoint of the contract, over real HTTP on one PGlite: malformed JSON,
 * wrong content types, wrong types and nulls at every position, deep JSON, huge arrays, very long
 * strings, odd unicode and lone surrogates, __proto__/constructor keys, and the injection payloads
 * of test/security/payloads in every identifier-like string field and path segment.
 *
 * Every answer must be a 4xx error envelope (bulk_upsert: 200 with every element FAILED, as
 * the contract says), never a 5xx, a stack trace or a Postgres message; no table changes (content
 * digests of every table, before and after); and /health still answers at the end.
 *
 * An endpoint the server does not route yet is skipped (shown as skipped), not passed.
 * Expectations are derived from the fixture payload (objects-list.json) and the generated rows,
 * never from the server's answers.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The fixture's objects as the service payload describes them (the oracle reads no src/ module). */
interface PayloadColumn { slug: string; column_data_type: number; is_required: number; relation: { object_slug: string; is_virtual: number } | null; enum_group: { values: { slug: string }[] } | null }
const objectsList = JSON.parse(readFileSync(join(ROOT, 'fixtures/crm/objects-list.json'), 'utf8')) as { data: { slug: string; org_object_columns: PayloadColumn[] }[] };
const typeCodes = JSON.parse(readFileSync(join(ROOT, 'fixtures/crm/type-codes.json'), 'utf8')) as Record<string, string>;
const columnsOf = (slug: string) => objectsList.data.find((o) => o.slug === slug)!.org_object_columns;
const typeOf = (c: PayloadColumn) => typeCodes[String(c.column_data_type)]!;

const PAYLOADS: readonly string[] = [...new Set(
  readdirSync(join(ROOT, 'test/security/payloads'))
    .filter((f) => f.endsWith('.txt'))
    .flatMap((f) => readFileSync(join(ROOT, 'test/security/payloads', f), 'utf8').split('\n'))
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim().length > 0),
)];

/** Strings that are no identifier, slug, id, token or operator of this service. */
const ODD_STRINGS: readonly string[] = [
  '',
  ' ',
  'x'.repeat(100_000),
  '\ud800',
  'a\udc00b',
  '\udfff\ud800',
  'a\u0000b',
  '\u0000',
  '\u202eaccount',
  'acc\u200bount',
  'ACCOUNT',
  'account ',
  '😀',
  'ａｃｃｏｕｎｔ',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '../account',
  '%00',
  '$1',
  '${jndi:ldap://x}',
];

const WRONG_TYPES: readonly unknown[] = [null, true, false, 0, -1, 1.5, 1e308, [], {}, [null], { a: 1 }];

const deepArray = (n: number): unknown => {
  let v: unknown = [];
  for (let i = 0; i < n; i++) v = [v];
  return v;
};
const deepObject = (n: number): unknown => {
  let v: unknown = {};
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
};
/** Nested JSON as text: deeper than JSON.stringify can write in a test worker's stack. */
const deepArrayText = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const deepObjectText = (n: number) => `${'{"a":'.repeat(n)}{}${'}'.repeat(n)}`;

// ---- The endpoints ----

/** One request of the corpus and how its answer is judged. */
interface Case {
  readonly label: string;
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly path: string;
  /** Sent as JSON unless a string or bytes (sent as they are, as application/json). */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  readonly judge?: Judge;
  /** The bearer key; null sends no Authorization header. Default: org_acme's superadmin. */
  readonly key?: string | null;
}

/**
 * client_error: a 4xx envelope. upsert: that, or 200 with every element FAILED (the contract's
 * per-element failures). lenient: input a reading endpoint may also answer with 200 (a lone
 * surrogate or NUL inside a value), so only a 5xx or a leak is wrong.
 */
type Judge = 'client_error' | 'upsert' | 'lenient';

const KEY = KEYS.acmeAdmin;
const ORG = 'org_acme';
const OTHER_ORG = 'org_globex';
const live = liveRows;
const ownAccount = live('account', ORG)[0]!.id as string;
const otherAccount = live('account', OTHER_ORG)[0]!.id as string;
const otherUser = live('user', OTHER_ORG)[0]!.id as string;
const ownUser = live('user', ORG)[0]!.id as string;

/**
 * A path segment, percent-encoded; a lone surrogate (which encodeURIComponent refuses) becomes the
 * three bytes a careless encoder would write, which are not UTF-8.
 */
const seg = (s: string) => Array.from(s, (ch) => {
  const u = ch.charCodeAt(0);
  if (ch.length === 1 && u >= 0xd800 && u <= 0xdfff) return [0xe0 | (u >> 12), 0x80 | ((u >> 6) & 0x3f), 0x80 | (u & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
  return encodeURIComponent(ch);
}).join('');

interface Endpoint {
  readonly name: string;
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly path: (slug: string, id: string) => string;
  /** Whether the path has these segments to fill with bad values. */
  readonly slugInPath: boolean;
  readonly idInPath: boolean;
  /** A valid body, or undefined for endpoints without one. */
  readonly body?: () => unknown;
  readonly writes: boolean;
  /** Bodies that are wrong for this endpoint (each must be refused). */
  readonly badBodies: () => Iterable<[label: string, body: unknown, judge?: Judge]>;
  readonly judge?: Judge;
}

/** `body` with the value at `path` replaced (arrays and objects copied along the way). */
function replaceAt(body: unknown, path: readonly (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (Array.isArray(body)) {
    const copy = [...body];
    copy[head as number] = replaceAt(body[head as number], rest, value);
    return copy;
  }
  const obj = { ...(body as Record<string, unknown>) };
  obj[head as string] = replaceAt(obj[head as string], rest, value);
  return obj;
}

/** Each value at each position, labelled. */
function* at(base: unknown, positions: readonly (readonly (string | number)[])[], values: readonly unknown[], what: string): Iterable<[string, unknown]> {
  for (const p of positions) {
    for (const v of values) yield [`${what} at ${p.join('.') || 'body'}: ${JSON.stringify(v)?.slice(0, 60)}`, replaceAt(base, p, v)];
  }
}

const reportBody = () => ({ query: 'SELECT id, name FROM account LIMIT 5', slug: 'account' });
const filterBody = () => ({
  query: {
    fields: ['id', 'name'],
    filters: { and: [{ field: 'name', operator: 'contains', value: 'a' }] },
    sort: [{ field: 'name', direction: 'asc' }],
    pagination: { page: 1, page_size: 10 },
  },
});
const connectorBody = () => ({ query: { fields: ['id', 'name'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: 0 }] } }, next_token: null });

/**
 * Values that are invalid for a record column of this type (whatever else the record holds).
 * Only unambiguous cases: a value the contract might accept (a numeric string, null on an
 * optional column) is not used.
 */
function invalidValues(c: PayloadColumn): unknown[] {
  const common: unknown[] = [{}, [{}], { __x: 1 }, deepArray(50)];
  switch (typeOf(c)) {
    case 'text': return [...common, 123, true, ['a']];
    case 'email': return [...common, 'not-an-email', 'a@', '@b.example', 'a b@c.example', 123, ...PAYLOADS.filter((p) => !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(p))];
    case 'phone': return [...common, 'abc', '12', '+1 555', 'phone: none', 5550100, ...PAYLOADS.filter((p) => !/\d{6,}/.test(p))];
    case 'boolean': return [...common, 'yes', 2, -1, 0.5];
    case 'number': return [...common, 'abc', true, ['1']];
    case 'enum': return [...common, 'no_such_option', 1, true, ['x'], ...PAYLOADS];
    case 'multiselect': return [...common, ['no_such_option'], [1], [true], [['a']], ...PAYLOADS.map((p) => [p])];
    case 'datetime': return [...common, 'yesterday', '2024-01-01T00:00:00Z', true];
    case 'date': return [...common, '2024-01-01', 1_704_067_200_001, true];
    case 'relation': return [...common, 'usr_does_not_exist', 123, true, c.relation!.object_slug === 'user' ? otherUser : otherAccount, ...PAYLOADS];
    default: return common;
  }
}

/** A valid new account of org_acme (name only is required). */
const goodAccount = () => ({ name: 'Bad input corp', owner: ownUser });

/** Bad records of `account`: every writable column with every invalid value, each beside a valid record. */
function* badRecords(): Iterable<[string, Record<string, unknown>]> {
  for (const c of columnsOf('account')) {
    if (c.relation?.is_virtual) continue;
    if (['id', 'created_at', 'updated_at', 'created_by', 'updated_by'].includes(c.slug)) continue;
    for (const v of invalidValues(c)) yield [`${c.slug} = ${JSON.stringify(v)?.slice(0, 60)}`, { name: 'Bad input corp', [c.slug]: v }];
  }
  yield ['required name missing', { industry: null }];
  yield ['required name null', { name: null }];
  for (const p of [...PAYLOADS, ...ODD_STRINGS.filter((s) => s !== '')]) yield [`unknown field ${JSON.stringify(p).slice(0, 60)}`, { name: 'Bad input corp', [p]: 'x' }];
  yield ['a deep value', { name: deepObject(2000) }];
}

const ENDPOINTS: readonly Endpoint[] = [
  {
    name: 'objects list', method: 'POST', path: () => '/api/v1/org/objects/list', slugInPath: false, idInPath: false, writes: false,
    badBodies: () => [],
  },
  {
    name: 'object details', method: 'GET', path: (s) => `/api/v1/org/objects/${seg(s)}/`, slugInPath: true, idInPath: false, writes: false,
    badBodies: () => [],
  },
  {
    name: 'bulk_create', method: 'POST', path: (s) => `/api/v1/org/objects/${seg(s)}/record/bulk_create`, slugInPath: true, idInPath: false, writes: true,
    body: () => [goodAccount()],
    badBodies: function* () {
      for (const v of [...WRONG_TYPES.filter((v) => !Array.isArray(v) || v.length > 0), 'x', { values: [goodAccount()] }]) yield [`body ${JSON.stringify(v)}`, v];
      for (const v of [null, 1, 'x', [], true]) yield [`element ${JSON.stringify(v)}`, [goodAccount(), v]];
      yield ['100,001 records', Array.from({ length: 100_001 }, () => ({ name: 'n' }))];
      yield ['deep array body', deepArrayText(5000)];
      // One bad record among good ones: all or nothing.
      for (const [label, r] of badRecords()) yield [label, [goodAccount(), r, goodAccount()]];
    },
  },
  {
    name: 'bulk_upsert', method: 'POST', path: (s) => `/api/v1/org/objects/${seg(s)}/record/bulk_upsert`, slugInPath: true, idInPath: false, writes: true, judge: 'upsert',
    body: () => ({ values: [goodAccount()] }),
    badBodies: function* () {
      for (const v of [...WRONG_TYPES, 'x', [goodAccount()]]) yield [`body ${JSON.stringify(v)}`, v];
      for (const v of WRONG_TYPES.filter((v) => !(Array.isArray(v) && v.length === 0))) yield [`values ${JSON.stringify(v)}`, { values: v }];
      yield ['100,001 values', { values: Array.from({ length: 100_001 }, () => ({ name: 'n' })) }];
      yield ['deep values', `{"values":${deepArrayText(5000)}}`];
      for (const [label, r] of badRecords()) yield [label, { values: [r] }];
      // Ids that are not this organization's records: the element fails, nothing is created or changed.
      for (const id of [otherAccount, 'acc_does_not_exist', ...PAYLOADS, ...ODD_STRINGS.filter((s) => s !== '')]) yield [`id ${JSON.stringify(id).slice(0, 60)}`, { values: [{ id, name: 'Taken over' }] }];
      for (const id of WRONG_TYPES.filter((v) => v !== null)) yield [`id ${JSON.stringify(id)}`, { values: [{ id, name: 'Taken over' }] }];
    },
  },
  {
    name: 'get record', method: 'GET', path: (s, id) => `/api/v1/org/objects/${seg(s)}/record/${seg(id)}`, slugInPath: true, idInPath: true, writes: false,
    badBodies: () => [],
  },
  {
    name: 'update record', method: 'PUT', path: (s, id) => `/api/v1/org/objects/${seg(s)}/record/${seg(id)}`, slugInPath: true, idInPath: true, writes: true,
    body: () => ({ name: 'Renamed by bad input' }),
    badBodies: function* () {
      for (const v of [...WRONG_TYPES.filter((v) => !(typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)), 'x', [{ name: 'x' }]]) yield [`body ${JSON.stringify(v)}`, v];
      yield ['deep body', deepObjectText(5000)];
      // A patch need not name the required columns.
      for (const [label, r] of badRecords()) if (label !== 'required name missing') yield [label, r];
    },
  },
  {
    name: 'filter', method: 'POST', path: (s) => `/api/v1/org/objects/${seg(s)}/filter`, slugInPath: true, idInPath: false, writes: false,
    body: filterBody,
    badBodies: function* () {
      const b = filterBody();
      for (const v of [...WRONG_TYPES, 'x']) yield [`body ${JSON.stringify(v)}`, v];
      yield* at(b, [['query']], [null, 1, 'x', [], true], 'query');
      yield* at(b, [['query', 'fields']], ['id', 1, {}, [1], [null], [[]], Array.from({ length: 100_000 }, (_, i) => `f${i}`)], 'fields');
      yield* at(b, [['query', 'fields', 0], ['query', 'filters', 'and', 0, 'field'], ['query', 'filters', 'and', 0, 'operator'], ['query', 'sort', 0, 'field'], ['query', 'sort', 0, 'direction']], [...PAYLOADS, ...ODD_STRINGS], 'string');
      yield* at(b, [['query', 'filters', 'and', 0, 'field'], ['query', 'filters', 'and', 0, 'operator'], ['query', 'sort', 0, 'field'], ['query', 'sort', 0, 'direction']], [null, 1, true, {}, []], 'type');
      yield* at(b, [['query', 'filters']], ['x', [], { and: 'x' }, { and: [1] }, { or: [null] }, { and: [{}] }, { nand: [] }], 'filters');
      yield* at(b, [['query', 'filters', 'and', 0, 'value']], [{}, { $gt: 1 }, deepObject(200)], 'value');
      // An and/or tree far deeper than any limit, as text: JSON.stringify cannot nest that deep.
      yield ['conditions nested 5000 deep', `{"query":{"filters":${'{"and":['.repeat(5000)}{"field":"name","operator":"eq","value":"a"}${']}'.repeat(5000)}}}`];
      yield ['100,000 conditions', { query: { filters: { or: Array.from({ length: 100_000 }, () => ({ field: 'name', operator: 'eq', value: 'a' })) } } }];
      yield* at(b, [['query', 'sort']], ['name', [{}], [{ field: 'name', direction: 'sideways' }], Array.from({ length: 10_000 }, () => ({ field: 'name', direction: 'asc' }))], 'sort');
      yield* at(b, [['query', 'pagination', 'page'], ['query', 'pagination', 'page_size']], [0, -1, 1.5, '1', true, [], {}], 'pagination');
      yield* at(b, [['query', 'pagination', 'page_size']], [1_000_000, 1e20], 'pagination');
      yield* at(b, [['query', 'pagination']], ['x', 1, []], 'pagination');
    },
  },
  {
    name: 'report execute', method: 'POST', path: () => '/api/v1/reports/execute', slugInPath: false, idInPath: false, writes: false,
    body: reportBody,
    badBodies: function* () {
      for (const v of [...WRONG_TYPES, 'x']) yield [`body ${JSON.stringify(v)}`, v];
      yield* at(reportBody(), [['query'], ['slug']], [null, 1, true, {}, [], deepArray(3000), ...PAYLOADS, ...ODD_STRINGS], 'field');
      yield ['a query that deletes', { query: 'DELETE FROM account', slug: 'account' }];
      yield ['a second statement', { query: 'SELECT id FROM account LIMIT 1; DROP TABLE account', slug: 'account' }];
      yield ['a NUL in a literal', { query: "SELECT id FROM account WHERE name = 'a\u0000b' LIMIT 1", slug: 'account' }, 'lenient'];
      yield ['a lone surrogate in a literal', { query: "SELECT id FROM account WHERE name = '\ud800' LIMIT 1", slug: 'account' }, 'lenient'];
      yield ['invalid UTF-8 in the slug', Buffer.concat([Buffer.from('{"query":"SELECT id FROM account LIMIT 1","slug":"acc'), Buffer.from([0xff, 0xfe]), Buffer.from('ount"}')])];
      yield ['a query nested 5000 deep', { query: `SELECT id FROM account WHERE ${'('.repeat(5000)}1 = 1${')'.repeat(5000)} LIMIT 1`, slug: 'account' }];
    },
  },
  {
    name: 'report count', method: 'POST', path: () => '/api/v1/reports/count', slugInPath: false, idInPath: false, writes: false,
    body: reportBody,
    badBodies: function* () {
      for (const v of [...WRONG_TYPES, 'x']) yield [`body ${JSON.stringify(v)}`, v];
      yield* at(reportBody(), [['query'], ['slug']], [null, 1, {}, [], ...PAYLOADS, ...ODD_STRINGS], 'field');
      yield ['a NUL in a literal', { query: "SELECT id FROM account WHERE name = 'a\u0000b' LIMIT 1", slug: 'account' }, 'lenient'];
    },
  },
  {
    name: 'flowconnector records', method: 'POST', path: (s) => `/api/v1/flowconnector/objects/${seg(s)}/records`, slugInPath: true, idInPath: false, writes: false,
    body: connectorBody,
    badBodies: function* () {
      const b = connectorBody();
      for (const v of [...WRONG_TYPES, 'x']) yield [`body ${JSON.stringify(v)}`, v];
      yield* at(b, [['query']], [null, 1, 'x', [], {}], 'query');
      yield* at(b, [['query', 'fields']], [null, 'id', 1, {}, [1], Array.from({ length: 100_000 }, (_, i) => `f${i}`)], 'fields');
      yield* at(b, [['query', 'fields', 0], ['query', 'filter', 'and', 0, 'field'], ['query', 'filter', 'and', 0, 'operator'], ['next_token']], [...PAYLOADS, ...ODD_STRINGS.filter((s) => s !== '')], 'string');
      yield* at(b, [['query', 'filter']], ['x', [], { and: 'x' }, { and: [1] }, { and: [{}] }, { and: [{ field: 'updated_at', operator: 'gte' }] }], 'filter');
      yield* at(b, [['next_token']], [1, true, {}, []], 'next_token');
    },
  },
  {
    name: 'flowconnector entities', method: 'POST', path: () => '/api/v1/flowconnector/objects/list/', slugInPath: false, idInPath: false, writes: false,
    badBodies: () => [],
  },
  {
    name: 'flowconnector entity schema', method: 'GET', path: (s) => `/api/v1/flowconnector/objects/${seg(s)}`, slugInPath: true, idInPath: false, writes: false,
    badBodies: () => [],
  },
  {
    name: 'syncconnector entities', method: 'POST', path: () => '/api/v1/syncconnector/objects/list/', slugInPath: false, idInPath: false, writes: false,
    badBodies: () => [],
  },
  {
    name: 'syncconnector entity schema', method: 'GET', path: (s) => `/api/v1/syncconnector/objects/${seg(s)}`, slugInPath: true, idInPath: false, writes: false,
    badBodies: () => [],
  },
  {
    name: 'tool logs', method: 'POST', path: () => '/api/v1/org/tool/mcp/logs/list/', slugInPath: false, idInPath: false, writes: false,
    body: () => ({}),
    badBodies: function* () {
      for (const v of [true, false, 0, 1.5, [], [null], 'x']) yield [`body ${JSON.stringify(v)}`, v];
      yield* at({}, [['pointer']], [1, true, {}, [], deepArray(3000), ...PAYLOADS, ...ODD_STRINGS.filter((s) => s !== '')], 'pointer');
      yield* at({}, [['tool_name'], ['user_id']], [null, 1, true, {}, [], '', 'x'.repeat(201)], 'filter');
      // Past 2^53 (and Postgres's int8): refused before any statement.
      yield* at({}, [['since'], ['until']], [null, 'x', '1700000000000', true, {}, [], -1, 1.5, 2 ** 64, 1e308], 'time');
    },
  },
  // Beyond the contract: the keys and lint endpoints the console uses, held to the same rules.
  {
    name: 'lint', method: 'POST', path: () => '/api/v1/reports/lint', slugInPath: false, idInPath: false, writes: false,
    body: () => ({ query: 'SELECT id FROM account LIMIT 5' }),
    badBodies: function* () {
      for (const v of WRONG_TYPES.filter((v) => v !== null)) yield [`body ${JSON.stringify(v)}`, v];
      yield* at({}, [['query']], [null, 1, true, {}, [], 'x'.repeat(100_001)], 'query');
      yield* at({ query: 'SELECT id FROM account LIMIT 5' }, [['slug']], [null, 1, {}, [], '', 'x'.repeat(201)], 'slug');
      yield* at({ query: 'SELECT id FROM account LIMIT 5' }, [['text']], ['SELECT 1'], 'unknown field');
    },
  },
  {
    name: 'API keys list', method: 'GET', path: () => '/api/v1/keys', slugInPath: false, idInPath: false, writes: false,
    badBodies: () => [],
  },
  {
    name: 'API key create', method: 'POST', path: () => '/api/v1/keys', slugInPath: false, idInPath: false, writes: true,
    body: () => ({ name: 'Bad input key', role: 'member' }),
    badBodies: function* () {
      const good = { name: 'Bad input key', role: 'member' };
      for (const v of WRONG_TYPES) yield [`body ${JSON.stringify(v)}`, v];
      // Names the document refuses: blank, over 100 characters, or with a control character.
      yield* at(good, [['name']], [null, 1, true, {}, [], '', ' ', '   ', 'a\u0000b', 'a\nb', 'a\u007fb', 'x'.repeat(101), 'x'.repeat(100_000)], 'name');
      yield* at(good, [['role']], [null, 1, '', 'owner', 'ADMIN', 'member ', ...PAYLOADS], 'role');
      yield* at(good, [['expires_at']], ['x', '2030-01-01', true, {}, -1, 1.5, 1, Date.now() - 1, 2 ** 64], 'expires_at');
      // User ids outside the documented rule (1 to 128 letters, digits, '_', '.' or '-').
      const badUserIds = [...PAYLOADS, ...ODD_STRINGS].filter((u) => !/^[A-Za-z0-9_.-]{1,128}$/.test(u));
      yield* at(good, [['user_id']], [null, 1, {}, [], 'u'.repeat(129), ...badUserIds], 'user_id');
      yield* at(good, [['org_id']], ['org_globex'], 'unknown field');
    },
  },
  {
    name: 'API key roll', method: 'POST', path: (_s, id) => `/api/v1/keys/${seg(id)}/roll`, slugInPath: false, idInPath: true, writes: true,
    badBodies: () => [],
  },
  {
    name: 'API key revoke', method: 'POST', path: (_s, id) => `/api/v1/keys/${seg(id)}/revoke`, slugInPath: false, idInPath: true, writes: true,
    badBodies: () => [],
  },
];

/** Malformed JSON text and prototype keys: refused by the parser of every endpoint that reads a body. */
const MALFORMED: readonly [string, string][] = [
  ['truncated object', '{"query": '],
  ['truncated array', '['],
  ['bare word', 'nul'],
  ['single quotes', "{'a': 1}"],
  ['trailing comma', '{"a": 1,}'],
  ['two documents', '{} {}'],
  ['a comment', '{/* c */}'],
  ['NaN', '{"a": NaN}'],
  ['unterminated string', '{"a": "b}'],
  ['control character in a string', '{"a": "b\u0001c"}'],
  ['bad escape', '{"a": "\\x41"}'],
  ['__proto__ key', '{"__proto__": {"admin": true}}'],
  ['nested __proto__ key', '{"query": {"__proto__": {"admin": true}}, "values": [{"__proto__": {"x": 1}}]}'],
  ['constructor key', '{"constructor": {"prototype": {"admin": true}}}'],
  ['__proto__ in an array element', '[{"name": "x", "__proto__": {"admin": true}}]'],
  ['unbalanced nesting 100,000 deep', '['.repeat(100_000)],
];

const CONTENT_TYPES: readonly string[] = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/octet-stream',
  'text/json',
  'application/jsonp',
];

/** Text a Postgres error carries; none of it may reach a client. */
const POSTGRES_TEXT = /syntax error at or near|invalid input syntax for|violates (unique|foreign key|not-null|check) constraint|current transaction is aborted|unterminated quoted|operator does not exist|function \S+ does not exist|value too long for type|out of range for type|invalid byte sequence|unsupported Unicode escape|null value in column|relation "[^"]+" does not exist|column "[^"]+" does not exist|at character \d+/i;
const STACK_TEXT = /\bat .+:\d+:\d+\)?|node_modules|\.ts:\d+|\.js:\d+|Error: .*\n\s+at /;

/** What is wrong with an answer to bad input, or null when it is right. */
function problemWith(a: Answer, judge: Case['judge']): string | null {
  if (STACK_TEXT.test(a.text)) return 'a stack trace leaked';
  if (POSTGRES_TEXT.test(a.text)) return 'a Postgres message leaked';
  if (judge === 'upsert' && a.status === 200) {
    const d = a.json?.data;
    if (a.json?.success !== true) return '200 without success: true';
    if (d?.records_created !== 0 || d?.records_updated !== 0) return `upsert wrote: created ${d?.records_created}, updated ${d?.records_updated}`;
    if (!Array.isArray(d.records) || d.records.length === 0 || !d.records.every((r: { action?: string }) => r.action === 'FAILED')) return 'an element not FAILED';
    if (!Array.isArray(d.failed_records) || d.failed_records.length !== d.records.length) return 'failed_records does not list every element';
    if (d.created_records !== null || d.updated_records !== null) return 'created_records or updated_records not null';
    return null;
  }
  if (judge === 'lenient' && a.status === 200) return a.json?.success === true ? null : '200 without success: true';
  if (a.status < 400 || a.status > 499) return `status ${a.status}`;
  const j = a.json;
  if (j === undefined) return 'not JSON';
  if (j.success !== false) return 'success is not false';
  const d = j.data ?? {};
  const missing = ['message', 'status_code', 'error_code', 'validation_errors', 'meta_data'].filter((k) => !(k in d));
  if (missing.length > 0) return `envelope without ${missing.join(', ')}`;
  if (d.status_code !== a.status) return `data.status_code ${d.status_code}`;
  if (typeof d.error_code !== 'string' || !/^[A-Z_]+$/.test(d.error_code)) return `error_code ${JSON.stringify(d.error_code)}`;
  if (typeof d.message !== 'string' || d.message.length === 0) return 'no message';
  if (d.message.length > 2000) return 'a message of more than 2000 characters (echoing the input?)';
  if (d.validation_errors !== null && !Array.isArray(d.validation_errors)) return 'validation_errors neither list nor null';
  if (d.meta_data !== null && typeof d.meta_data !== 'string') return 'meta_data neither string nor null';
  return null;
}

let service: CrmService;
let pglite: PGlite;
let api: Running;
const routed = new Map<string, boolean>();
let documented: DocumentCheck;

/**
 * A digest of every table of both schemas: any insert, update or delete changes it. Except a
 * key's last_used_at, which authentication notes (at most once a minute) whatever the request
 * holds: the first call with another organization's key, or a suite running past a minute, would
 * otherwise count as a write of bad input.
 */
async function snapshot(): Promise<Map<string, string>> {
  const { rows: tables } = await pglite.query<{ s: string; t: string }>(
    "SELECT schemaname AS s, tablename AS t FROM pg_tables WHERE schemaname IN ('public', 'oql_service') ORDER BY 1, 2",
  );
  const out = new Map<string, string>();
  for (const { s, t } of tables) {
    const q = `"${s.replace(/"/g, '""')}"."${t.replace(/"/g, '""')}"`;
    const { rows } = await pglite.query<{ n: number; d: string }>(`SELECT count(*)::int AS n, md5(coalesce(string_agg((to_jsonb(x) - 'last_used_at')::text, '|' ORDER BY (to_jsonb(x) - 'last_used_at')::text), '')) AS d FROM ${q} x`);
    out.set(`${s}.${t}`, `${rows[0]!.n} rows, ${rows[0]!.d}`);
  }
  return out;
}

/** One case over HTTP: bodies as JSON, or as the text or bytes given. */
function send(c: Case): Promise<Answer> {
  const key = c.key === undefined ? KEY : c.key;
  return api.call(c.method, c.path, { ...(key === null ? {} : { key }), body: c.body, ...(c.headers ? { headers: c.headers } : {}) });
}

/** Why an answer is not one /openapi.json documents for the operation the request names, or null. */
function undocumented(c: Case, answer: Answer): string | null {
  const template = documented.templateOf(c.method, c.path);
  if (template === undefined) return null;
  try {
    documented.check(c.method, template, answer.status, answer.headers, answer.json);
    return null;
  } catch (e) {
    return (e as Error).message.split('\n')[0]!;
  }
}

/** Sends the cases, a few at a time, and returns every wrong answer. */
async function runCases(cases: Iterable<Case>): Promise<string[]> {
  const failures: string[] = [];
  const queue = [...cases];
  const worker = async () => {
    for (let c = queue.shift(); c !== undefined; c = queue.shift()) {
      let answer: Answer;
      try {
        answer = await send(c);
      } catch (e) {
        failures.push(`${c.label}: the request failed (${(e as Error).message})`);
        continue;
      }
      const problem = problemWith(answer, c.judge) ?? undocumented(c, answer);
      if (problem !== null) failures.push(`${c.label}: ${problem}; body ${answer.text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return failures;
}

beforeAll(async () => {
  service = await crmServiceOnPglite();
  ({ pglite, api } = service);
  documented = new DocumentCheck((await api.call('GET', '/openapi.json')).json as OpenApiDocument);
  // An endpoint is routed when the router does not answer ROUTE_NOT_FOUND for it.
  for (const e of ENDPOINTS) {
    // Without a body, so that no probe writes anything.
    const a = await api.call(e.method, e.path('account', ownAccount), { key: KEY });
    routed.set(e.name, a.json?.data?.error_code !== 'ROUTE_NOT_FOUND');
  }
}, 120_000);

afterAll(async () => {
  await service?.close();
});

describe.each(ENDPOINTS.map((e) => [e.name, e] as const))('%s', (_name, e) => {
  const casesOf = (): Case[] => {
    const cases: Case[] = [];
    const base = { method: e.method, judge: e.judge ?? 'client_error' } as const;
    const goodPath = e.path('account', ownAccount);
    const goodBody = e.body?.();
    if (e.method !== 'GET') {
      for (const [label, text] of MALFORMED) cases.push({ ...base, label: `malformed JSON: ${label}`, path: goodPath, body: text, judge: 'client_error' });
      for (const type of CONTENT_TYPES) {
        cases.push({ ...base, label: `content type ${type}`, path: goodPath, body: goodBody === undefined ? 'a=1' : JSON.stringify(goodBody), headers: { 'content-type': type }, judge: 'client_error' });
      }
    }
    for (const [label, body, judge] of e.badBodies()) cases.push({ ...base, label, path: goodPath, body, ...(judge ? { judge } : {}) });
    // Path segments: every payload and odd string as the slug, and as the record id.
    const segments = [...PAYLOADS, ...ODD_STRINGS.filter((s) => s !== '' && s !== 'x'.repeat(100_000)), 'x'.repeat(4000), 'ACCOUNT', 'accounts'];
    if (e.slugInPath) for (const s of segments) cases.push({ ...base, label: `slug ${JSON.stringify(s).slice(0, 60)}`, path: e.path(s, ownAccount), body: goodBody, judge: 'client_error' });
    if (e.idInPath) {
      for (const id of [...segments, otherAccount, 'acc_does_not_exist']) {
        cases.push({ ...base, label: `id ${JSON.stringify(id).slice(0, 60)}`, path: e.path('account', id), body: goodBody, judge: 'client_error' });
      }
    }
    // Without a key, and with another organization's key on this organization's record.
    cases.push({ ...base, label: 'no key', path: goodPath, body: goodBody, key: null, judge: 'client_error' });
    if (e.idInPath) cases.push({ ...base, label: "another organization's key", path: goodPath, body: goodBody, key: KEYS.globexAdmin, judge: 'client_error' });
    return cases;
  };

  it('answers every bad request with a 4xx envelope and writes nothing', async (ctx) => {
    if (!routed.get(e.name)) ctx.skip();
    const before = await snapshot();
    const cases = casesOf();
    const failures = await runCases(cases);
    if (process.env['OQL_BAD_INPUT_DUMP']) writeFileSync(`${process.env['OQL_BAD_INPUT_DUMP']}-${e.name.replace(/\W+/g, '_')}.txt`, failures.join('\n'));
    expect(failures, `${failures.length} of ${cases.length} answers were wrong`).toEqual([]);
    const after = await snapshot();
    expect(Object.fromEntries(after)).toEqual(Object.fromEntries(before));
    expect((await api.call('GET', '/health')).status).toBe(200);
  }, 300_000);
});

describe('after the whole corpus', () => {
  it('a URL longer than the header limit gets the envelope, and the server still answers /health', async () => {
    const a = await send({ label: 'long URL', method: 'GET', path: `/api/v1/org/objects/${'x'.repeat(100_000)}/` });
    expect(problemWith(a, 'client_error')).toBeNull();
    const h = await api.call('GET', '/health');
    expect(h.status).toBe(200);
    expect(h.json).toEqual({ success: true, data: { status: 'ok' } });
  });

  it('still serves a good request of each organization', async () => {
    for (const [k, org] of [[KEYS.acmeAdmin, ORG], [KEYS.globexAdmin, OTHER_ORG]] as const) {
      const a = await api.call('POST', '/api/v1/reports/count', { key: k, body: { query: 'SELECT id FROM account LIMIT 10000', slug: 'account' } });
      expect(a.json).toEqual({ success: true, data: { count: live('account', org).length } });
    }
  });
});
