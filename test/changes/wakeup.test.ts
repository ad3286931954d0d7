import { describe, expect, it } from 'vitest';
import { ChangeFeed } from '../../src/service/changes/feed.js';
import type { Change, ChangeLog, ChangePage } from '../../src/service/changes/log.js';
import { ChangeWatcher } from '../../src/service/changes/watcher.js';

/**
 * A commit through this instance that lands between a long-poll's read of its page and the start
 * of its wait must still end the wait. On the embedded database nothing polls the log's heads, so a
 * missed wake-up left the reader waiting until its wait ran out (up to 30 s) with the change in the
 * log; on PostgreSQL it cost up to a head poll. Between the read and the wait there is room for a
 * whole write on one connection: the read's own check of the retention horizon is a second
 * statement, queued behind the writer's.
 */

const CHANGE: Change = {
  cursor: 'c6', event_id: '00000000-0000-4000-8000-000000000006', object_slug: 'account', record_id: 'acc_1', operation: 'created',
  changed_fields: null, record: { id: 'acc_1' }, previous: null, actor: { user_id: 'u_1', surface: 'rest' }, committed_at: 0,
};

/** A log whose first read sees no change and during which a write commits through this instance. */
function racingLog(watcher: () => ChangeWatcher): { log: ChangeLog; reads: () => number } {
  let reads = 0;
  const log = {
    async read(orgId: string, after: bigint): Promise<ChangePage> {
      reads++;
      if (reads === 1) {
        watcher().committed(orgId);
        return { changes: [], next_cursor: `c${after.toString(36)}`, has_more: false };
      }
      return { changes: [CHANGE], next_cursor: CHANGE.cursor, has_more: false };
    },
  } as unknown as ChangeLog;
  return { log, reads: () => reads };
}

const ctx = { org: 'org_a', budget: 'u_1' } as never;
const policy = { admit: (_ctx: unknown, _weight: unknown, fn: () => Promise<unknown>) => fn() } as never;
const config = { maxWaitingPerUser: 10, maxWaitingPerOrg: 10 } as never;

/** Lets every pending callback run a few times over, without waiting for any timer. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('a commit between a long-poll\'s page and its wait', () => {
  it('answers the long-poll at once on the embedded database, which never polls', async () => {
    let watcher!: ChangeWatcher;
    const { log, reads } = racingLog(() => watcher);
    watcher = new ChangeWatcher(log, null);
    const feed = new ChangeFeed(log, watcher, {} as never, config, policy);
    const controller = new AbortController();
    let answered = false;
    const reading = feed.read(ctx, { after: 5n, objects: ['account'], limit: 10, waitMs: 30_000 }, controller.signal).then((page) => {
      answered = true;
      return page;
    });
    await settle();
    const inTime = answered;
    controller.abort();
    const page = await reading;
    expect(inTime).toBe(true);
    expect(page.changes).toEqual([CHANGE]);
    expect(reads()).toBe(2);
    expect(watcher.waiting).toBe(0);
  });

  it('ends a wait given a count taken before a commit, and not one given the count after it', async () => {
    const watcher = new ChangeWatcher({} as ChangeLog, null);
    const before = watcher.seen('org_a');
    watcher.committed('org_a');
    // Another organization's commit changes nothing for org_a.
    watcher.committed('org_b');
    let ended = false;
    void watcher.wait('org_a', 0n, 30_000, undefined, before).then(() => void (ended = true));
    await settle();
    expect(ended).toBe(true);

    const controller = new AbortController();
    let endedLater = false;
    const later = watcher.wait('org_a', 0n, 30_000, controller.signal, watcher.seen('org_a')).then(() => void (endedLater = true));
    await settle();
    expect(endedLater).toBe(false);
    expect(watcher.waiting).toBe(1);
    watcher.committed('org_a');
    await later;
    expect(watcher.waiting).toBe(0);
  });
});

describe('a reader of some objects while others change, on PostgreSQL', () => {
  it('is woken once by a head of changes it does not read, not again at every poll of the same head', async () => {
    let reads = 0;
    const log = {
      // The organization's head is past the cursor, by changes of another object than the reader's.
      async heads(orgIds: readonly string[]) {
        return new Map(orgIds.map((o) => [o, 10n]));
      },
      async read(_orgId: string, after: bigint): Promise<ChangePage> {
        reads++;
        return { changes: [], next_cursor: `c${after.toString(36)}`, has_more: false };
      },
    } as unknown as ChangeLog;
    const watcher = new ChangeWatcher(log, 5);
    const feed = new ChangeFeed(log, watcher, {} as never, config, policy);
    // The long-poll's own wait, at 5 ms a poll: dozens of polls see the same head before it runs out.
    const page = await feed.read(ctx, { after: 5n, objects: ['contact'], limit: 10, waitMs: 400 });
    expect(page).toEqual({ changes: [], next_cursor: 'c5', has_more: false });
    // Its first page, the one after the head woke it, and the last when the wait ran out.
    expect(reads).toBe(3);
    watcher.close();
  });

  it('reads nothing for a long-poll whose client went away before its first read', async () => {
    let reads = 0;
    const log = {
      async read(_orgId: string, after: bigint): Promise<ChangePage> {
        reads++;
        return { changes: [CHANGE], next_cursor: CHANGE.cursor, has_more: false };
      },
    } as unknown as ChangeLog;
    const watcher = new ChangeWatcher(log, null);
    const feed = new ChangeFeed(log, watcher, {} as never, config, policy);
    const controller = new AbortController();
    controller.abort();
    const page = await feed.read(ctx, { after: 5n, objects: ['account'], limit: 10, waitMs: 30_000 }, controller.signal);
    expect(page).toEqual({ changes: [], next_cursor: 'c5', has_more: false });
    expect(reads).toBe(0);
    // The same read with its client still there reads the page.
    expect((await feed.read(ctx, { after: 5n, objects: ['account'], limit: 10, waitMs: 0 })).changes).toEqual([CHANGE]);
    expect(reads).toBe(1);
    watcher.close();
  });
});
