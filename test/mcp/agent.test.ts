import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { KEYS, connect, jsonOf, startHarness, textOf, type Harness } from './support.js';

/**
 * An agent-shaped client: it sends the wrong queries agents actually write, reads the tool error
 * text, and corrects the query by rules that only read that text (the Fix edits, "did you mean",
 * "write …" and "use EXISTS …" hints) — no knowledge of the dialect of its own. The second call
 * must return the rows worked out by hand from the harness's records.
 */

let h: Harness;
let agent: Client;

beforeAll(async () => {
  h = await startHarness();
  agent = await connect(h.endpoint('acme'), KEYS.acmeAdmin);
}, 180_000);

afterAll(async () => {
  await agent?.close();
  await h?.close();
});

interface Problem {
  readonly line: number;
  readonly column: number;
  readonly near: string;
  readonly text: string;
}

/** The problem lines of a tool error. */
function problems(text: string): Problem[] {
  return text.split('\n').filter((l) => l.startsWith('- ERROR ')).map((l) => {
    const m = /^- ERROR [A-Z_]+(?: at (\d+):(\d+))?(?: near "((?:[^"]|"(?! ?[:(]))*)")?/.exec(l);
    return { line: Number(m?.[1] ?? 1), column: Number(m?.[2] ?? 1), near: m?.[3] ?? '', text: l };
  });
}

/** Offset of a 1-based line:column in a one-line query. */
const offset = (column: number) => column - 1;

interface Edit { from: number; to: number; text: string }

/** The edit one problem line asks for, read from the text alone. */
function editFor(query: string, p: Problem): Edit {
  const fix = /Fix: (?:insert "(.*)" at \d+:(\d+)|replace "(.*)" at \d+:(\d+) with "(.*)")\.$/.exec(p.text);
  if (fix) {
    if (fix[1] !== undefined) return { from: offset(Number(fix[2])), to: offset(Number(fix[2])), text: fix[1] };
    const from = offset(Number(fix[4]));
    return { from, to: from + fix[3]!.length, text: fix[5]! };
  }
  const at = offset(p.column);
  const meant = /did you mean '([^']+)'/.exec(p.text);
  if (meant) return { from: at, to: at + p.near.length, text: meant[1]! };
  const exists = /Hint: use ((?:NOT )?EXISTS \(.*\))$/.exec(p.text);
  if (exists) {
    // "<near> IN (subquery)" becomes the EXISTS form: through the parenthesis that closes the IN.
    let i = query.indexOf('(', at + p.near.length);
    let depth = 0;
    for (; i < query.length; i++) {
      if (query[i] === '(') depth++;
      else if (query[i] === ')' && --depth === 0) break;
    }
    return { from: at, to: i + 1, text: exists[1]! };
  }
  const write = /Hint: write ((\w+)\(.*\))$/.exec(p.text);
  if (write) {
    // The written form replaces the call it corrects: from that function's name through the offending text.
    const from = query.toLowerCase().lastIndexOf(`${write[2]!.toLowerCase()}(`, at);
    return { from, to: at + p.near.length, text: write[1]! };
  }
  throw new Error(`no rule applies to: ${p.text}`);
}

function corrected(query: string, errorText: string): string {
  const edits = problems(errorText).map((p) => editFor(query, p)).sort((a, b) => b.from - a.from);
  expect(edits.length).toBeGreaterThan(0);
  let out = query;
  for (const e of edits) out = out.slice(0, e.from) + e.text + out.slice(e.to);
  return out;
}

const CASES: { name: string; query: string; slug: string; rows: Record<string, unknown>[] }[] = [
  {
    name: 'missing LIMIT',
    query: "SELECT name FROM opportunity WHERE stage = 'proposal' ORDER BY name",
    slug: 'opportunity',
    rows: [{ name: 'Acme big deal' }],
  },
  {
    name: 'aggregate without an alias',
    query: 'SELECT stage, COUNT(*) FROM opportunity GROUP BY stage ORDER BY stage LIMIT 10',
    slug: 'opportunity',
    rows: [{ stage: 'proposal', count: 1 }, { stage: 'prospecting', count: 1 }],
  },
  {
    name: 'a date string compared with an epoch column',
    query: "SELECT name FROM opportunity WHERE close_date >= '2024-02-01' ORDER BY name LIMIT 10",
    slug: 'opportunity',
    rows: [{ name: 'Acme small deal' }],
  },
  {
    name: 'IN (subquery) on a one-to-many relation',
    query: "SELECT name FROM account acc WHERE contacts IN (SELECT id FROM contact WHERE status = 'bounced') ORDER BY name LIMIT 10",
    slug: 'account',
    rows: [{ name: 'Acme Retail' }],
  },
  {
    name: 'a misspelt column',
    query: 'SELECT name, amout FROM opportunity ORDER BY name LIMIT 10',
    slug: 'opportunity',
    rows: [{ name: 'Acme big deal', amount: 500000 }, { name: 'Acme small deal', amount: 1000 }],
  },
  {
    name: 'an aggregate FILTER clause',
    query: "SELECT COUNT(*) FILTER (WHERE stage = 'proposal') AS n FROM opportunity LIMIT 1",
    slug: 'opportunity',
    rows: [{ n: 1 }],
  },
  {
    name: 'a plural object name',
    query: 'SELECT name FROM opportunities ORDER BY name LIMIT 1',
    slug: 'opportunity',
    rows: [{ name: 'Acme big deal' }],
  },
  {
    name: 'several mistakes at once',
    query: "SELECT stage, COUNT(*) FROM opportunity WHERE close_date < '2024-02-01' GROUP BY stage",
    slug: 'opportunity',
    rows: [{ stage: 'proposal', count: 1 }],
  },
];

describe('an agent corrects its queries from the tool errors alone', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const first = await agent.callTool({ name: 'execute_query', arguments: { query: c.query, slug: c.slug } });
      expect(first.isError, textOf(first)).toBe(true);
      const second = corrected(c.query, textOf(first));
      const result = await agent.callTool({ name: 'execute_query', arguments: { query: second, slug: c.slug } });
      expect(result.isError, `${second}\n${textOf(result)}`).toBeFalsy();
      const { records } = jsonOf(result);
      expect(records.map((r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v]))))
        .toEqual(c.rows);
    });
  }
});
