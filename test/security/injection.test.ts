import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, compileCount, type CompiledQuery } from '../../src/compile.js';
import type { Catalog } from '../../src/catalog/types.js';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import type { FixtureName } from '../../fixtures/index.js';
import { checkSqlStructure, loadSqlParser } from '../fuzz/sql-structure.js';
import { openTestDb, SOLO_TENANT, tableCounts, type TestDb } from '../props/harness.js';

/**
 * SQL injection: every payload of every list in ./payloads (from PayloadsAllTheThings, see its README)
 * placed into every position of real report queries. Each attempt must be rejected with an
 * OqlError, or compile so that:
 * - the SQL passes the structural rules (one SELECT, guarded catalog tables only, whitelisted
 *   functions only, no string constants: test/fuzz/sql-structure.ts);
 * - the payload text is not in the SQL (unless the compiler writes that text anyway), and a
 *   payload written inside a string literal is in a bind parameter;
 * - run on PGlite with several tenants, it returns no other tenant's rows (the same rows as on a
 *   database holding only the caller's tenant, or no other tenant's ids where the result was cut
 *   by LIMIT) and writes nothing (row counts of every table unchanged).
 */

const PAYLOAD_DIR = new URL('./payloads/', import.meta.url);

interface Payloads {
  readonly files: string[];
  readonly lines: number;
  readonly unique: string[];
}

