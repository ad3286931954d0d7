import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, jsonOf } from '../mcp/support.js';
import { expectEnvelope } from '../server/support.js';
import { allChanges, KEYS, startChangesService, type ChangesHarness } from './support.js';

/**
 * The change log's other readers on embedded PGlite: the Server-Sent Events stream (resumed with
 * Last-Event-ID, ended by the server and reconnected, heartbeats) and the MCP tool list_changes,
 * each for two organizations.
 */

let h: ChangesHarness;

beforeAll(async () => {
  // Short streams and heartbeats, so the test sees the server end one and send a comment.
  h = await startChangesService('pglite', { streamMaxSeconds: 2, streamHeartbeatSeconds: 1, maxWaitingPerUser: 2, mcpMaxBytes: 4096 });
}, 120_000);

afterAll(async () => {
  await h?.close();
});

interface Event {
  readonly id?: string;
  readonly event?: string;
  readonly data?: string;
  readonly comment?: string;
}

/** Reads a stream's events until `enough` says so or the server ends it; then hangs up. */
async function readStream(path: string, key: string, headers: Record<string, string>, enough: (events: Event[]) => boolean): Promise<{ events: Event[]; ended: boolean }> {
  const controller = new AbortController();
  const res = await fetch(`${h.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}`, ...headers }, signal: controller.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: Event[] = [];
  let buffer = '';
  let ended = false;
  while (!enough(events)) {
    const { value, done } = await reader.read();
    if (done) {
      ended = true;
      break;
    }
    buffer += value;
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const e: Record<string, string> = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) e['comment'] = line.slice(1).trim();
        else {
          const colon = line.indexOf(':');
          e[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
        }
      }
      events.push(e);
    }
  }
  controller.abort();
  return { events, ended };
}

const changesOf = (events: Event[]) => events.filter((e) => e.data !== undefined && e.event?.startsWith('record.')).map((e) => ({ id: e.id!, event: e.event!, change: JSON.parse(e.data!) }));

describe('the change stream', () => {
  it('streams changes as events, resumes after Last-Event-ID, and is ended by the server for the client to reconnect', async () => {
    const start = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    const made = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Stream One Acme' }, { name: 'Stream Two Acme' }] });
    await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.globexAdmin, body: [{ name: 'Stream Globex' }] });
    const first = await readStream(`/api/v1/changes/stream?after=${start}`, KEYS.acmeAdmin, {}, (ev) => changesOf(ev).length >= 1);
    // The client hangs up having handled the first event only (more may have arrived in the same read).
    const one = changesOf(first.events).slice(0, 1);
    expect(one).toHaveLength(1);
    expect(one[0]!).toMatchObject({ event: 'record.created', change: { record_id: made.json.data.ids[0] } });
    expect(one[0]!.id).toBe(one[0]!.change.cursor);

    // More changes while disconnected; the reconnection resumes after the last event it had.
    await h.call('DELETE', `/api/v1/org/objects/contact/record/${made.json.data.ids[0]}`, { key: KEYS.acmeAdmin });
    const second = await readStream('/api/v1/changes/stream', KEYS.acmeAdmin, { 'last-event-id': one[0]!.id }, () => false);
    expect(second.ended).toBe(true);
    const rest = changesOf(second.events);
    expect(rest.map((e) => [e.event, e.change.record_id])).toEqual([['record.created', made.json.data.ids[1]], ['record.deleted', made.json.data.ids[0]]]);
    // Together exactly the feed's changes: nothing twice, nothing missed, and no other organization's.
    const feed = await allChanges(h, KEYS.acmeAdmin, start);
    expect([...one, ...rest].map((e) => e.change.event_id)).toEqual(feed.changes.map((c) => c.event_id));
    // An idle stream sends heartbeats.
    expect(second.events.some((e) => e.comment === 'heartbeat')).toBe(true);
  }, 20_000);

  it('answers a bad or expired cursor with its status before the stream opens, and caps the streams a user holds', async () => {
    expectEnvelope(await h.call('GET', '/api/v1/changes/stream?after=nope', { key: KEYS.acmeAdmin }), 400, 'INVALID_CURSOR');
    expectEnvelope(await h.call('GET', '/api/v1/changes/stream', { key: KEYS.acmeAdmin, headers: { 'last-event-id': 'c-1' } }), 400, 'INVALID_CURSOR');
    const controllers = [new AbortController(), new AbortController()];
    const open = await Promise.all(controllers.map((c) => fetch(`${h.baseUrl}/api/v1/changes/stream`, { headers: { authorization: `Bearer ${KEYS.acmeAdmin}` }, signal: c.signal })));
    expect(open.map((r) => r.status)).toEqual([200, 200]);
    // A long-poll with nothing to answer yet would wait a third time: refused.
    const head = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    const third = await h.call('GET', `/api/v1/changes?after=${head}&wait=5`, { key: KEYS.acmeAdmin });
    expectEnvelope(third, 429, 'TOO_MANY_WAITING');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    // A page that need not wait is still served.
    expect((await h.call('GET', `/api/v1/changes?after=${head}`, { key: KEYS.acmeAdmin })).status).toBe(200);
    // The other organization is not counted against it.
    const globexHead = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.globexAdmin })).json.data.cursor as string;
    expect((await h.call('GET', `/api/v1/changes?after=${globexHead}&wait=1`, { key: KEYS.globexAdmin })).status).toBe(200);
    for (const c of controllers) c.abort();
  });
});

describe('the MCP tool list_changes', () => {
  it('lists what changed since a cursor for its own workspace only, cut at the tool size with a cursor to go on', async () => {
    const acme = await connect(h.endpoint('acme'), KEYS.acmeAdmin);
    const globex = await connect(h.endpoint('globex'), KEYS.globexAdmin);
    try {
      const head = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
      const names = Array.from({ length: 12 }, (_, i) => `Tool ${i} Acme ${'x'.repeat(200)}`);
      await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.acmeAdmin, body: names.map((name) => ({ name })) });
      const seen: string[] = [];
      let after = head;
      let truncated = false;
      for (let i = 0; i < 20; i++) {
        const page = jsonOf(await acme.callTool({ name: 'list_changes', arguments: { after, objects: ['contact'] } }));
        truncated ||= page.truncated === true;
        seen.push(...page.changes.map((c: any) => c.record.name));
        after = page.next_cursor;
        if (!page.has_more) break;
      }
      // 4 KiB holds a few of these changes, not twelve: the tool cut and said how to go on.
      expect(truncated).toBe(true);
      expect(seen).toEqual(names);
      const theirs = jsonOf(await globex.callTool({ name: 'list_changes', arguments: { after: head } }));
      expect(theirs.changes.some((c: any) => String(c.record?.name).includes('Acme'))).toBe(false);
      const bad = await acme.callTool({ name: 'list_changes', arguments: { after: 'nope' } });
      expect(bad.isError).toBe(true);
    } finally {
      await acme.close();
      await globex.close();
    }
  });
});
