/**
 * Report queries over a random catalog (random-catalog.ts), as people and agents write them:
 * select lists of columns, dot paths through to-one relations and expressions (arithmetic,
 * text and date functions, CASE, if), aggregates with GROUP BY, HAVING and ORDER BY, WHERE
 * trees of AND, OR and NOT over comparisons, IN lists, LIKE, BETWEEN, NULL tests, multiselect
 * overlap and emptiness, filters through one-to-many relations, EXISTS and IN subqueries; in three
 * size classes. Every text is valid for its catalog (test/bench/random-reports.test.ts compiles
 * them). Built from the catalog's shapes, not from the compiler: nothing here imports it.
 */
import type { SizeClass } from './corpus.js';
import { between, pick, type Random } from './random-catalog.js';
import type { Shape } from './synthetic-catalog.js';
import { Scope, modelOf, type Obj } from './random-scope.js';

export interface ReportQuery {
  readonly slug: string;
  readonly size: SizeClass;
  readonly text: string;
}

const LIMITS = [5, 10, 20, 25, 50, 100, 100, 100, 200, 250, 500, 1000, 5000];

/** The generator of one catalog: `next()` gives a new report query each call. */
export class ReportGenerator {
  private readonly objects: readonly Obj[];

  constructor(shapes: readonly Shape[], private readonly random: Random) {
    this.objects = modelOf(shapes);
  }

  next(size: SizeClass = this.size()): ReportQuery {
    const r = this.random;
    const root = pick(r, this.objects);
    const alias = r() < 0.35 ? root.slug.charAt(0) : null;
    const s = new Scope(r, this.objects, root, alias, r() < 0.75, r() < 0.3 ? '\n' : ' ');
    const aggregate = size === 'long' ? r() < 0.15 : r() < (size === 'short' ? 0.3 : 0.45);
    const body = aggregate ? this.aggregateQuery(s, size) : this.plainQuery(s, size);
    return { slug: root.slug, size, text: body };
  }

  private size(): SizeClass {
    const x = this.random();
    return x < 0.35 ? 'short' : x < 0.85 ? 'typical' : 'long';
  }

  private leafCount(size: SizeClass): number {
    const r = this.random;
    return size === 'short' ? between(r, 0, 2) : size === 'typical' ? between(r, 1, 6) : between(r, 10, 24);
  }

  private plainQuery(s: Scope, size: SizeClass): string {
    const r = this.random;
    if (size === 'short' && r() < 0.05) return s.finish(`${s.kw('SELECT')} *${s.from()}`, this.where(s, size), [], [], this.limit());
    const distinct = r() < 0.08;
    const n = size === 'short' ? between(r, 1, 3) : size === 'typical' ? between(r, 3, 10) : between(r, 20, 45);
    // Items: [text, orderable name]; an orderable name is how ORDER BY may refer to the item.
    const items: { text: string; name: string }[] = [];
    for (let i = 0; i < n; i++) {
      const x = r();
      if (x < 0.62 || distinct) {
        const p = s.path(s.root, () => true, { hops: size === 'long' ? 3 : 2, virtual: r() < 0.05 && !distinct });
        if (!p) continue;
        const written = s.written(p);
        const key = s.keyOf(p);
        if (r() < 0.25 || s.keys.has(key)) {
          const name = s.alias(p.segs.join('_'));
          items.push({ text: `${written} ${s.kw('AS')} ${name}`, name });
        } else {
          s.keys.add(key);
          items.push({ text: written, name: written });
        }
      } else {
        const e = s.expression();
        if (!e) continue;
        const name = s.alias(e.hint);
        items.push({ text: `${e.text} ${s.kw('AS')} ${name}`, name });
      }
    }
    if (items.length === 0) items.push({ text: 'id', name: 'id' });
    const order: string[] = [];
    if (r() < (size === 'short' ? 0.35 : 0.65)) {
      for (let k = between(r, 1, size === 'long' ? 3 : 2); k > 0; k--) {
        const x = r();
        let key: string | null;
        if (distinct || x < 0.45) key = pick(r, items).name;
        else if (x < 0.55) key = String(between(r, 1, items.length));
        else {
          const p = s.path(s.root, (c) => c.kind !== 'json' && c.kind !== 'multi', { hops: 2, virtual: false });
          key = p ? s.written(p) : null;
        }
        if (key) order.push(s.direction(key));
      }
    }
    const select = `${s.kw('SELECT')} ${distinct ? `${s.kw('DISTINCT')} ` : ''}${items.map((i) => i.text).join(', ')}${s.from()}`;
    return s.finish(select, this.where(s, size), [], order, this.limit());
  }

  private aggregateQuery(s: Scope, size: SizeClass): string {
    const r = this.random;
    const select: string[] = [];
    const groupBy: string[] = [];
    const orderable: string[] = [];
    const keyCount = r() < 0.15 ? 0 : between(r, 1, size === 'short' ? 1 : 3);
    for (let k = 0; k < keyCount; k++) {
      const g = s.groupKey(select.length + 1);
      if (!g) continue;
      select.push(g.select);
      groupBy.push(pick(r, g.groupBy));
      orderable.push(g.order);
    }
    const aggCount = size === 'short' ? between(r, 1, 2) : size === 'typical' ? between(r, 1, 5) : between(r, 6, 14);
    const aggs: string[] = [];
    for (let k = 0; k < aggCount; k++) {
      const a = s.aggregate();
      const name = s.alias(a.hint);
      select.push(`${a.text} ${s.kw('AS')} ${name}`);
      aggs.push(a.text);
      orderable.push(name);
    }
    const having = groupBy.length > 0 && r() < 0.2 ? `${s.kw('HAVING')} ${pick(r, aggs)} > ${between(r, 1, 50) * pick(r, [1, 10, 1000])}` : '';
    const order: string[] = [];
    if (r() < 0.7 && orderable.length > 0) {
      for (let k = between(r, 1, 2); k > 0; k--) {
        const x = r();
        order.push(s.direction(x < 0.75 ? pick(r, orderable) : x < 0.9 ? String(between(r, 1, select.length)) : pick(r, aggs)));
      }
    }
    const text = `${s.kw('SELECT')} ${select.join(', ')}${s.from()}`;
    const groups = groupBy.length > 0 ? [`${s.kw('GROUP BY')} ${[...new Set(groupBy)].join(', ')}`, having].filter(Boolean) : [];
    return s.finish(text, this.where(s, size), groups, order, keyCount === 0 ? pick(this.random, [1, 1, 10]) : this.limit());
  }

  private where(s: Scope, size: SizeClass): string | null {
    const leaves = this.leafCount(size);
    if (leaves === 0) return null;
    if (size === 'long') {
      // OR of AND groups, as long reports are written.
      const groups: string[] = [];
      for (let left = leaves; left > 0;) {
        const n = Math.min(left, between(this.random, 2, 6));
        groups.push(`(${s.tree(n, 'AND', 1)})`);
        left -= n;
      }
      return groups.join(` ${s.kw('OR')} `);
    }
    return s.tree(leaves, this.random() < 0.75 ? 'AND' : 'OR', 2);
  }

  private limit(): number {
    return pick(this.random, LIMITS);
  }
}
