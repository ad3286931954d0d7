import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, call, type Running } from '../server/support.js';
import { eventually, Receiver } from '../webhooks/support.js';
import { openWorld, screenshot, type ConsoleWorld } from './support.js';

/**
 * The console's Webhooks page in a real browser (Debian's chromium, driven by playwright-core),
 * against a receiver on loopback (the service runs with the allow-private flag, and a retry
 * window scaled down to about 2 s): an endpoint added with its secret shown once and copied, a
 * refused URL's error, the delivery log with a dead letter, its retry, a replay, a test ping, a
 * rotated secret, pause and resume, deletion; another organization's admin never sees the
 * endpoint and a member never sees the page. With OQL_SCREENSHOTS=1, photographed at 1280x800
 * into docs/console/.
 */

const CHROMIUM = process.env.OQL_CHROMIUM ?? '/usr/bin/chromium';
const BROWSER_WAIT = 120_000;

let world: ConsoleWorld;
let server: Running;
let browser: Browser;
const receiver = new Receiver();

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: apt-get install -y chromium, or point OQL_CHROMIUM at a Chromium binary.`);
  await receiver.start();
  world = await openWorld();
  server = await world.start({ webhookAllowPrivate: true, webhookRetryScale: 0.00002, webhookTimeoutMs: 30_000 });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await world?.close();
  await receiver.stop();
});

async function open(key: string, path = '/webhooks') {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(BROWSER_WAIT);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    // The browser logs every 4xx answer it fetched; the page shows those itself.
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(server.url + path);
  await page.getByLabel('API key', { exact: true }).fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  return { context, page, problems };
}

/** Every control on the page has a name a screen reader can say. */
async function unnamedControls(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll('button, input, select, textarea, a[href]')]
    .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby') && !el.textContent.trim())
    .map((el) => el.outerHTML.slice(0, 120))`);
}

const restHooks = async (key: string) => (await call(server.url, 'GET', '/api/v1/webhooks', { key })).json.data.webhooks as { id: string; url: string; status: string }[];

