import { createSyntaxDiagramsCode, type ISerializedGast, type TokenType } from 'chevrotain';
import { getParser } from '../src/syntax/parse.js';
import * as T from '../src/syntax/tokens.js';

/**
 * Generates the reference grammar from the parser itself, so the documentation cannot drift
 * from the code: `grammar/oql.ebnf` (W3C EBNF) from Chevrotain's serialized grammar, and
 * `grammar/railroad.html` with Chevrotain's own railroad renderer. Pure: returns strings;
 * `scripts/grammar.ts` writes them and `test/syntax/grammar.test.ts` checks them.
 */

export const GRAMMAR_FILES = { ebnf: 'grammar/oql.ebnf', html: 'grammar/railroad.html' } as const;

/** The parts of Chevrotain's serialized productions this printer reads. */
interface Gast extends ISerializedGast {
  name?: string;
  separator?: Gast;
  definition?: Gast[];
}

export function serializedGrammar(): Gast[] {
  return getParser().getSerializedGastProductions() as Gast[];
}

export function grammarHtml(): string {
  return createSyntaxDiagramsCode(serializedGrammar());
}

const WIDTH = 100;

const TOKENS = new Map<string, TokenType>(T.allTokens.map((t) => [t.name, t]));

/**
 * Notes on what the serialized grammar cannot show (semantic gates in the parser). Keyed by rule
 * name; a note for a rule that no longer exists is dropped.
 */
const NOTES: Record<string, string> = {
  fromItem: 'an alias is never one of the words JOIN, LEFT, RIGHT, FULL, INNER, CROSS, NATURAL, OUTER, USING, LATERAL unless AS precedes it',
  typeName: 'the repeated Identifier is one of precision, varying, without',
};

const HEADER = `/*
 * OQL, the CRM data service's object query language: a read-only PostgreSQL SELECT dialect.
 * W3C EBNF notation. GENERATED from the parser (src/syntax/parser.ts) by \`npm run grammar\`;
 * do not edit by hand: test/syntax/grammar.test.ts fails when this file is out of date.
 *
 * Lexical rules
 *   keywords          case-insensitive, written here in upper case; a keyword followed by more
 *                     name characters is an Identifier (selection, order_total). Keywords in
 *                     NonReserved are also names; after AS any Keyword is a name.
 *   Identifier        [A-Za-z_] [A-Za-z0-9_$]*, folded to lower case
 *   QuotedIdentifier  '"' ( [^"] | '""' )+ '"', case kept; "" stands for one "
 *   StringLiteral     "'" ( [^'] | "''" )* "'"; '' stands for one ', no backslash escapes
 *   NumberLiteral     ( [0-9]+ ( '.' [0-9]* )? | '.' [0-9]+ ) ( [eE] [+-]? [0-9]+ )?
 *   whitespace        skipped between any two tokens
 *   comments          from -- to the end of the line, and from slash-star to star-slash (not
 *                     nested); both are skipped like whitespace
 *
 * Operator precedence, loosest first: OR; AND; NOT; IS [NOT] NULL; comparison (= <> != < <= >
 * >=, non-associative); [NOT] BETWEEN, [NOT] IN, [NOT] LIKE, [NOT] ILIKE; &&; + -; * / %;
 * AT TIME ZONE; unary + -; :: cast. Binary operators associate to the left.
 *
 * Not in this grammar: JOIN (and a comma between FROM objects), UNION, INTERSECT, EXCEPT, WITH,
 * FILTER (WHERE ...), OVER (...), subscripts x[i], bind parameters $n, and the operators ||, ~,
 * @>, <@. They are recognised from the offending token of the syntax error and reported with
 * their own codes (UNSUPPORTED_JOIN, UNSUPPORTED_SET_OPERATION, ...). The grammar accepts some
 * constructs only so that the validator can reject them at their exact span: casts other than
 * ::date, EXTRACT, CURRENT_DATE and the other date keywords.
 */`;

export function grammarEbnf(): string {
  const rules = serializedGrammar();
  const categories = new Set<string>();
  const printer = new Printer(categories);
  const productions: [name: string, alternatives: string[], note?: string][] = rules.map((rule) => [
    rule.name!,
    printer.ruleBody(rule.definition ?? []),
    NOTES[rule.name!],
  ]);
  // Token categories referenced by the rules become productions listing their member tokens.
  for (const name of [...categories].sort()) {
    const members = T.allTokens.filter((t) => t !== TOKENS.get(name) && (t.CATEGORIES ?? []).some((c) => c.name === name));
    const texts = members.flatMap((m) => literals(m) ?? [m.name]).sort();
    productions.push([name, [texts.join(' | ')], categoryNote(name)]);
  }
  const width = Math.max(...productions.map(([name]) => name.length));
  const out = [HEADER, ''];
  for (const [name, alternatives, note] of productions) {
    if (note) out.push(wrap(`/* ${note.replace(/\*\//g, '*\\/')} */`, '', '   '));
    out.push(formatRule(name, alternatives, width), '');
  }
  return out.join('\n');
}

function categoryNote(name: string): string | undefined {
  switch (name) {
    case 'Keyword':
      return 'every keyword (any of them is a name after AS)';
    case 'NonReserved':
      return 'keywords that are also names of columns, objects and functions';
    case 'ComparisonOp':
      return 'comparison operators';
    default:
      return undefined;
  }
}

