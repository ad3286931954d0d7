import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authorizeUrl, callbackServer, openHarness, pkcePair, registerClient, startAuthServer, tokenRequest,
  type Harness, type Running,
} from './support.js';

/**
 * The consent page in a real browser (Debian's chromium, driven by playwright-core): the user
 * approves or denies by hand, with JavaScript off as well as on, on a phone-width screen.
 */

const CHROMIUM = process.env.OQL_CHROMIUM ?? '/usr/bin/chromium';
// A browser on a busy two-core machine can take far longer than Playwright's 30-second default.
const BROWSER_WAIT = 120_000;

let h: Harness;
let server: Running;
let callback: Awaited<ReturnType<typeof callbackServer>>;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: the consent-page tests need a real browser. `
      + 'Run `sh scripts/ensure-postgres.sh` as root (it installs Debian\'s chromium), or `apt-get install -y chromium`, '
      + 'or point OQL_CHROMIUM at a Chromium binary.');
  }
  h = await openHarness();
  server = await startAuthServer(h.db);
  callback = await callbackServer();
  // The sandbox needs user namespaces, which containers running as root often lack.
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
afterAll(async () => {
  await browser?.close();
  await callback?.close();
  await server?.close();
  await h?.close();
});

async function authorization(clientName: string, state: string) {
  const clientId = await registerClient(server.baseUrl, 'acme', [callback.url], clientName);
  const { verifier, challenge } = pkcePair();
  const url = authorizeUrl(server.baseUrl, 'acme', {
    response_type: 'code', client_id: clientId, redirect_uri: callback.url, code_challenge: challenge,
    code_challenge_method: 'S256', resource: h.a.resource, state,
  });
  return { clientId, verifier, url };
}

describe('consent page in Chromium', { timeout: 4 * BROWSER_WAIT }, () => {
  it('approves without JavaScript and lands on the redirect URI with a code that redeems', async () => {
    const { clientId, verifier, url } = await authorization('Browser agent', 'state-approve');
    const context = await browser.newContext({ javaScriptEnabled: false });
    context.setDefaultTimeout(BROWSER_WAIT);
    const page = await context.newPage();
    await page.goto(url);
    expect(await page.textContent('#client-name')).toBe('Browser agent');
    expect(await page.textContent('#workspace')).toBe('acme');
    await page.fill('#api_key', h.a.adminKey);
    await Promise.all([page.waitForURL((u) => u.href.startsWith(callback.url)), page.click('button[value=approve]')]);
    const landed = new URL(page.url());
    expect(landed.searchParams.get('state')).toBe('state-approve');
    const code = landed.searchParams.get('code');
    expect(code).toMatch(/\S{20,}/);
    expect(await page.textContent('#done')).toBe('received');
    await context.close();

    const tokens = await tokenRequest(server.baseUrl, 'acme', {
      grant_type: 'authorization_code', client_id: clientId, code: code!, redirect_uri: callback.url, code_verifier: verifier, resource: h.a.resource,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.token_type).toBe('Bearer');
  });

  it('denies and lands with access_denied', async () => {
    const { url } = await authorization('Browser agent', 'state-deny');
    const context = await browser.newContext();
    context.setDefaultTimeout(BROWSER_WAIT);
    const page = await context.newPage();
    await page.goto(url);
    // Deny needs no key: the field's `required` does not block it.
    await Promise.all([page.waitForURL((u) => u.href.startsWith(callback.url)), page.click('button[value=deny]')]);
    const landed = new URL(page.url());
    expect(landed.searchParams.get('error')).toBe('access_denied');
    expect(landed.searchParams.get('state')).toBe('state-deny');
    expect(landed.searchParams.get('code')).toBeNull();
    await context.close();
  });

  it('shows a wrong key on the page and stays there', async () => {
    const { url } = await authorization('Browser agent', 's');
    const context = await browser.newContext();
    context.setDefaultTimeout(BROWSER_WAIT);
    const page = await context.newPage();
    await page.goto(url);
    await page.fill('#api_key', h.b.adminKey);
    await Promise.all([page.waitForLoadState('load'), page.click('button[value=approve]')]);
    await page.waitForSelector('[role=alert]');
    expect(await page.textContent('[role=alert]')).toContain('not a valid key of the workspace acme');
    expect(page.url().startsWith(callback.url)).toBe(false);
    await context.close();
  });

  it('fits a 390-pixel phone screen without horizontal scrolling', async () => {
    const long = `An agent with a rather long name ${'x'.repeat(120)}`;
    const { url } = await authorization(long, 'state-phone');
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true });
    context.setDefaultTimeout(BROWSER_WAIT);
    const page = await context.newPage();
    await page.goto(url);
    // A string expression: the test compiles without the DOM library.
    const widths = await page.evaluate<{ scroll: number; client: number }>('({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })');
    expect(widths.client).toBe(390);
    expect(widths.scroll).toBeLessThanOrEqual(390);
    const button = await page.locator('button[value=approve]').boundingBox();
    expect(button!.x + button!.width).toBeLessThanOrEqual(390);
    expect(button!.height).toBeGreaterThanOrEqual(32);
    await context.close();
  });

  it('shows a <script> client name as text and never runs it', async () => {
    const name = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">';
    const { url } = await authorization(name, 's');
    const context = await browser.newContext();
    context.setDefaultTimeout(BROWSER_WAIT);
    const page = await context.newPage();
    await page.goto(url);
    expect(await page.textContent('#client-name')).toBe(name);
    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.title()).toBe(`Authorize ${name}`);
    await context.close();
  });

  it('cannot be put in a frame', async () => {
    const { url } = await authorization('Framed agent', 's');
    const context = await browser.newContext();
    context.setDefaultTimeout(BROWSER_WAIT);
    const page = await context.newPage();
    // A page of another origin (the callback server) framing the consent page.
    await page.goto(callback.url);
    // setContent waits for the load event, which waits for the frame's (refused) navigation.
    await page.setContent(`<iframe id="f" src="${url}" width="400" height="400"></iframe>`);
    expect(page.frames()).toHaveLength(2);
    let rendered = 0;
    for (const frame of page.frames()) rendered += await frame.locator('#api_key').count().catch(() => 0);
    expect(rendered).toBe(0);
    await context.close();
  });
});
