import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/run/drivers/fair-queue.js';

/**
 * Turns weighed by time (`charge`): the queue as the embedded database uses it, each served item
 * charged what it held the connection before the next shift. The oracle is the arithmetic of the
 * charges, worked out by hand in each test.
 */

/** Serves everything, charging each item `cost(item)` before the next shift, as the database does. */
function serveCharged(q: FairQueue<string>, cost: (item: string) => number): string[] {
  const out: string[] = [];
  for (let item = q.shift(); item !== undefined; item = q.shift()) {
    out.push(item);
    q.charge(item.replace(/\d+$/, ''), cost(item));
  }
  return out;
}

describe('FairQueue weighed by time', () => {
  it('serves every waiting item of a light key after one long item of a heavy key', () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 4; i++) q.push('heavy', `heavy${i}`);
    for (let i = 0; i < 5; i++) q.push('light', `light${i}`);
    // heavy0 costs 1000; the light items 10 each: all five (50 in all) go before heavy1.
    const order = serveCharged(q, (item) => (item.startsWith('heavy') ? 1000 : 10));
    expect(order).toEqual(['heavy0', 'light0', 'light1', 'light2', 'light3', 'light4', 'heavy1', 'heavy2', 'heavy3']);
  });

  it('a light key arriving while a heavy one runs goes before the heavy key\'s next item', () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 3; i++) q.push('heavy', `heavy${i}`);
    expect(q.shift()).toBe('heavy0');
    q.push('light', 'light0');
    q.push('light', 'light1');
    q.charge('heavy', 1500);
    expect(q.shift()).toBe('light0');
    q.charge('light', 5);
    expect(q.shift()).toBe('light1');
    q.charge('light', 5);
    expect(q.shift()).toBe('heavy1');
  });

  it('time not used while idle is not saved up: a key joining starts at the last served item\'s use', () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 3; i++) q.push('a', `a${i}`);
    q.push('b', 'b0');
    // a0 (100), b0 (100), a1 (100): the clock reaches 100 when a1, charged 100 before, is served.
    expect(q.shift()).toBe('a0');
    q.charge('a', 100);
    expect(q.shift()).toBe('b0');
    q.charge('b', 100);
    expect(q.shift()).toBe('a1');
    q.charge('a', 100);
    // c joins now, idle until now: it starts at 100, not 0, so it does not run twice before a.
    q.push('c', 'c0');
    q.push('c', 'c1');
    // a used 200, c starts at 100: c0 first; charged 100 it ties with a at 200, and a is ahead in the rotation.
    expect(q.shift()).toBe('c0');
    q.charge('c', 100);
    expect(q.shift()).toBe('a2');
    q.charge('a', 100);
    expect(q.shift()).toBe('c1');
    expect(q.shift()).toBeUndefined();
  });

  it('gives two busy keys about equal time, whatever their items cost', () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 100; i++) q.push('slow', `slow${i}`);
    for (let i = 0; i < 1000; i++) q.push('fast', `fast${i}`);
    const used = { slow: 0, fast: 0 };
    // Over the first 5,000 ms served, each key's time stays within one slow item (100) of the other's.
    for (let served = 0; served < 5_000;) {
      const item = q.shift()!;
      const key = item.startsWith('slow') ? 'slow' : 'fast';
      const cost = key === 'slow' ? 100 : 5;
      q.charge(key, cost);
      used[key] += cost;
      served += cost;
      expect(Math.abs(used.slow - used.fast)).toBeLessThanOrEqual(100);
    }
    expect(used.slow).toBeGreaterThan(2_000);
    expect(used.fast).toBeGreaterThan(2_000);
  });

  it('ignores charges that are not positive, and a key never charged keeps the plain rotation', () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 2; i++) q.push('a', `a${i}`);
    for (let i = 0; i < 2; i++) q.push('b', `b${i}`);
    q.charge('a', 0);
    q.charge('a', -5);
    q.charge('a', Number.NaN);
    expect([q.shift(), q.shift(), q.shift(), q.shift()]).toEqual(['a0', 'b0', 'a1', 'b1']);
  });
});
