import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelope } from '../server/support.js';
import { eventually, Receiver } from './support.js';
import { allChanges, KEYS, startChangesService, type ChangesHarness, type DbKind } from '../changes/support.js';

/**
 * POST /api/v1/webhooks/{id}/deliveries/{delivery_id}/retry: one dead-lettered change sent again,
 * with its own webhook-id and a fresh signature, logged as an attempt, without moving the endpoint;
 * only by an admin of the endpoint's organization, and only for a dead letter; on embedded PGlite
 * and on PostgreSQL 15.
 */

describe.each<DbKind>(['pglite', 'postgres'])('retrying one dead-lettered change on %s', (kind) => {
  let h: ChangesHarness;
  const r = new Receiver();

  beforeAll(async () => {
    await r.start();
    // 24 h of retries become about 9 s, hourly retries 360 ms: ten attempts and more before the
    // dead letter even when each attempt takes a few hundred ms on a loaded machine.
    h = await startChangesService(kind, { webhookAllowPrivate: true, webhookRetryScale: 0.0001, webhookTimeoutMs: 30_000 });
  }, 120_000);

  afterAll(async () => {
    await h?.close();
    await r.stop();
  });

  it('sends the change again with its webhook-id, logs the attempt, and leaves the endpoint where it was', async () => {
    let failing = true;
    r.answer = () => (failing ? 500 : 200);
    const made = await h.call('POST', '/api/v1/webhooks', { key: KEYS.acmeAdmin, body: { url: r.url, objects: ['account'] } });
    expect(made.status, made.text).toBe(201);
    const hook = made.json.data as { id: string; secret: string };
    const created = await h.call('POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Retried Acme' }] });
    expect(created.status, created.text).toBe(200);
    const dead = await eventually(async () => {
      const list = (await h.call('GET', `/api/v1/webhooks/${hook.id}/deliveries?status=dead_lettered`, { key: KEYS.acmeAdmin })).json.data.deliveries;
      return list.length > 0 ? list[0] : undefined;
    }, 'a dead letter');
    const failed = (await h.call('GET', `/api/v1/webhooks/${hook.id}/deliveries?status=failed`, { key: KEYS.acmeAdmin })).json.data.deliveries;
    expect(failed.length).toBeGreaterThan(0);
    const change = (await allChanges(h, KEYS.acmeAdmin)).changes.find((c) => c.event_id === dead.event_id);
    expect(change.record.name).toBe('Retried Acme');
    // The log pages newest first by number, across ids of one digit and of two.
    const all = (await h.call('GET', `/api/v1/webhooks/${hook.id}/deliveries?limit=500`, { key: KEYS.acmeAdmin })).json.data.deliveries as { id: string }[];
    expect(all.length).toBeGreaterThanOrEqual(10);
    const paged: string[] = [];
    for (let before: string | null = '', n = 0; before !== null && n < 200; n++) {
      const p: { deliveries: { id: string }[]; next_before: string | null } = (await h.call('GET', `/api/v1/webhooks/${hook.id}/deliveries?limit=3${before === '' ? '' : `&before=${before}`}`, { key: KEYS.acmeAdmin })).json.data;
      paged.push(...p.deliveries.map((d: { id: string }) => d.id));
      before = p.next_before;
    }
    expect(paged).toEqual(all.map((d) => d.id));
    expect(paged.map(Number)).toEqual(paged.map(Number).sort((a, b) => b - a));
    const retryPath = `/api/v1/webhooks/${hook.id}/deliveries/${dead.id}/retry`;

    // Another organization's admin, a member, a delivery that is not a dead letter, ids that do not exist.
    expectEnvelope(await h.call('POST', retryPath, { key: KEYS.globexAdmin }), 400, 'NOT_FOUND');
    const theirs = await h.call('POST', '/api/v1/webhooks', { key: KEYS.globexAdmin, body: { url: r.url } });
    expectEnvelope(await h.call('POST', `/api/v1/webhooks/${theirs.json.data.id}/deliveries/${dead.id}/retry`, { key: KEYS.globexAdmin }), 400, 'NOT_FOUND');
    expectEnvelope(await h.call('POST', retryPath, { key: KEYS.acmeMember }), 403, 'PERMISSION_DENIED');
    const notDead = await h.call('POST', `/api/v1/webhooks/${hook.id}/deliveries/${failed[0].id}/retry`, { key: KEYS.acmeAdmin });
    expectEnvelope(notDead, 400, 'VALIDATION_FAILED');
    expect(notDead.json.data.message).toContain('only a dead-lettered change');
    expectEnvelope(await h.call('POST', `/api/v1/webhooks/${hook.id}/deliveries/99999999/retry`, { key: KEYS.acmeAdmin }), 400, 'NOT_FOUND');
    expectEnvelope(await h.call('POST', `/api/v1/webhooks/${hook.id}/deliveries/abc/retry`, { key: KEYS.acmeAdmin }), 400, 'VALIDATION_FAILED');
    expect(r.received).toHaveLength(0);

    const endpointBefore = (await h.call('GET', `/api/v1/webhooks/${hook.id}`, { key: KEYS.acmeAdmin })).json.data;
    // Still failing: the answer says so, and the change stays dead-lettered.
    const stillDead = await h.call('POST', retryPath, { key: KEYS.acmeAdmin });
    expect(stillDead.status, stillDead.text).toBe(200);
    expect(stillDead.json.data).toMatchObject({ success: false, http_status: 500, error: 'the receiver answered HTTP 500' });
    expect(stillDead.json.data.delivery).toMatchObject({ event_id: dead.event_id, cursor: change.cursor, outcome: 'dead_lettered', http_status: 500, next_attempt_at: null });

    failing = false;
    const ok = await h.call('POST', retryPath, { key: KEYS.acmeAdmin });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.data).toMatchObject({ success: true, http_status: 200, error: null });
    expect(ok.json.data.delivery).toMatchObject({ event_id: dead.event_id, cursor: change.cursor, outcome: 'succeeded', http_status: 200 });
    expect(r.received).toHaveLength(1);
    const got = r.received[0]!;
    expect(got.headers['webhook-id']).toBe(dead.event_id);
    const body = new Webhook(hook.secret).verify(got.body, got.headers) as { type: string; data: unknown };
    expect(body.type).toBe('record.created');
    expect(body.data).toEqual(change);

    // The log lists both retries, newest first; the endpoint's cursor and schedule did not move.
    const log = (await h.call('GET', `/api/v1/webhooks/${hook.id}/deliveries?limit=2`, { key: KEYS.acmeAdmin })).json.data.deliveries;
    expect(log.map((d: any) => [d.id, d.outcome])).toEqual([[ok.json.data.delivery.id, 'succeeded'], [stillDead.json.data.delivery.id, 'dead_lettered']]);
    const endpointAfter = (await h.call('GET', `/api/v1/webhooks/${hook.id}`, { key: KEYS.acmeAdmin })).json.data;
    expect({ ...endpointAfter, updated_at: 0 }).toEqual({ ...endpointBefore, updated_at: 0 });
    // The other organization's endpoint never saw it.
    expect((await h.call('GET', `/api/v1/webhooks/${theirs.json.data.id}/deliveries`, { key: KEYS.globexAdmin })).json.data.deliveries).toEqual([]);
  }, 120_000);
});
