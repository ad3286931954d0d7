/**
 * A queue that serves its keys (tenants) in turn: each key has its own first-in-first-out line,
 * and `shift` takes the head of the line whose turn it is, then passes the turn to the next key
 * that has something waiting. A key with 50 items queued therefore delays another key's single
 * item by at most one of its own, however early it queued them.
 *
 * Turns are weighed by what they cost when the caller says so: `charge(key, ms)` adds the time an
 * item of `key` held the resource, and `shift` serves the waiting key that used the least of it
 * (start-time fair queueing), the order of the rotation breaking ties. A key whose statements take
 * seconds and one whose take milliseconds then get the same time, not the same number of turns:
 * after one long item of the heavy key, every short item of the light one that waits goes before
 * its next. A key that joins starts at the use of the item served last, never below: time not used
 * while it had nothing queued is not saved up. Without charges every key has used nothing and the
 * queue is the plain rotation.
 *
 * Keys that empty their line leave the rotation and join it at the back when they queue again,
 * so a key cannot save up turns while it has nothing to do; but a key that joins right after
 * another had a turn alone goes before that one's next turn (the one served is always last in line).
 */
export class FairQueue<T> {
  /** Keys with something queued, in the order of their next turn (a Map keeps insertion order). */
  private readonly lines = new Map<string, T[]>();
  private count = 0;
  /** The key `shift` served last: a key that joins while it is alone in the rotation goes first. */
  private lastServed: string | undefined;
  /** Time (or whatever `charge` counts) each key used, for keys above `clock`. */
  private readonly used = new Map<string, number>();
  /** The use of the key served last when it was served: where a key joining starts. */
  private clock = 0;

  /** Items waiting, over all keys. */
  get size(): number {
    return this.count;
  }

  /** Items `key` has waiting. */
  sizeOf(key: string): number {
    return this.lines.get(key)?.length ?? 0;
  }

  /** Keys with something waiting. */
  get keys(): number {
    return this.lines.size;
  }

  push(key: string, item: T): void {
    const line = this.lines.get(key);
    this.count++;
    if (line) {
      line.push(item);
      return;
    }
    // Time not used while the key had nothing queued is not saved up.
    if ((this.used.get(key) ?? 0) < this.clock) this.used.set(key, this.clock);
    // The key at the front only had its turn because it was alone; the newcomer goes before it.
    if (this.lastServed !== undefined && this.lines.keys().next().value === this.lastServed) {
      const rest = [...this.lines];
      this.lines.clear();
      this.lines.set(key, [item]);
      for (const [k, l] of rest) this.lines.set(k, l);
    } else {
      this.lines.set(key, [item]);
    }
  }

  /** The next item in turn, or undefined when nothing waits. */
  shift(): T | undefined {
    let key: string | undefined;
    let line: T[] | undefined;
    let least = Infinity;
    // The key that used least; the first in the rotation among equals (a strict comparison).
    for (const [k, l] of this.lines) {
      const u = this.used.get(k) ?? this.clock;
      if (u < least) {
        least = u;
        key = k;
        line = l;
      }
    }
    if (key === undefined || line === undefined) return undefined;
    const item = line.shift() as T;
    this.lastServed = key;
    if (least > this.clock) {
      this.clock = least;
      // Keys at or below the clock start from it anyway when they join again.
      for (const [k, u] of this.used) if (u <= this.clock && !this.lines.has(k)) this.used.delete(k);
    }
    this.lines.delete(key);
    // Still waiting: to the back of the rotation, behind every other key.
    if (line.length > 0) this.lines.set(key, line);
    this.count--;
    return item;
  }

  /**
   * Counts `amount` (the milliseconds one of its items held the resource) against `key`: its next
   * turn comes after keys that used less. Call it when the item is done, before the next shift.
   */
  charge(key: string, amount: number): void {
    if (!(amount > 0)) return;
    this.used.set(key, Math.max(this.used.get(key) ?? 0, this.clock) + amount);
  }

  /** Takes `item` out of `key`'s line (a caller that stopped waiting); false when it is not there. */
  remove(key: string, item: T): boolean {
    const line = this.lines.get(key);
    const at = line ? line.indexOf(item) : -1;
    if (!line || at < 0) return false;
    line.splice(at, 1);
    if (line.length === 0) this.lines.delete(key);
    this.count--;
    return true;
  }

  /** Every waiting item, in no particular order; the queue is left as it is. */
  items(): T[] {
    return [...this.lines.values()].flat();
  }

  /** Every waiting item, in no particular order, leaving the queue empty. */
  drain(): T[] {
    const all = [...this.lines.values()].flat();
    this.lines.clear();
    this.count = 0;
    return all;
  }
}
