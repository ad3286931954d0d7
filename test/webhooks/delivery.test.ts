import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_SCHEMA } from '../../src/service/migrations.js';
import { expectEnvelope } from '../server/support.js';
import { eventually, events, Receiver } from './support.js';
import { allChanges, KEYS, startChangesService, type ChangesHarness, type DbKind } from '../changes/support.js';

/**
 * Webhooks with real receivers on loopback (the allow-private flag on), on embedded PGlite and on
 * PostgreSQL 15: every change delivered and verified with the `standardwebhooks` package, in log
 * order per endpoint through failures and an outage, replays, secret rotation, and an organization
 * whose receivers hang delaying only itself. The retry schedule runs scaled down to milliseconds.
 */

describe.each<DbKind>(['pglite', 'postgres'])('webhooks on %s', (kind) => {
  let h: ChangesHarness;
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = new Receiver();
    await r.start();
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    // 24 h of retries become about 9 s; 5 s between the first tries about 0.5 ms.
    h = await startChangesService(kind, { webhookAllowPrivate: true, webhookRetryScale: 0.0001, webhookTimeoutMs: 30_000 });
  }, 120_000);

  afterAll(async () => {
    await h?.close();
    for (const r of receivers) await r.stop();
  });

  const create = async (key: string, body: object) => {
    const a = await h.call('POST', '/api/v1/webhooks', { key, body });
    expect(a.status, a.text).toBe(201);
    return a.json.data as { id: string; secret: string; cursor: string };
  };
  const bulk = (key: string, slug: string, names: string[]) => h.call('POST', `/api/v1/org/objects/${slug}/record/bulk_create`, { key, body: names.map((name) => ({ name })) });

  it('delivers every change of its organization once, signed as Standard Webhooks, in log order', async () => {
    const r = await receiver();
    const start = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    const hook = await create(KEYS.acmeAdmin, { url: r.url, objects: ['contact'], description: 'test' });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    expect(hook).toMatchObject({ status: 'active', url: r.url, objects: ['contact'], operations: null });
    // The listing never shows the secret again.
    const listed = (await h.call('GET', '/api/v1/webhooks', { key: KEYS.acmeAdmin })).json.data.webhooks;
    expect(listed.find((w: any) => w.id === hook.id).secret).toBeUndefined();

    const made = await bulk(KEYS.acmeAdmin, 'contact', ['Hook One Acme', 'Hook Two Acme']);
    await bulk(KEYS.acmeAdmin, 'account', ['Not Selected Acme']);
    await bulk(KEYS.globexAdmin, 'contact', ['Hook Globex']);
    await h.call('DELETE', `/api/v1/org/objects/contact/record/${made.json.data.ids[0]}`, { key: KEYS.acmeAdmin });
    await r.until(3);
    const feed = (await allChanges(h, KEYS.acmeAdmin, start)).changes.filter((c) => c.object_slug === 'contact');
    const got = events(r);
    expect(got.map((e) => e.id)).toEqual(feed.map((c) => c.event_id));
    expect(got.map((e) => e.body.type)).toEqual(['record.created', 'record.created', 'record.deleted']);
    expect(got.map((e) => e.body.data)).toEqual(feed);
    const verifier = new Webhook(hook.secret);
    for (const x of r.received) expect(verifier.verify(x.body, x.headers)).toEqual(JSON.parse(x.body));
    // A signature under another secret does not verify.
    expect(() => new Webhook('whsec_' + Buffer.from('another secret, 24 bytes').toString('base64')).verify(r.received[0]!.body, r.received[0]!.headers)).toThrow();
    // An attempt is recorded after its receiver answered: the third may still be on its way in.
    const attempts = await eventually(async () => {
      const listed = (await h.call('GET', `/api/v1/webhooks/${hook.id}/deliveries?status=succeeded`, { key: KEYS.acmeAdmin })).json.data.deliveries;
      return listed.length >= feed.length ? listed : undefined;
    }, 'every delivery recorded as succeeded');
    expect(attempts.map((a: any) => a.event_id).sort()).toEqual(feed.map((c) => c.event_id).sort());
    expect(attempts.every((a: any) => a.http_status === 204 && typeof a.latency_ms === 'number')).toBe(true);
    // The ping.
    const ping = await h.call('POST', `/api/v1/webhooks/${hook.id}/test`, { key: KEYS.acmeAdmin });
    expect(ping.json.data).toMatchObject({ success: true, http_status: 204 });
    expect(JSON.parse(r.received.at(-1)!.body).type).toBe('webhook.test');
    await h.call('DELETE', `/api/v1/webhooks/${hook.id}`, { key: KEYS.acmeAdmin });
  });

  it('keeps endpoints to their organization and their admins', async () => {
    const r = await receiver();
    const hook = await create(KEYS.acmeAdmin, { url: r.url });
    expectEnvelope(await h.call('GET', `/api/v1/webhooks/${hook.id}`, { key: KEYS.globexAdmin }), 400, 'NOT_FOUND');
    expectEnvelope(await h.call('DELETE', `/api/v1/webhooks/${hook.id}`, { key: KEYS.globexAdmin }), 400, 'NOT_FOUND');
    expect((await h.call('GET', '/api/v1/webhooks', { key: KEYS.globexAdmin })).json.data.webhooks.some((w: any) => w.id === hook.id)).toBe(false);
    expectEnvelope(await h.call('GET', '/api/v1/webhooks', { key: KEYS.acmeMember }), 403, 'PERMISSION_DENIED');
    expectEnvelope(await h.call('POST', '/api/v1/webhooks', { key: KEYS.acmeMember, body: { url: r.url } }), 403, 'PERMISSION_DENIED');
    expectEnvelope(await h.call('POST', '/api/v1/webhooks', { key: KEYS.acmeAdmin, body: { url: r.url, operations: ['exploded'] } }), 400, 'VALIDATION_FAILED');
    expectEnvelope(await h.call('POST', '/api/v1/webhooks', { key: KEYS.acmeAdmin, body: { url: r.url, objects: ['contcat'] } }), 400, 'INVALID_SLUG');
    await h.call('DELETE', `/api/v1/webhooks/${hook.id}`, { key: KEYS.acmeAdmin });
  });

  it('retries a failing receiver in order through an outage until every change arrives, and replays from a cursor', async () => {
    const r = await receiver();
    // Seeded: about one answer in five is a 500; after the 100th delivery the receiver is down
    // (503) for 1.5 s, a fraction of the retry window (24 h, scaled to about 9 s), as 30 s is of 24 h.
    let seed = 12345;
    const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    let downUntil = 0;
    r.answer = () => {
      if (downUntil === 0 && r.received.length >= 100) downUntil = Date.now() + 1500;
      if (Date.now() < downUntil) return 503;
      return random() < 0.2 ? 500 : 200;
    };
    const start = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.globexAdmin })).json.data.cursor as string;
    const hook = await create(KEYS.globexAdmin, { url: r.url, objects: ['account'] });
    const total = 300;
    for (let i = 0; i < total; i += 100) {
      expect((await bulk(KEYS.globexAdmin, 'account', Array.from({ length: 100 }, (_, j) => `Flaky ${i + j} Globex`))).status).toBe(200);
    }
    await r.until(total);
    const feed = (await allChanges(h, KEYS.globexAdmin, start)).changes.filter((c) => c.object_slug === 'account');
    expect(feed).toHaveLength(total);
    const got = events(r).map((e) => e.id);
    // Every change at least once, and accepted in log order.
    expect(new Set(got)).toEqual(new Set(feed.map((c) => c.event_id)));
    const order = new Map(feed.map((c, i) => [c.event_id, i]));
    for (let i = 1; i < got.length; i++) expect(order.get(got[i]!)!).toBeGreaterThanOrEqual(order.get(got[i - 1]!)!);
    const failed = (await h.call('GET', `/api/v1/webhooks/${hook.id}/deliveries?status=failed&limit=500`, { key: KEYS.globexAdmin })).json.data.deliveries;
    expect(failed.length).toBeGreaterThanOrEqual(40);
    expect(failed.every((a: any) => a.http_status >= 500 && a.next_attempt_at !== null)).toBe(true);

    // A replay from the middle sends the rest again, with the same ids.
    r.answer = () => 200;
    const before = r.received.length;
    const replay = await h.call('POST', `/api/v1/webhooks/${hook.id}/replay`, { key: KEYS.globexAdmin, body: { after: feed[total - 11]!.cursor } });
    expect(replay.status, replay.text).toBe(200);
    await r.until(before + 10);
    expect(events(r).slice(before).map((e) => e.id)).toEqual(feed.slice(total - 10).map((c) => c.event_id));
    expectEnvelope(await h.call('POST', `/api/v1/webhooks/${hook.id}/replay`, { key: KEYS.globexAdmin, body: { after: 'nope' } }), 400, 'INVALID_CURSOR');
    await h.call('DELETE', `/api/v1/webhooks/${hook.id}`, { key: KEYS.globexAdmin });
  }, 120_000);

  it('dead-letters a change retried for the whole window, goes on with the next, and stops for a 410', async () => {
    const r = await receiver();
    let failFirst = true;
    r.answer = () => (failFirst ? 500 : 200);
    const hook = await create(KEYS.acmeAdmin, { url: r.url, objects: ['account'] });
    const before = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    await bulk(KEYS.acmeAdmin, 'account', ['Dead Letter Acme']);
    // The window (24 h, scaled to about 9 s) runs out; the change is dead-lettered and listed.
    const dead = await eventually(async () => {
      const list = (await h.call('GET', `/api/v1/webhooks/${hook.id}/deliveries?status=dead_lettered`, { key: KEYS.acmeAdmin })).json.data.deliveries;
      return list.length > 0 ? list : undefined;
    }, 'a dead letter');
    expect(dead).toHaveLength(1);
    failFirst = false;
    await bulk(KEYS.acmeAdmin, 'account', ['After Dead Acme']);
    await r.until(1);
    expect(JSON.parse(r.received[0]!.body).data.record.name).toBe('After Dead Acme');
    // Replaying from before the dead letter delivers it after all.
    await h.call('POST', `/api/v1/webhooks/${hook.id}/replay`, { key: KEYS.acmeAdmin, body: { after: before } });
    await r.until(2);
    expect(r.received.map((x) => x.headers['webhook-id'])).toContain(dead[0].event_id);

    r.answer = () => 410;
    await bulk(KEYS.acmeAdmin, 'account', ['Gone Acme']);
    const disabled = await eventually(async () => {
      const w = (await h.call('GET', `/api/v1/webhooks/${hook.id}`, { key: KEYS.acmeAdmin })).json.data;
      return w.status === 'disabled' ? w : undefined;
    }, 'disabled by a 410');
    expect(disabled.disabled_reason).toContain('410');
    await h.call('DELETE', `/api/v1/webhooks/${hook.id}`, { key: KEYS.acmeAdmin });
  }, 120_000);

  /**
   * An endpoint of Acme's accounts whose receiver holds the delivery of a new account `name`
   * unanswered; `before` is a cursor from before it. The receiver answers 200 what comes after
   * `answerFromNowOn()`; `r.release()` answers the held one.
   */
  const heldDelivery = async (name: string) => {
    const r = await receiver();
    let hang = true;
    r.answer = () => (hang ? 'hang' : 200);
    const hook = await create(KEYS.acmeAdmin, { url: r.url, objects: ['account'] });
    const before = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    await bulk(KEYS.acmeAdmin, 'account', [name]);
    await r.untilHung(1);
    return { r, hook, before, answerFromNowOn: () => { hang = false; } };
  };
  /** The held delivery of `name` came again, once, under its webhook-id; the endpoint then goes. */
  const expectSentAgain = async (r: Receiver, hook: { id: string }, name: string) => {
    const again = events(r);
    expect(again.map((e) => e.id)).toEqual([r.hungRequests[0]!.headers['webhook-id']]);
    expect(again[0]!.body.data.record.name).toBe(name);
    await h.call('DELETE', `/api/v1/webhooks/${hook.id}`, { key: KEYS.acmeAdmin });
  };

  it('keeps a replay made while a delivery waits for its answer: the change is sent again after it', async () => {
    const { r, hook, before, answerFromNowOn } = await heldDelivery('In Flight Acme');
    // Replayed from before the change while its delivery is out (what comes from now on is
    // answered); then the receiver answers the one that was out.
    answerFromNowOn();
    const replay = await h.call('POST', `/api/v1/webhooks/${hook.id}/replay`, { key: KEYS.acmeAdmin, body: { after: before } });
    expect(replay.status, replay.text).toBe(200);
    r.release();
    // The answer of the delivery that was out does not move the endpoint past the replay: the
    // change comes again.
    await r.until(1, 30_000);
    await expectSentAgain(r, hook, 'In Flight Acme');
  }, 120_000);

  it('keeps the claim a replay led to when the delivery that was out is answered before that claim looks at the endpoint', async () => {
    const { r, hook, before, answerFromNowOn } = await heldDelivery('Reclaimed Acme');
    // The order this test makes: the replay; the endpoint claimed again (by this same instance,
    // whose other slots are free); the delivery that was out answered, and its claim let go; only
    // then the new claim's first look at the endpoint. The service's own statements, held on the
    // service's database until the release has run, make it.
    const db = h.db as unknown as { query: (sql: string, params?: readonly unknown[]) => Promise<unknown> };
    const query = db.query;
    let held = false;
    let released!: () => void;
    const release = new Promise<void>((resolve) => (released = resolve));
    let reclaimed!: () => void;
    const claimLooks = new Promise<void>((resolve) => (reclaimed = resolve));
    db.query = async function (this: unknown, sql: string, params?: readonly unknown[]) {
      const look = sql.startsWith('SELECT id, org_id, url') && params?.[0] === hook.id;
      if (look && !held) {
        held = true;
        reclaimed();
        await release;
      }
      const rows = await query.call(this, sql, params);
      if (held && sql.includes('SET claimed_by = NULL') && params?.[0] === hook.id) released();
      return rows;
    };
    try {
      answerFromNowOn();
      const replay = await h.call('POST', `/api/v1/webhooks/${hook.id}/replay`, { key: KEYS.acmeAdmin, body: { after: before } });
      expect(replay.status, replay.text).toBe(200);
      await claimLooks;
      r.release();
      await r.until(1, 60_000);
    } finally {
      db.query = query;
      released();
    }
    await expectSentAgain(r, hook, 'Reclaimed Acme');
  }, 120_000);

  it('holds an endpoint it is delivering to for longer than the delivery may take, so no other claim sends the same delivery beside it', async () => {
    const { r, hook } = await heldDelivery('Long Held Acme');
    const { rows: [row] } = await h.db.query<{ until: string }>(`SELECT claimed_until::text AS until FROM ${SERVICE_SCHEMA}.webhook_endpoints WHERE id = $1`, [hook.id]);
    // This service's delivery timeout is 30 s (beforeAll): the claim, made moments ago, runs out
    // later than that from now.
    expect(Number(row!.until) - Date.now()).toBeGreaterThan(30_000);
    r.release();
    await h.call('DELETE', `/api/v1/webhooks/${hook.id}`, { key: KEYS.acmeAdmin });
  });

  it('signs with the old and the new secret during a rotation, and with the new alone after it', async () => {
    const r = await receiver();
    const hook = await create(KEYS.acmeAdmin, { url: r.url, objects: ['contact'] });
    const rotated = await h.call('POST', `/api/v1/webhooks/${hook.id}/rotate-secret`, { key: KEYS.acmeAdmin });
    const fresh = rotated.json.data.secret as string;
    expect(fresh).not.toBe(hook.secret);
    await bulk(KEYS.acmeAdmin, 'contact', ['Rotated Acme']);
    await r.until(1);
    const first = r.received[0]!;
    expect(first.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(hook.secret).verify(first.body, first.headers)).toBeTruthy();
    expect(new Webhook(fresh).verify(first.body, first.headers)).toBeTruthy();
    // The overlap ends (its time moved into the past here): the old secret signs no more.
    await h.db.query(`UPDATE ${SERVICE_SCHEMA}.webhook_endpoints SET previous_secret_until = 0 WHERE id = $1`, [hook.id]);
    await bulk(KEYS.acmeAdmin, 'contact', ['Rotated Later Acme']);
    await r.until(2);
    const second = r.received[1]!;
    expect(second.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(new Webhook(fresh).verify(second.body, second.headers)).toBeTruthy();
    expect(() => new Webhook(hook.secret).verify(second.body, second.headers)).toThrow();
    await h.call('DELETE', `/api/v1/webhooks/${hook.id}`, { key: KEYS.acmeAdmin });
  });

  it('lets an organization whose receivers hang delay only itself', async () => {
    const slow = await receiver();
    slow.answer = () => 'hang';
    const fast = await receiver();
    const hooks = [];
    for (let i = 0; i < 20; i++) hooks.push(await create(KEYS.globexAdmin, { url: slow.url, objects: ['contact'] }));
    await bulk(KEYS.globexAdmin, 'contact', ['Hang Globex']);
    const mine = await create(KEYS.acmeAdmin, { url: fast.url, objects: ['account'] });
    // Every delivery slot of the other organization is taken by a receiver that does not answer.
    await slow.untilHung(4);
    for (let i = 0; i < 10; i++) await bulk(KEYS.acmeAdmin, 'account', [`Fair ${i} Acme`]);
    // All of them arrive while the other organization's receivers still hang.
    await fast.until(10);
    expect(slow.hung).toBeGreaterThanOrEqual(4);
    slow.release();
    for (const w of hooks) await h.call('DELETE', `/api/v1/webhooks/${w.id}`, { key: KEYS.globexAdmin });
    await h.call('DELETE', `/api/v1/webhooks/${mine.id}`, { key: KEYS.acmeAdmin });
  }, 60_000);
});
