import type { Catalog, ColumnDef, ObjectDef } from '../catalog/types.js';
import type { DiagnosticBag } from '../diagnostics/diagnostic.js';
import type { Span } from '../diagnostics/span.js';
import type { Fix } from '../diagnostics/diagnostic.js';
import { closest, didYouMeanOf } from '../diagnostics/suggest.js';
import { printName } from '../syntax/print.js';
import type * as A from '../syntax/ast.js';
import type * as B from './bound.js';
import { columnValueType } from './types.js';

/** A FROM item and the scopes around it. */
export interface Scope {
  readonly id: number;
  readonly object: ObjectDef;
  /** The name the FROM item is referred to by: its alias, or its slug when it has none. */
  readonly name: string;
  readonly parent: Scope | null;
  /** Where the FROM object's name ends in the text (a fix may insert an alias there). */
  readonly fromEnd?: number;
}

export function sourceOf(bag: DiagnosticBag, node: { span: Span }): string {
  return bag.source.slice(node.span.start, node.span.end);
}

/**
 * For a name nothing in scope has: the "did you mean" hint, and when exactly one name is close,
 * the fix that writes it in place of `at` (quoted when the query text must quote it). Two or
 * more close names get the hint alone: which one was meant is the user's to say.
 */
export function nearName(word: string, candidates: Iterable<string>, at: Span): { hint: string | undefined; fix: Fix | undefined } {
  const found = closest(word, candidates);
  return { hint: didYouMeanOf(found), fix: found.length === 1 ? { range: [at.start, at.end], text: printName(found[0]!) } : undefined };
}

export function nullAt(span: Span): B.BNull {
  return { kind: 'Null', type: 'null', span };
}

/**
 * Names and dot paths: which FROM item a name belongs to, and which relations a path follows
 * (`owner.manager.email`), with the diagnostics for names that resolve to nothing.
 */
export class NameResolver {
  constructor(
    private readonly bag: DiagnosticBag,
    private readonly catalog: Catalog,
    private readonly maxPathDepth: number,
  ) {}

  /** Resolves a name or dot path seen in `scope`. */
  path(p: A.Path, scope: Scope): B.BExpr {
    const parts = p.parts;
    // As in PostgreSQL, the first name of a qualified path is a FROM name (alias, or slug when
    // there is no alias) of any enclosing scope, inner first; only then a column, inner first.
    // So inside `FROM opportunity`, `account.id` is the outer account's id when there is one.
    if (parts.length > 1) {
      for (let s: Scope | null = scope; s; s = s.parent) {
        if (parts[0]!.name === s.name) {
          this.warnIfShadowedColumn(p, scope, s);
          return this.walk(p, 1, s);
        }
      }
    }
    for (let s: Scope | null = scope; s; s = s.parent) {
      const col = s.object.columns.get(parts[0]!.name);
      if (col !== undefined) return this.walk(p, 0, s, col);
    }
    if (parts.length === 1 && this.isScopeName(parts[0]!.name, scope)) {
      this.bag.error('UNKNOWN_COLUMN', p.span, `'${sourceOf(this.bag, p)}' names the object itself, not a column`, `write ${parts[0]!.name}.id`);
      return nullAt(p.span);
    }
    const first = parts[0]!;
    const candidates = [...scope.object.columns.keys(), ...this.scopeNames(scope)];
    if (first.quoted && this.quotedName(p, first, candidates)) return nullAt(p.span);
    const near = nearName(first.name, candidates, first.span);
    this.bag.error(
      'UNKNOWN_COLUMN',
      first.span,
      `unknown column '${sourceOf(this.bag, first)}' on object '${scope.object.slug}'`,
      near.hint ?? `the columns of ${scope.object.slug} are ${[...scope.object.columns.keys()].join(', ')}`,
      near.fix,
    );
    return nullAt(p.span);
  }