describe('the Webhooks page in Chromium', { timeout: 6 * BROWSER_WAIT }, () => {
  it('adds an endpoint, shows its log, retries a dead letter, replays, pings, rotates, pauses and deletes; for admins of its organization only', async () => {
    let failing = true;
    receiver.answer = () => (failing ? 500 : 200);
    // Organization B's endpoint, made over REST: A's admin must never see it.
    const theirs = await call(server.url, 'POST', '/api/v1/webhooks', { key: KEYS.globexAdmin, body: { url: `${receiver.url}?org=globex`, description: 'Globex ledger' } });
    expect(theirs.status, theirs.text).toBe(201);

    const { context, page, problems } = await open(KEYS.acmeAdmin);
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByText('No endpoints yet').waitFor();

    // Refused URLs: the service's message, in the page.
    await page.getByLabel('URL', { exact: true }).fill('ftp://hooks.example.com/oql');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('alert').filter({ hasText: 'the webhook URL is refused: only https URLs are allowed, not ftp' }).waitFor();
    await page.getByLabel('URL', { exact: true }).fill(receiver.url);
    await page.getByLabel('Objects', { exact: true }).fill('acount');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid slug' }).filter({ hasText: "did you mean 'account'?" }).waitFor();
    expect(await restHooks(KEYS.acmeAdmin)).toEqual([]);

    await page.getByLabel('Objects', { exact: true }).fill('account');
    await page.getByLabel('Description', { exact: true }).fill('Warehouse sync');
    await page.getByLabel('created', { exact: true }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secretField = page.getByLabel('Signing secret', { exact: true });
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByRole('button', { name: 'Copied', exact: true }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    const [hook] = await restHooks(KEYS.acmeAdmin) as [{ id: string; url: string; objects: string[]; operations: string[]; description: string; status: string }];
    expect(hook).toMatchObject({ url: receiver.url, objects: ['account'], operations: ['created'], description: 'Warehouse sync', status: 'active' });
    const row = page.getByRole('row').filter({ hasText: hook.id });
    await row.getByText('none yet').waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'Globex ledger' }).count()).toBe(0);
    expect(await page.locator('main').textContent()).not.toContain(theirs.json.data.id);
    await screenshot(page, 'webhooks.png');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await secretField.count()).toBe(0);

    // A change the receiver refuses for the whole (scaled) retry window is dead-lettered.
    const head = (await call(server.url, 'GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    const made = await call(server.url, 'POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Hooked Acme Account' }] });
    expect(made.status, made.text).toBe(200);
    const dead = await eventually(async () => {
      const list = (await call(server.url, 'GET', `/api/v1/webhooks/${hook.id}/deliveries?status=dead_lettered`, { key: KEYS.acmeAdmin })).json.data.deliveries;
      return list[0] as { id: string; event_id: string; cursor: string } | undefined;
    }, 'a dead letter');
    const attempts = (await call(server.url, 'GET', `/api/v1/webhooks/${hook.id}/deliveries?limit=500`, { key: KEYS.acmeAdmin })).json.data.deliveries as unknown[];

    await page.reload();
    await row.getByText('500', { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Deliveries' }).click();
    const log = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: 'Latency' }) });
    await log.getByText('dead lettered', { exact: true }).waitFor();
    expect(await log.locator('tbody tr').count()).toBe(Math.min(25, attempts.length));
    const deadRow = log.getByRole('row').filter({ hasText: 'dead lettered' });
    expect(await deadRow.textContent()).toContain('the receiver answered HTTP 500');
    expect(await deadRow.textContent()).toContain(dead.event_id);
    await page.getByRole('heading', { level: 2, name: /^Deliveries to/ }).evaluate((h) => h.scrollIntoView());
    await screenshot(page, 'webhooks-deliveries.png');
    await page.getByLabel('Show', { exact: true }).selectOption('dead_lettered');
    await expect.poll(() => log.locator('tbody tr').count()).toBe(1);

    // Retried from the page once the receiver is back: the same webhook-id, signed with the copied secret.
    failing = false;
    await log.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('status').filter({ hasText: `Retry of change ${dead.cursor}: the receiver answered HTTP 200` }).waitFor();
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.headers['webhook-id']).toBe(dead.event_id);
    const delivered = new Webhook(secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers) as { data: { record: { name: string } } };
    expect(delivered.data.record.name).toBe('Hooked Acme Account');

    // Replay from the cursor before the change: it is sent again, in the stream.
    await page.getByLabel('Replay every change after', { exact: true }).fill(head);
    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    await page.getByRole('status').filter({ hasText: `every change after ${head} is sent again` }).waitFor();
    await receiver.until(2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(dead.event_id);
    await page.getByLabel('Replay every change after', { exact: true }).fill('not-a-cursor');
    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    await page.locator('section.deliveries').getByRole('alert').filter({ hasText: 'is not a change cursor' }).waitFor();

    // A test ping, then a rotated secret: the next ping verifies with the new secret.
    await row.getByRole('button', { name: 'Send test' }).click();
    await page.getByRole('status').filter({ hasText: `Test ping to ${receiver.url}: the receiver answered HTTP 200` }).waitFor();
    expect(JSON.parse(receiver.received.at(-1)!.body).type).toBe('webhook.test');
    await row.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog', { name: 'Rotate its signing secret?' }).getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = await page.getByLabel('Signing secret', { exact: true }).inputValue();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByRole('button', { name: 'Done' }).click();
    const pings = receiver.received.length;
    await row.getByRole('button', { name: 'Send test' }).click();
    await receiver.until(pings + 1);
    const ping = receiver.received.at(-1)!;
    expect(new Webhook(rotated).verify(ping.body, ping.headers)).toMatchObject({ type: 'webhook.test' });
    expect(new Webhook(secret).verify(ping.body, ping.headers)).toMatchObject({ type: 'webhook.test' });

    // Pause and resume.
    await row.getByRole('button', { name: 'Pause' }).click();
    await row.getByText('paused', { exact: true }).waitFor();
    expect((await restHooks(KEYS.acmeAdmin))[0]!.status).toBe('paused');
    await row.getByRole('button', { name: 'Resume' }).click();
    await row.getByText('active', { exact: true }).waitFor();
    expect((await restHooks(KEYS.acmeAdmin))[0]!.status).toBe('active');
    expect(await unnamedControls(page)).toEqual([]);

    // Organization B's admin sees its own endpoint and nothing of A's.
    const globex = await open(KEYS.globexAdmin);
    await globex.page.getByRole('row').filter({ hasText: 'Globex ledger' }).waitFor();
    const globexText = (await globex.page.locator('main').textContent())!;
    expect(globexText).not.toContain(hook.id);
    expect(globexText).not.toContain('Warehouse sync');
    expect(globex.problems).toEqual([]);
    await globex.context.close();

    // A member has no Webhooks page: no link, and its path shows the keys page.
    const member = await open(KEYS.acmeMember);
    await member.page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    expect(await member.page.getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    expect(member.problems).toEqual([]);
    await member.context.close();

    // Deleted after a confirmation.
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete this endpoint?' }).getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByText('No endpoints yet').waitFor();
    expect(await restHooks(KEYS.acmeAdmin)).toEqual([]);
    expect((await restHooks(KEYS.globexAdmin)).map((w) => w.id)).toEqual([theirs.json.data.id]);
    expect(problems).toEqual([]);
    await context.close();
  });
});
