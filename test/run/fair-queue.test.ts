import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/run/drivers/fair-queue.js';

/** Everything the queue gives, in order. */
function serveAll<T>(q: FairQueue<T>): T[] {
  const out: T[] = [];
  for (let item = q.shift(); item !== undefined; item = q.shift()) out.push(item);
  return out;
}

describe('FairQueue', () => {
  it('is first-in-first-out for one key', () => {
    const q = new FairQueue<number>();
    for (let i = 0; i < 5; i++) q.push('a', i);
    expect(q.size).toBe(5);
    expect(serveAll(q)).toEqual([0, 1, 2, 3, 4]);
    expect(q.size).toBe(0);
    expect(q.shift()).toBeUndefined();
  });

  it('serves a late single call after at most one of a flooding key', () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 50; i++) q.push('flood', `f${i}`);
    q.push('quiet', 'q0');
    const order = serveAll(q);
    expect(order.indexOf('q0')).toBeLessThanOrEqual(1);
    expect(order.filter((x) => x.startsWith('f'))).toEqual(Array.from({ length: 50 }, (_, i) => `f${i}`));
  });

  it('a key joining right after the flooding key had a turn alone goes before its next one', () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 50; i++) q.push('flood', `f${i}`);
    expect(q.shift()).toBe('f0'); // running now
    q.push('quiet', 'q0');
    expect(q.shift()).toBe('q0');
    expect(q.shift()).toBe('f1');
  });

  it('alternates between keys that both have work, in the order they joined', () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 3; i++) q.push('a', `a${i}`);
    for (let i = 0; i < 3; i++) q.push('b', `b${i}`);
    q.push('c', 'c0');
    expect(serveAll(q)).toEqual(['a0', 'b0', 'c0', 'a1', 'b1', 'a2', 'b2']);
  });

  it('a key cannot save turns: after emptying its line it queues behind the keys waiting', () => {
    const q = new FairQueue<string>();
    q.push('a', 'a0');
    q.push('b', 'b0');
    q.push('b', 'b1');
    expect(q.shift()).toBe('a0');
    q.push('c', 'c0');
    q.push('a', 'a1');
    expect(serveAll(q)).toEqual(['b0', 'c0', 'a1', 'b1']);
  });

  it('under many keys, no item waits for more than one item of each other key ahead of it', () => {
    // Three tenants of different appetite queue at once; then a fourth arrives.
    const q = new FairQueue<{ key: string; n: number }>();
    const sizes: Record<string, number> = { a: 40, b: 7, c: 1 };
    for (const [key, n] of Object.entries(sizes)) for (let i = 0; i < n; i++) q.push(key, { key, n: i });
    q.push('d', { key: 'd', n: 0 });
    const order = serveAll(q);
    // Oracle: item i of a key is served before item i+1 of any other key.
    for (let at = 0; at < order.length; at++) {
      const { key, n } = order[at]!;
      const earlierOthers = order.slice(0, at).filter((x) => x.key !== key);
      const perKey = new Map<string, number>();
      for (const x of earlierOthers) perKey.set(x.key, (perKey.get(x.key) ?? 0) + 1);
      for (const count of perKey.values()) expect(count).toBeLessThanOrEqual(n + 1);
    }
    expect(order).toHaveLength(49);
  });

  it('remove takes out one waiting item and keeps the rest in order', () => {
    const q = new FairQueue<string>();
    q.push('a', 'a0');
    q.push('a', 'a1');
    q.push('b', 'b0');
    expect(q.remove('a', 'a0')).toBe(true);
    expect(q.remove('a', 'a0')).toBe(false);
    expect(q.remove('x', 'a1')).toBe(false);
    expect(q.sizeOf('a')).toBe(1);
    expect(q.size).toBe(2);
    expect(q.remove('b', 'b0')).toBe(true);
    expect(q.keys).toBe(1);
    expect(serveAll(q)).toEqual(['a1']);
  });

  it('items lists without taking, drain takes everything', () => {
    const q = new FairQueue<number>();
    q.push('a', 1);
    q.push('b', 2);
    q.push('a', 3);
    expect(q.items().sort()).toEqual([1, 2, 3]);
    expect(q.size).toBe(3);
    expect(q.drain().sort()).toEqual([1, 2, 3]);
    expect(q.size).toBe(0);
    expect(q.shift()).toBeUndefined();
  });
});
