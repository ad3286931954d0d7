import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type OqlServer } from '../../src/server/app.js';
import { call } from '../server/support.js';
import { events, Receiver } from './support.js';
import { API_KEYS, KEYS, startChangesService, type ChangesHarness } from '../changes/support.js';
import { pgServerAvailable } from '../support/pg-server.js';

/**
 * A stopping instance does not wait out a receiver that hangs: it ends the delivery on the wire,
 * records nothing for it, and releases its claim, so another instance on the same database makes
 * the delivery under the same webhook-id. Here the delivery timeout is a minute and the test's own
 * limit 30 s: a stop that waited for the receiver would fail the test.
 */

const OPTIONS = { webhookAllowPrivate: true, webhookRetryScale: 0.0001, webhookTimeoutMs: 60_000 } as const;

describe.runIf(pgServerAvailable())('an instance stopping in the middle of a delivery', () => {
  let h: ChangesHarness;
  let second: OqlServer | undefined;
  const globex = new Receiver();
  const acme = new Receiver();

  beforeAll(async () => {
    h = await startChangesService('postgres', OPTIONS);
    await globex.start();
    await acme.start();
  }, 120_000);

  afterAll(async () => {
    await second?.close();
    await h?.server.close();
    await h?.pgServer?.stop();
    await globex.stop();
    await acme.stop();
  });

  it('ends the hung delivery at once, and another instance delivers it with the same id; the other organization gets only its own', async () => {
    globex.answer = () => 'hang';
    const hook = await h.call('POST', '/api/v1/webhooks', { key: KEYS.globexAdmin, body: { url: globex.url, objects: ['account'] } });
    expect(hook.status, hook.text).toBe(201);
    const acmeHook = await h.call('POST', '/api/v1/webhooks', { key: KEYS.acmeAdmin, body: { url: acme.url, objects: ['account'] } });
    expect(acmeHook.status, acmeHook.text).toBe(201);
    const made = await h.call('POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEYS.globexAdmin, body: [{ name: 'Stopping Globex' }] });
    expect(made.status, made.text).toBe(200);
    await globex.untilHung(1);
    const held = globex.hungRequests[0]!.headers['webhook-id'];

    // Resolves although the receiver still holds the request unanswered.
    await h.server.close();
    expect(globex.hung).toBe(1);

    globex.answer = () => 204;
    second = await createServer({ database: h.pgServer!.url, apiKeys: API_KEYS, env: {}, ...OPTIONS });
    await second.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(second.app.server.address() as { port: number }).port}`;
    await globex.until(1);
    expect(events(globex).map((e) => e.id)).toEqual([held]);
    expect(events(globex)[0]!.body.data.record.name).toBe('Stopping Globex');

    // The ended attempt left no failure behind: the one attempt on record is the delivery.
    const attempts = (await call(base, 'GET', `/api/v1/webhooks/${hook.json.data.id}/deliveries`, { key: KEYS.globexAdmin })).json.data.deliveries;
    expect(attempts.map((a: any) => [a.event_id, a.outcome])).toEqual([[held, 'succeeded']]);

    const mine = await call(base, 'POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'After Acme' }] });
    expect(mine.status, mine.text).toBe(200);
    await acme.until(1);
    expect(events(acme).map((e) => e.body.data.record.name)).toEqual(['After Acme']);
    expect(events(acme).map((e) => e.id)).not.toContain(held);
  }, 30_000);
});
