import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GRAMMAR_FILES, grammarEbnf, grammarHtml, serializedGrammar } from '../../scripts/grammar-gen.js';

const root = new URL('../../', import.meta.url);
const committed = (path: string) => readFileSync(new URL(path, root), 'utf8');

/** The first line where two texts differ, for a readable failure. */
function firstDifference(a: string, b: string): string {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] !== y[i]) return `line ${i + 1}:\n  committed: ${x[i] ?? '<end of file>'}\n  generated: ${y[i] ?? '<end of file>'}`;
  }
  return 'no difference';
}

describe('the committed grammar matches the parser', () => {
  it.each([
    [GRAMMAR_FILES.ebnf, grammarEbnf],
    [GRAMMAR_FILES.html, grammarHtml],
  ] as const)('%s is up to date', (path, generate) => {
    const expected = generate();
    const actual = committed(path);
    if (actual !== expected) {
      throw new Error(`${path} is out of date: run npm run grammar\n${firstDifference(actual, expected)}`);
    }
  });
});

describe('the EBNF', () => {
  const ebnf = grammarEbnf();
  const body = ebnf.slice(ebnf.indexOf('*/') + 2).replace(/\/\*[\s\S]*?\*\//g, '');
  const productions = [...body.matchAll(/^(\w+)\s+::=/gm)].map((m) => m[1]!);

  it('has one production per parser rule', () => {
    const rules = serializedGrammar().map((r) => r.name);
    expect(productions.slice(0, rules.length)).toEqual(rules);
  });

  it('defines every name it uses, in a production or among the lexical rules', () => {
    const header = ebnf.slice(0, ebnf.indexOf('*/'));
    const lexical = [...header.matchAll(/^ \*   (\w+)\s/gm)].map((m) => m[1]!);
    expect(lexical).toEqual(expect.arrayContaining(['Identifier', 'QuotedIdentifier', 'StringLiteral', 'NumberLiteral']));
    const used = new Set(
      body
        .split(/^\w+\s+::=/m)
        .join(' ')
        .replace(/'[^']*'|"[^"]*"/g, ' ')
        .match(/[A-Za-z_]\w*/g),
    );
    const defined = new Set([...productions, ...lexical]);
    expect([...used].filter((name) => !defined.has(name))).toEqual([]);
  });

  it('writes fixed tokens as their text and keeps comments closed', () => {
    expect(ebnf).toMatch(/^selectStatement\s+::= 'SELECT'/m);
    expect(ebnf).toContain("'::'");
    expect(ebnf).not.toMatch(/\bLParen\b|\bSemicolon\b/);
    // Exactly one comment closer per comment opener: no stray */ inside the header.
    expect(ebnf.match(/\/\*/g)?.length).toBe(ebnf.match(/\*\//g)?.length);
  });

  it('keeps lines within 100 columns', () => {
    expect(ebnf.split('\n').filter((l) => l.length > 100)).toEqual([]);
  });
});

describe('the railroad diagrams', () => {
  it('embed every parser rule', () => {
    const html = grammarHtml();
    for (const rule of serializedGrammar()) expect(html).toContain(`"name": "${rule.name}"`);
  });
});
