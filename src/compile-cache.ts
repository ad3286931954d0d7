/**
 * The compiled-query cache of `compile` and `compileCount`: entries by bucket (the catalog version,
 * slug and options that change the SQL, spelled by compile.ts) and query text. It knows texts and
 * entries, not what compiling is.
 *
 * Entries live in two generations of `size / 2` texts: new entries go into `young`; when it is
 * full it becomes `old` and the previous old one is dropped whole; a hit in `old` moves up into
 * `young`. That keeps the most recently used texts (between size / 2 and size of them) with no
 * per-entry bookkeeping: an exact LRU evicting from the front of one Map walked over every
 * deleted slot there, a cost growing with each miss. Within a generation, entries sit in buckets,
 * then by text: a key spelling out every option and the whole text was built, hashed and kept for
 * every call.
 */
type Generation<E> = Map<string, Map<string, E>>;

export class CompileCache<E> {
  private young: Generation<E> = new Map();
  private youngSize = 0;
  private old: Generation<E> = new Map();
  /**
   * Texts compiled once, in two generations like the entries. A text is cached the second time
   * it is compiled, not the first: most texts a service sees never come again, and keeping an
   * entry for each of them (promoted to the old generation, then collected there) made a miss
   * cost 15 to 30% more than `cache: false`; remembering only the text keeps a miss within a few
   * percent of it, at the price of one more compile for a text that does repeat.
   */
  private seenYoung = new Set<string>();
  private seenOld = new Set<string>();

  constructor(private readonly size: number) {}

  /** The entry kept for `text` in `bucket`, or undefined (then compile it and `offer` it). */
  lookup(bucket: string, text: string): E | undefined {
    const hit = this.young.get(bucket)?.get(text);
    if (hit) return hit;
    const older = this.old.get(bucket)?.get(text);
    if (older) this.remember(bucket, text, older);
    return older;
  }

  /** A freshly compiled entry: kept when its text was compiled before (see `seenYoung`). */
  offer(bucket: string, text: string, entry: E): void {
    if (this.seenBefore(text)) this.remember(bucket, text, entry);
  }

  clear(): void {
    this.young = new Map();
    this.old = new Map();
    this.youngSize = 0;
    this.seenYoung = new Set();
    this.seenOld = new Set();
  }

  private remember(bucket: string, text: string, entry: E): void {
    let entries = this.young.get(bucket);
    if (!entries) this.young.set(bucket, (entries = new Map()));
    entries.set(text, entry);
    if (++this.youngSize >= this.size / 2) {
      this.old = this.young;
      this.young = new Map();
      this.youngSize = 0;
    }
  }

  private seenBefore(text: string): boolean {
    if (this.seenYoung.has(text) || this.seenOld.has(text)) return true;
    this.seenYoung.add(text);
    if (this.seenYoung.size >= this.size) {
      this.seenOld = this.seenYoung;
      this.seenYoung = new Set();
    }
    return false;
  }
}
