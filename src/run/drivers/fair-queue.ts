/**
 * A queue that serves its keys (tenants) in turn: each key has its own first-in-first-out line,
 * and `shift` takes the head of the line whose turn it is, then passes the turn to the next key
 * that has something waiting. A key with 50 items queued therefore delays another key's single
 * item by at most one of its own, however early it queued them.
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
    const first = this.lines.entries().next();
    if (first.done) return undefined;
    const [key, line] = first.value;
    const item = line.shift() as T;
    this.lastServed = key;
    this.lines.delete(key);
    // Still waiting: to the back of the rotation, behind every other key.
    if (line.length > 0) this.lines.set(key, line);
    this.count--;
    return item;
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