/** The fixed texts a token matches (`SELECT`, `(`, `<>` and `!=`), or undefined for a pattern. */
function literals(t: TokenType): string[] | undefined {
  const p = t.PATTERN;
  if (!(p instanceof RegExp)) return undefined;
  const parts = p.source.split(/(?<!\\)\|/);
  if (!parts.every((s) => /^(?:\\[^A-Za-z0-9]|[^\\^$.|?*+()[{])+$/.test(s))) return undefined;
  return parts.map((s) => quote(s.replace(/\\(.)/g, '$1')));
}

function quote(text: string): string {
  return text.includes("'") ? `"${text}"` : `'${text}'`;
}

class Printer {
  constructor(private readonly categories: Set<string>) {}

  /** The body of a rule: its top-level alternatives, each a sequence. */
  ruleBody(definition: Gast[]): string[] {
    if (definition.length === 1 && definition[0]!.type === 'Alternation') {
      const alts = definition[0]!.definition ?? [];
      const printed = alts.map((a) => this.sequence(a.definition ?? []));
      return printed.some((p) => p === '') ? [`( ${printed.filter((p) => p !== '').join(' | ')} )?`] : printed;
    }
    return [this.sequence(definition)];
  }

  private sequence(items: Gast[]): string {
    return items.map((i) => this.node(i)).join(' ');
  }

  /** A sequence as one operand of a postfix operator: parenthesized unless it is one atom. */
  private group(items: Gast[]): string {
    const text = this.sequence(items);
    // One atom takes the operator directly; `x*` or a sequence needs parentheses first.
    const atom = items.length === 1 && items[0]!.type !== 'Alternative' && !/[?*+]$/.test(text);
    return atom ? text : `( ${text} )`;
  }

  private node(n: Gast): string {
    const items = n.definition ?? [];
    switch (n.type) {
      case 'Terminal':
        return this.terminal(n.name!);
      case 'NonTerminal':
        return n.name!;
      case 'Alternative':
        return this.sequence(items);
      case 'Alternation': {
        const alts = items.map((a) => this.sequence(a.definition ?? []));
        const nonEmpty = alts.filter((a) => a !== '');
        return `( ${nonEmpty.join(' | ')} )${nonEmpty.length < alts.length ? '?' : ''}`;
      }
      case 'Option':
        return `${this.group(items)}?`;
      case 'Repetition':
        return `${this.group(items)}*`;
      case 'RepetitionMandatory':
        return `${this.group(items)}+`;
      case 'RepetitionWithSeparator':
        return `( ${this.sequence(items)} ( ${this.node(n.separator!)} ${this.sequence(items)} )* )?`;
      case 'RepetitionMandatoryWithSeparator':
        return `${this.sequence(items)} ( ${this.node(n.separator!)} ${this.sequence(items)} )*`;
      default:
        throw new Error(`unknown grammar production type ${n.type}`);
    }
  }

  private terminal(name: string): string {
    const t = TOKENS.get(name);
    if (!t) throw new Error(`the grammar uses token ${name}, which tokens.ts does not list`);
    if (t.PATTERN === undefined) {
      this.categories.add(name);
      return name;
    }
    const fixed = literals(t);
    if (fixed?.length === 1) return fixed[0]!;
    if (fixed) return `( ${fixed.join(' | ')} )`;
    return name;
  }
}

/** `name ::= a b c`, wrapped at WIDTH, one line per top-level alternative. */
function formatRule(name: string, alternatives: string[], width: number): string {
  const lead = `${name.padEnd(width)} ::= `;
  const altLead = `${' '.repeat(width)}   | `;
  return alternatives.map((alt, i) => wrap(alt, i === 0 ? lead : altLead, ' '.repeat(lead.length))).join('\n');
}

/**
 * Fills lines with the top-level items of a sequence, so a group such as `( 'WHERE' expression )?`
 * stays on one line; an item too long for a line is broken between words, never just inside an
 * opening or before a closing parenthesis.
 */
function wrap(text: string, first: string, indent: string): string {
  const lines: string[] = [];
  let line = first;
  let fresh = true;
  const put = (piece: string) => {
    if (!fresh && line.length + 1 + piece.length > WIDTH) {
      lines.push(line);
      line = indent;
      fresh = true;
    }
    line += fresh ? piece : ` ${piece}`;
    fresh = false;
  };
  for (const item of topLevelItems(text)) {
    if (indent.length + item.join(' ').length <= WIDTH) {
      put(item.join(' '));
      continue;
    }
    // Too long for any line: glue each opening parenthesis to the word after it, and each
    // closing one and each | to the word before it, then fill word by word.
    const glued: string[] = [];
    for (const w of item) {
      const last = glued.length - 1;
      if (last >= 0 && (glued[last]!.endsWith('(') || /^(?:\)[?*+]?|\|)$/.test(w))) glued[last] += ` ${w}`;
      else glued.push(w);
    }
    glued.forEach(put);
  }
  lines.push(line);
  return lines.join('\n');
}

/** The words of a sequence, grouped into its top-level items (parenthesized groups kept whole). */
function topLevelItems(text: string): string[][] {
  const items: string[][] = [];
  let current: string[] = [];
  let depth = 0;
  for (const w of words(text)) {
    current.push(w);
    if (w === '(') depth++;
    else if (/^\)[?*+]?$/.test(w)) depth--;
    if (depth === 0) {
      // A | ends the item before it, so no line starts with one.
      if (w === '|' && items.length > 0) items[items.length - 1]!.push(w);
      else items.push(current);
      current = [];
    }
  }
  if (current.length > 0) items.push(current);
  return items;
}

/** Splits on spaces outside quoted literals. */
function words(text: string): string[] {
  return text.match(/'[^']*'[?*+]?|"[^"]*"[?*+]?|\S+/g) ?? [];
}