  /**
   * Double quotes make a name case-sensitive (`"Amount"` is not `amount`), and are not string
   * quotes (`stage = "won"`): say which mistake it is, with the corrected text as a fix.
   */
  private quotedName(p: A.Path, first: A.Ident, candidates: readonly string[]): boolean {
    const match = candidates.find((c) => c === first.name.toLowerCase());
    if (match !== undefined) {
      this.bag.error(
        'UNKNOWN_COLUMN',
        first.span,
        `quoted names are case-sensitive: '${sourceOf(this.bag, first)}' is not the column ${match}`,
        `write ${match}`,
        { range: [first.span.start, first.span.end], text: match },
      );
      return true;
    }
    if (p.parts.length !== 1) return false;
    const text = `'${first.name.replace(/'/g, "''")}'`;
    this.bag.error(
      'UNKNOWN_COLUMN',
      first.span,
      `${sourceOf(this.bag, first)} is a quoted column name, and there is no such column; strings take single quotes`,
      `write ${text}`,
      { range: [first.span.start, first.span.end], text },
    );
    return true;
  }

  /**
   * Inside `FROM contact`, `account.name` reads the outer `FROM account` (PostgreSQL's reading),
   * though the contact has an `account` relation too: say which one it is.
   */
  private warnIfShadowedColumn(p: A.Path, inner: Scope, named: Scope): void {
    const first = p.parts[0]!.name;
    for (let s: Scope | null = inner; s && s !== named; s = s.parent) {
      if (!s.object.columns.has(first)) continue;
      const rest = p.parts.slice(1).map((x) => x.name).join('.');
      this.bag.warning(
        'AMBIGUOUS_NAME',
        p.parts[0]!.span,
        `'${first}' is read as the outer ${named.object.slug}, not as the column ${s.object.slug}.${first}`,
        `for the ${s.object.slug}'s own ${first} write ${s.name}.${first}.${rest}; give the outer object an alias to make the intent plain`,
      );
      return;
    }
  }

  private scopeNames(scope: Scope): string[] {
    const names: string[] = [];
    for (let s: Scope | null = scope; s; s = s.parent) names.push(s.name);
    return names;
  }

  private isScopeName(name: string, scope: Scope): boolean {
    return this.scopeNames(scope).includes(name);
  }

  /**
   * Follows a dot path from `parts[start]` in `scope` through relations to its column;
   * `first` is that part's column when the caller has looked it up already.
   */
  private walk(p: A.Path, start: number, scope: Scope, first?: ColumnDef): B.BExpr {
    let object = scope.object;
    const hops: B.Hop[] = [];
    for (let i = start; i < p.parts.length; i++) {
      const part = p.parts[i]!;
      const col = i === start && first !== undefined ? first : object.columns.get(part.name);
      if (!col) {
        const near = nearName(part.name, object.columns.keys(), part.span);
        this.bag.error(
          'UNKNOWN_COLUMN',
          part.span,
          `unknown column '${sourceOf(this.bag, part)}' on object '${object.slug}'`,
          near.hint ?? `the columns of ${object.slug} are ${[...object.columns.keys()].join(', ')}`,
          near.fix,
        );
        return nullAt(p.span);
      }
      const last = i === p.parts.length - 1;
      if (last) {
        if (col.type === 'virtual' && col.relation?.kind === 'virtual') {
          this.bag.error(
            'VIRTUAL_NEEDS_FIELD',
            part.span,
            `'${sourceOf(this.bag, part)}' is a list of ${col.relation.object} records, not a value`,
            `name a field of ${col.relation.object}: ${sourceOf(this.bag, p)}.id, or test for children with ${hops.length === 0 ? existsForm(this.catalog, col.relation, scope, null) : 'EXISTS'}`,
          );
          return nullAt(p.span);
        }
        return this.columnRef(scope, hops, object, col, p.span);
      }
      if (!col.relation) {
        this.bag.error(
          'NOT_A_RELATION',
          { start: part.span.start, end: p.parts[i + 1]!.span.end },
          `'${sourceOf(this.bag, part)}' on '${object.slug}' is a ${col.type} column, not a relation, so it has no field '${sourceOf(this.bag, p.parts[i + 1]!)}'`,
          `the relations of ${object.slug} are ${[...object.columns.values()].filter((c) => c.relation).map((c) => c.slug).join(', ') || 'none'}`,
        );
        return nullAt(p.span);
      }
      hops.push(col.relation.kind === 'to-one' ? { kind: 'to-one', via: col.slug, object: col.relation.object } : { kind: 'virtual', via: col.slug, object: col.relation.object });
      if (hops.length > this.maxPathDepth) {
        this.bag.error('PATH_TOO_DEEP', p.span, `'${sourceOf(this.bag, p)}' follows ${p.parts.length - start - 1} relations; the maximum is ${this.maxPathDepth}`, 'query a closer object, or compare the relation column with a known id');
        return nullAt(p.span);
      }
      const next = this.catalog.objects.get(col.relation.object);
      if (!next) throw new Error(`catalog invariant: ${object.slug}.${col.slug} points at missing ${col.relation.object}`);
      object = next;
    }
    throw new Error('unreachable: a path has at least one part after its qualifier');
  }