function readPayloads(): Payloads {
  const dir = fileURLToPath(PAYLOAD_DIR);
  if (!existsSync(dir)) throw new Error(`payload lists not found at ${dir} (test/security/payloads is part of the repository)`);
  const files = readdirSync(dir).filter((f) => f.endsWith('.txt')).sort();
  if (files.length === 0) throw new Error(`no payload lists (*.txt) in ${dir}`);
  const seen = new Set<string>();
  let lines = 0;
  for (const f of files) {
    for (const raw of readFileSync(new URL(f, PAYLOAD_DIR), 'utf8').split('\n')) {
      const line = raw.replace(/\r$/, '');
      if (line.trim() === '' || /^# /.test(line)) continue; // blank lines and list comments
      lines++;
      seen.add(line);
    }
  }
  return { files, lines, unique: [...seen] };
}

// ---------------------------------------------------------------- positions

interface Position {
  readonly fixture: FixtureName;
  readonly name: string;
  /** Builds the query text (and the request slug) for a payload. */
  readonly build: (payload: string) => { text: string; slug: string };
  /** The payload sits escaped inside a string literal: it must come out as (part of) a parameter. */
  readonly inString?: boolean;
}

const esc = (p: string): string => p.replace(/'/g, "''");

/** Six real report queries; `§` marks the string literal a payload goes into. */
const REPORTS: readonly { fixture: FixtureName; slug: string; name: string; text: string }[] = [
  { fixture: 'crm', slug: 'account', name: 'accounts by industry', text: "SELECT id, name, owner.name AS owner_name FROM account WHERE industry = '§' ORDER BY name LIMIT 50" },
  {
    fixture: 'crm',
    slug: 'opportunity',
    name: 'pipeline by stage',
    text: "SELECT stage, count(*) AS deals, sum(amount) AS total FROM opportunity WHERE name ILIKE '%§%' AND close_date >= 1704067200000 GROUP BY stage HAVING count(*) > 0 ORDER BY total DESC LIMIT 20",
  },
  { fixture: 'crm', slug: 'account', name: 'accounts with a matching contact', text: "SELECT id, name FROM account a WHERE EXISTS (SELECT 1 FROM contact c WHERE c.account = a.id AND c.email ILIKE '§') ORDER BY id LIMIT 100" },
  { fixture: 'crm', slug: 'account', name: 'accounts by contact status', text: "SELECT COUNT(DISTINCT id) AS accounts FROM account WHERE contacts.status = '§' OR name = '§' LIMIT 1" },
  {
    fixture: 'helpdesk',
    slug: 'ticket',
    name: 'open outages by priority',
    text: "SELECT priority, count(*) AS tickets FROM ticket WHERE status IN ('open', '§') AND labels && ARRAY['outage', '§'] GROUP BY priority ORDER BY tickets DESC LIMIT 10",
  },
  {
    fixture: 'helpdesk',
    slug: 'ticket',
    name: 'tickets per day for a customer',
    text: "SELECT date_trunc('day', to_timestamp(opened_at / 1000) AT TIME ZONE 'Asia/Kolkata') AS day, count(*) AS n FROM ticket WHERE customer.name ILIKE '§' OR subject = concat('§', '') GROUP BY 1 ORDER BY 1 LIMIT 30",
  },
];

/** Identifier and clause positions, on one object of each fixture. */
const SKELETONS: Record<FixtureName, { object: string; column: string; relation: string; child: string; via: string }> = {
  crm: { object: 'account', column: 'name', relation: 'owner', child: 'contact', via: 'account' },
  helpdesk: { object: 'ticket', column: 'subject', relation: 'customer', child: 'ticket_comment', via: 'ticket' },
};

function positions(): Position[] {
  const out: Position[] = [];
  for (const r of REPORTS) {
    const base = r.text.replace(/§/g, 'x');
    out.push({ fixture: r.fixture, name: `${r.name}: string literal ('' escaped)`, inString: true, build: (p) => ({ text: r.text.replace(/§/g, esc(p)), slug: r.slug }) });
    out.push({ fixture: r.fixture, name: `${r.name}: string literal (raw)`, build: (p) => ({ text: r.text.replace(/§/g, p), slug: r.slug }) });
    out.push({ fixture: r.fixture, name: `${r.name}: appended`, build: (p) => ({ text: `${base} ${p}`, slug: r.slug }) });
    out.push({ fixture: r.fixture, name: `${r.name}: appended without space`, build: (p) => ({ text: `${base}${p}`, slug: r.slug }) });
    out.push({ fixture: r.fixture, name: `${r.name}: slug option`, build: (p) => ({ text: base, slug: p }) });
  }
  for (const fixture of ['crm', 'helpdesk'] as const) {
    const { object: o, column: c, relation: rel, child, via } = SKELETONS[fixture];
    const add = (name: string, text: (p: string) => string): void => {
      out.push({ fixture, name: `${o}: ${name}`, build: (p) => ({ text: text(p), slug: o }) });
    };
    add('column', (p) => `SELECT id, ${p} FROM ${o} LIMIT 50`);
    add('alias', (p) => `SELECT ${c} AS ${p} FROM ${o} LIMIT 50`);
    add('dot path segment', (p) => `SELECT ${rel}.${p} FROM ${o} LIMIT 50`);
    add('function name', (p) => `SELECT ${p}(${c}) AS v FROM ${o} LIMIT 50`);
    add('FROM object', (p) => `SELECT id FROM ${p} LIMIT 50`);
    add('after WHERE', (p) => `SELECT id, ${c} FROM ${o} WHERE ${p} LIMIT 50`);
    add('after WHERE ... AND', (p) => `SELECT id FROM ${o} WHERE ${c} IS NOT NULL AND ${p} LIMIT 50`);
    add('after LIMIT', (p) => `SELECT id FROM ${o} LIMIT ${p}`);
    add('after ORDER BY', (p) => `SELECT id FROM ${o} ORDER BY ${p} LIMIT 50`);
    add('after HAVING', (p) => `SELECT ${c}, count(*) AS n FROM ${o} GROUP BY ${c} HAVING ${p} LIMIT 50`);
    add('inside a subquery (predicate)', (p) => `SELECT id FROM ${o} x WHERE EXISTS (SELECT 1 FROM ${child} y WHERE y.${via} = x.id AND ${p}) LIMIT 50`);
    add("inside a subquery (string literal, '' escaped)", (p) => `SELECT id FROM ${o} x WHERE x.id IN (SELECT y.${via} FROM ${child} y WHERE y.id = '${esc(p)}') LIMIT 50`);
    add('inside a subquery (FROM object)', (p) => `SELECT id FROM ${o} x WHERE EXISTS (SELECT 1 FROM ${p} WHERE TRUE) LIMIT 50`);
  }
  return out;
}

// ---------------------------------------------------------------- the run

let t: TestDb;
let payloads: Payloads;

beforeAll(async () => {
  payloads = readPayloads();
  await loadSqlParser();
  t = await openTestDb({ solo: true });
});

afterAll(async () => {
  await t?.db.close();
});

interface Compiled {
  readonly fixture: FixtureName;
  readonly where: string;
  readonly text: string;
  readonly slug: string;
  readonly c: CompiledQuery;
}

describe('SQL injection payloads', () => {
  it('are rejected or end up only in bind parameters, and what compiles stays in its tenant and writes nothing', async () => {
    const all = positions();
    const violations: string[] = [];
    const compiled: Compiled[] = [];
    let attempts = 0;
    let rejected = 0;

    // SQL the compiler writes for the plain reports: text it writes anyway is not evidence of injection.
    const reference = REPORTS.flatMap((r) => {
      const f = t.fixtures[r.fixture];
      const text = r.text.replace(/§/g, 'x');
      const opts = { catalog: f.catalog, slug: r.slug, orgId: SOLO_TENANT[r.fixture] };
      return [(compile(text, opts) as CompiledQuery).sql, (compileCount(text, opts) as CompiledQuery).sql];
    }).join('\n');

    for (const pos of all) {
      const f = t.fixtures[pos.fixture];
      const tenant = SOLO_TENANT[pos.fixture];
      for (const payload of payloads.unique) {
        if (++attempts % 250 === 0) await new Promise((resolve) => setImmediate(resolve));
        const { text, slug } = pos.build(payload);
        const where = `${pos.name} ← ${JSON.stringify(payload)}`;
        let c;
        try {
          c = compile(text, { catalog: f.catalog, slug, orgId: tenant });
        } catch (e) {
          if (e instanceof OqlError) rejected++;
          else violations.push(`${where}: threw ${(e as Error)?.name}: ${(e as Error)?.message}`);
          continue;
        }
        if (c.kind !== 'query') {
          violations.push(`${where}: unexpected ${c.kind} result`);
          continue;
        }
        const problems = checkSqlStructure(c.sql, c.params, f.catalog).problems;
        if (problems.length) violations.push(`${where}: ${problems.join('; ')}\n    ${c.sql}`);
        if (payload.trim().length >= 2 && c.sql.includes(payload) && !reference.includes(payload)) violations.push(`${where}: the payload is in the SQL: ${c.sql}`);
        if (pos.inString && !c.params.some((v) => typeof v === 'string' && v.includes(payload))) {
          violations.push(`${where}: the string literal's payload is in no parameter: ${JSON.stringify(c.params)}`);
        }
        compiled.push({ fixture: pos.fixture, where, text, slug, c });
      }
    }

    const ran = await runAll(compiled, violations);
    const violating = new Set(violations.map((v) => v.slice(0, v.indexOf(': ', v.indexOf(' ← ')))));
    const safe = compiled.filter((x) => !violating.has(x.where)).length;
    const byPosition = new Map<string, number>();
    for (const x of compiled) {
      const name = x.where.slice(0, x.where.indexOf(' ← '));
      if (!name.includes('escaped')) byPosition.set(name, (byPosition.get(name) ?? 0) + 1);
    }
    console.log(
      `[injection] ${payloads.files.length} payload lists, ${payloads.lines} payload lines, ${payloads.unique.length} distinct payloads × ${all.length} positions\n` +
        `  attempts ${attempts}, rejected ${rejected} (OqlError), compiled-and-safe ${safe}, ` +
        `violations ${violations.length}; ${ran.statements} distinct statements run on PGlite (${ran.compared} compared with the tenant-only database, ${ran.scanned} cut by LIMIT and scanned for foreign ids)` +
        `\n  compiled outside escaped literals: ${[...byPosition].map(([k, n]) => `${k} ${n}`).join(', ')}` +
        (dataErrors.length ? `\n  ${dataErrors.length} runtime data errors (not leaks): ${dataErrors.slice(0, 3).join(' | ')}` : ''),
    );
    expect(attempts).toBe(rejected + compiled.length + violations.filter((v) => v.includes(': threw ')).length);
    expect(violations.slice(0, 20)).toEqual([]);
    expect(violations.length).toBe(0);
  }, 600_000);
});

/** Output LIMIT and OFFSET values of compiled SQL (the emitter writes `LIMIT $n::int8 [OFFSET $m::int8]` last). */
function limitOf(c: CompiledQuery): { limit: number; offset: boolean } {
  const m = /LIMIT \$(\d+)::int8(?: OFFSET \$(\d+)::int8)?$/.exec(c.sql);
  return { limit: m ? Number(c.params[Number(m[1]) - 1]) : Infinity, offset: Boolean(m?.[2]) };
}

const OTHER_TENANT = /^(org_[a-z]+)_/;

const dataErrors: string[] = [];

async function runAll(items: readonly Compiled[], violations: string[]): Promise<{ statements: number; compared: number; scanned: number }> {
  const catalogs: Catalog[] = Object.values(t.fixtures).flatMap((f) => [f.catalog, f.soloCatalog]);
  const before = await tableCounts(t.db, catalogs);
  const seen = new Set<string>();
  let statements = 0;
  let compared = 0;
  let scanned = 0;
  for (const item of items) {
    const key = `${item.c.sql}\u0000${JSON.stringify(item.c.params)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    statements++;
    const f = t.fixtures[item.fixture];
    const tenant = SOLO_TENANT[item.fixture];
    let shared: Record<string, unknown>[];
    try {
      shared = (await t.db.query<Record<string, unknown>>(item.c.sql, item.c.params)).rows;
    } catch (e) {
      // A data exception (class 22: a LIKE pattern ending in a backslash, a bad time zone) is a
      // runtime error of the user's value, not a leak; anything else means the SQL is wrong.
      const code = String((e as { code?: unknown }).code ?? '');
      if (code.startsWith('22')) dataErrors.push(`${item.where}: ${code} ${(e as Error).message}`);
      else violations.push(`${item.where}: PostgreSQL rejected the compiled SQL (${code}): ${(e as Error).message}\n    ${item.c.sql}`);
      continue;
    }
    const { limit, offset } = limitOf(item.c);
    if (shared.length < limit && !offset) {
      const solo = compile(item.text, { catalog: f.soloCatalog, slug: item.slug, orgId: tenant }) as CompiledQuery;
      const alone = (await t.db.query<Record<string, unknown>>(solo.sql, solo.params)).rows;
      const canon = (rows: Record<string, unknown>[]): string[] => rows.map((r) => JSON.stringify(r)).sort();
      if (JSON.stringify(canon(shared)) !== JSON.stringify(canon(alone))) {
        violations.push(`${item.where}: ${shared.length} rows with other tenants present, ${alone.length} without\n    ${item.text}`);
      }
      compared++;
    } else scanned++;
    // Ids of other tenants must never come back (relation columns may hold broken foreign ids: skipped).
    item.c.columns.forEach((col, i) => {
      if (col.type === 'relation') return;
      for (const row of shared) {
        const v = row[`c${i}`];
        const m = typeof v === 'string' ? OTHER_TENANT.exec(v) : null;
        if (m && !v!.toString().startsWith(`${tenant}_`) && f.tenants.includes(m[1]!)) violations.push(`${item.where}: row value ${String(v)} of another tenant in column ${col.key}`);
      }
    });
  }
  const after = await tableCounts(t.db, catalogs);
  expect(after, 'row counts of every table are unchanged after running every compiled attempt').toEqual(before);
  return { statements, compared, scanned };
}