  /** When `p` ends at a virtual relation column, its relation. */
  virtualEnd(p: A.Path, scope: Scope): { object: string; via: string } | null {
    let object: ObjectDef | undefined = scope.object;
    const parts = p.parts[0]!.name === scope.name && p.parts.length > 1 && !scope.object.columns.has(p.parts[0]!.name) ? p.parts.slice(1) : p.parts;
    for (let i = 0; i < parts.length && object; i++) {
      const col: ColumnDef | undefined = object.columns.get(parts[i]!.name);
      if (!col?.relation) return null;
      if (i === parts.length - 1) return col.relation.kind === 'virtual' ? { object: col.relation.object, via: col.relation.via } : null;
      object = this.catalog.objects.get(col.relation.object);
    }
    return null;
  }

  columnRef(scope: Scope, hops: readonly B.Hop[], object: ObjectDef, col: ColumnDef, span: Span): B.BColumn {
    return { kind: 'Column', scope: scope.id, hops, object: object.slug, column: col.slug, logical: col.type, type: columnValueType(col.type), span };
  }
}

/**
 * The EXISTS test for children of `scope`'s object, as text that compiles when pasted. The
 * correlation names the outer FROM item; when that name is also a column of the child object
 * (`FROM account`, child `contact.account`) it would read as the child's column, so the outer
 * FROM item needs an alias first, and the text says so.
 */
export function existsForm(catalog: Catalog, child: { readonly object: string; readonly via: string }, scope: Scope, condition: string | null): string {
  const { test, alias } = existsParts(catalog, child, scope, condition);
  return alias === null ? test : `${test}, after giving the outer object an alias: FROM ${scope.object.slug} ${alias} (its qualified names then start with ${alias}.)`;
}

/** The EXISTS test, and the alias the outer FROM item needs first (null when its name will do). */
export function existsParts(catalog: Catalog, child: { readonly object: string; readonly via: string }, scope: Scope, condition: string | null): { test: string; alias: string | null } {
  const childDef = catalog.objects.get(child.object);
  const clashes = (name: string): boolean => childDef?.columns.has(name) === true;
  const inner = ['x', 'c', 'child'].find((n) => n !== scope.name && !clashes(n)) ?? 'x';
  const test = (outer: string): string => `EXISTS (SELECT 1 FROM ${child.object} ${inner} WHERE ${inner}.${child.via} = ${outer}.id${condition === null ? '' : ` AND ${inner}.${condition}`})`;
  if (!clashes(scope.name)) return { test: test(scope.name), alias: null };
  const slug = scope.object.slug;
  const alias = [slug[0]!, `${slug[0]!}1`, 'parent', 'outer_row'].find((n) => n !== inner && !clashes(n) && !scope.object.columns.has(n)) ?? 'outer_row';
  return { test: test(alias), alias };
}
