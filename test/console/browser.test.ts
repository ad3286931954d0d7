import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { databaseOf } from '../../src/run/database-of.js';
import { issueApiKey } from '../../src/service/store/api-keys.js';
import { recordToolCall } from '../../src/service/store/tool-logs.js';
import { KEYS, call, liveRows, type Running } from '../server/support.js';
import { openWorld, screenshot, type ConsoleWorld } from './support.js';

/**
 * The console in a real browser (Debian's chromium, driven by playwright-core), for two
 * organizations: sign-in, API keys made and revoked in the page and used over REST, a member's
 * view, the playground's diagnostics, fix and results, record values as text, CSRF, tool logs,
 * the Connect page's snippets run as pasted, sign-out. With OQL_SCREENSHOTS=1 (`npm run
 * screenshots`), each page is photographed at 1280x800 into docs/console/.
 */

const CHROMIUM = process.env.OQL_CHROMIUM ?? '/usr/bin/chromium';
// A browser on a busy two-core machine can take far longer than Playwright's 30-second default.
const BROWSER_WAIT = 120_000;
const XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
const run = promisify(execFile);
/** A tool's answer longer than the 1 KiB entry the test logs it in. */
const LONG_ANSWER = JSON.stringify({ objects: Array.from({ length: 40 }, (_, i) => ({ slug: `object_${i}`, display_name: `Object ${i}` })) }, null, 2);

let world: ConsoleWorld;
let server: Running;
let mcpUrl: string;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: the console tests need a real browser. `
      + "Run `sh scripts/ensure-postgres.sh` as root (it installs Debian's chromium), or `apt-get install -y chromium`, or point OQL_CHROMIUM at a Chromium binary.");
  }
  world = await openWorld();
  server = await world.start();
  await server.server.mcpApp.listen({ port: 0, host: '127.0.0.1' });
  mcpUrl = server.server.mcpUrl();
  const made = await call(server.url, 'POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: XSS }] });
  if (made.status !== 200) throw new Error(`seeding the record: ${made.status} ${made.text}`);
  const db = databaseOf(world.pool);
  const now = Date.now();
  for (let i = 0; i < 9; i++) {
    await recordToolCall(db, {
      orgId: 'org_acme', userId: i % 3 === 0 ? 'u_acme_member' : 'u_acme_admin', toolName: ['execute_query', 'describe_object', 'lint_query'][i % 3]!,
      inputParams: { query: `SELECT id, name FROM account ORDER BY name LIMIT ${i + 1}`, slug: 'account' }, responseTime: 8 + i * 1.5,
      responseCode: i === 4 ? 400 : 200, timestamp: now - i * 420_000,
      response: i === 4 ? `error UNKNOWN_COLUMN: call ${i} <b>refused</b>` : JSON.stringify({ records: [{ id: `acc_${i}`, name: `<i>call ${i}</i>` }] }, null, 2),
    });
  }
  // Globex's one call answered more than its entry may hold (a cap of 1 KiB here): it is cut, and marked.
  await recordToolCall(db, {
    orgId: 'org_globex', userId: 'u_globex_admin', toolName: 'list_objects', inputParams: {}, responseTime: 3, responseCode: 200, timestamp: now,
    response: LONG_ANSWER,
  }, 1024);
  // The sandbox needs user namespaces, which containers running as root often lack.
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await world?.close();
});

interface Tab {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Console errors and CSP reports: none is expected. */
  readonly problems: string[];
}

async function open(path = '/'): Promise<Tab> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(BROWSER_WAIT);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    // A 401 of the first session check before sign-in is the page asking, not a fault.
    if (m.type() === 'error' && !/status of 40[13]/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(server.url + path);
  return { context, page, problems };
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel('API key', { exact: true }).fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

async function goTo(page: Page, link: string, heading: string): Promise<void> {
  await page.getByRole('link', { name: link }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

/**
 * Types `query` into the playground, runs it once the editor holds it, and returns the line the
 * page answers with: the result's ("N rows in … ms") or an error banner's, so that a failure says
 * what the page showed instead of waiting for a line that never comes.
 */
async function runQuery(page: Page, query: string): Promise<string> {
  const editor = page.getByLabel('Query', { exact: true });
  await editor.fill(query);
  await expect.poll(() => editor.inputValue()).toBe(query);
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  const answer = page.locator('.result-line, .banner.error').first();
  await answer.waitFor();
  return (await answer.textContent())!;
}

/** Every control on the page has a name a screen reader can say: a label, aria-label(ledby) or text. */
async function unnamedControls(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll('button, input, select, textarea, a[href]')]
    .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby') && !el.textContent.trim())
    .map((el) => el.outerHTML.slice(0, 120))`);
}

/**
 * What of the keys table a 1280 px window does not show: the table scrolling sideways in its
 * frame, the page wider than the window, or a row's buttons past either's right edge.
 */
async function clippedKeys(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const wrap = document.querySelector('.table-wrap:has(table.keys)');
    const out = [];
    if (wrap.scrollWidth > wrap.clientWidth) out.push('the table scrolls sideways: ' + wrap.scrollWidth + ' px in ' + wrap.clientWidth);
    if (document.documentElement.scrollWidth > innerWidth) out.push('the page is ' + document.documentElement.scrollWidth + ' px wide');
    const edge = Math.min(wrap.getBoundingClientRect().right, innerWidth);
    for (const b of wrap.querySelectorAll('td.actions button')) {
      const r = b.getBoundingClientRect();
      if (r.right > edge) out.push(b.textContent + ' of ' + b.closest('tr').querySelector('th').textContent + ' ends at ' + r.right + ' px, past ' + edge);
    }
    return out;
  })()`);
}

/** The oql command, in this process, as a shell would run it. */
async function oql(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = { out: '', err: '', stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t), cwd: process.cwd(), env: {} };
  const code = await main(argv, io as unknown as CliIo);
  return { code, out: io.out, err: io.err };
}

async function rest(path: string, key: string, body?: unknown): Promise<number> {
  return (await call(server.url, body === undefined ? 'GET' : 'POST', path, { key, ...(body === undefined ? {} : { body }) })).status;
}

const REPORT = { query: 'SELECT id FROM account LIMIT 5', slug: 'account' };

// A real browser on a busy two-core machine now and then misses a moment: a test that failed runs
// once more (as Playwright's own runner retries on CI), and a fault that is there every time still fails it.
describe('the console in Chromium', { timeout: 4 * BROWSER_WAIT, retry: 1 }, () => {
  it('signs in from the keyboard, creates a key that calls the REST API, revokes it in the page, and the key is refused', async () => {
    const { context, page, problems } = await open('/');
    const field = page.getByLabel('API key', { exact: true });
    await field.waitFor();
    await screenshot(page, 'sign-in.png');
    await field.focus();
    await page.keyboard.type(KEYS.acmeAdmin);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    // The key is nowhere the page's scripts or the address bar could leak it.
    expect(page.url()).not.toContain(KEYS.acmeAdmin);
    expect(await page.evaluate('JSON.stringify([document.cookie, Object.entries(localStorage), Object.entries(sessionStorage)])')).toBe('["",[],[]]');

    await page.getByLabel('Name', { exact: true }).fill('CI export');
    await page.getByLabel('Role', { exact: true }).selectOption('member');
    // With an expiry, the widest row the page makes: it must still fit the window, Revoke and all.
    await page.getByLabel('Expires', { exact: true }).selectOption({ label: 'In 30 days' });
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByLabel('New API key').inputValue();
    expect(secret).toMatch(/^oql_[A-Za-z0-9_-]{43}$/);
    expect(await rest('/api/v1/reports/count', secret, REPORT)).toBe(200);
    await page.getByRole('row').filter({ hasText: 'CI export' }).waitFor();
    const expires = (await call(server.url, 'GET', '/api/v1/keys', { key: KEYS.acmeAdmin })).json.data.keys.find((k: { name: string | null }) => k.name === 'CI export').expires_at;
    expect(expires - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect(await clippedKeys(page)).toEqual([]);
    await screenshot(page, 'api-keys.png');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByLabel('New API key').count()).toBe(0);

    // One Revoke button per key that is still live, counted from the API itself.
    const live = (await call(server.url, 'GET', '/api/v1/keys', { key: KEYS.acmeAdmin })).json.data.keys.filter((k: { revoked_at: number | null }) => k.revoked_at === null);
    expect(await page.getByRole('button', { name: 'Revoke', exact: true }).count()).toBe(live.length);

    // Revoked from the keyboard: the button, then the confirmation.
    const row = page.getByRole('row').filter({ hasText: 'CI export' });
    await row.getByRole('button', { name: 'Revoke', exact: true }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Revoke CI export?' });
    await dialog.waitFor();
    await screenshot(page, 'api-keys-revoke.png');
    await expect.poll(() => page.evaluate('document.activeElement.textContent')).toBe('Cancel');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await row.getByText('revoked', { exact: true }).waitFor();
    expect(await row.textContent()).toContain('by u_acme_admin');
    expect(await clippedKeys(page)).toEqual([]);
    expect(await rest('/api/v1/reports/count', secret, REPORT)).toBe(401);
    expect(await unnamedControls(page)).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a member sees only their own keys and no tool logs; organization B never sees A\'s keys or rows', async () => {
    const all = (await call(server.url, 'GET', '/api/v1/keys', { key: KEYS.acmeAdmin })).json.data.keys as { id: string; user_id: string }[];
    const notMine = all.filter((k) => k.user_id !== 'u_acme_member').map((k) => k.id);
    expect(notMine.length).toBeGreaterThan(0);

    const member = await open('/keys');
    await signIn(member.page, KEYS.acmeMember);
    const table = member.page.getByRole('table');
    await table.waitFor();
    const owners = await table.locator('tbody tr td:nth-child(4)').allTextContents();
    expect(owners.length).toBeGreaterThan(0);
    expect(new Set(owners)).toEqual(new Set(['u_acme_member']));
    const memberText = (await table.textContent())!;
    for (const id of notMine) expect(memberText).not.toContain(id);
    expect(await member.page.getByRole('link', { name: 'Tool logs' }).count()).toBe(0);
    // Role choice: nothing above member.
    expect(await member.page.getByLabel('Role', { exact: true }).locator('option').allTextContents()).toEqual(['member']);
    await member.context.close();

    const globex = await open('/keys');
    await signIn(globex.page, KEYS.globexAdmin);
    const globexTable = globex.page.getByRole('table');
    await globexTable.waitFor();
    const globexText = (await globexTable.textContent())!;
    for (const k of all) expect(globexText).not.toContain(k.id);
    await goTo(globex.page, 'Query playground', 'Query playground');
    const expected = liveRows('account', 'org_globex').map((r) => r.id).sort();
    expect(await runQuery(globex.page, 'SELECT id, name FROM account ORDER BY id LIMIT 10000')).toMatch(new RegExp(`^${expected.length} rows in \\d+ ms`));
    const shown = await globex.page.locator('.results tbody tr td:first-child').allTextContents();
    expect(shown.sort()).toEqual(expected);
    expect(globex.problems).toEqual([]);
    await globex.context.close();
  });

  it('the playground points at a bad query\'s problems, applies a fix, runs the good query and shows its rows', async () => {
    const { context, page, problems } = await open('/playground');
    await signIn(page, KEYS.acmeAdmin);
    const query = page.getByLabel('Query', { exact: true });
    const bad = 'SELECT id, nme\nFROM account\nORDER BY name';
    await query.fill(bad);
    const problemsList = page.getByRole('list', { name: 'Problems' });
    // Positions counted here, by hand: 'nme' starts at column 12 of line 1.
    const unknown = problemsList.getByRole('listitem').filter({ hasText: 'UNKNOWN_COLUMN' });
    await unknown.getByRole('button', { name: 'Line 1, column 12' }).waitFor();
    expect(await unknown.textContent()).toContain("'nme'");
    expect(await page.locator('.backdrop mark.error').allTextContents()).toContain('nme');
    await screenshot(page, 'playground-diagnostics.png');

    const missingLimit = problemsList.getByRole('listitem').filter({ hasText: 'MISSING_LIMIT' });
    await missingLimit.getByRole('button', { name: 'Apply fix' }).click();
    await expect.poll(() => query.inputValue()).toMatch(/^SELECT id, nme\nFROM account\nORDER BY name LIMIT \d+$/);
    await missingLimit.waitFor({ state: 'detached' });
    const fixed = await query.inputValue();
    const limit = Number(/LIMIT (\d+)$/.exec(fixed)![1]);

    // The schema puts a field where the cursor is: replace the bad name by clicking the right one.
    await query.fill(fixed.replace('nme', ''));
    // any: this file compiles without the DOM library.
    await query.evaluate((t: any) => t.setSelectionRange(11, 11));
    const account = page.locator('details', { has: page.locator('summary', { hasText: /^Account account$/ }) });
    await account.getByRole('button', { name: 'name', exact: true }).click();
    await expect.poll(() => query.inputValue()).toBe(fixed.replace('nme', 'name'));
    await page.getByText('No problems found.').waitFor();

    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const accounts = liveRows('account', 'org_acme').length + 1;
    const rows = Math.min(limit, accounts);
    await page.getByText(`${rows} rows in`).waitFor();
    expect(await page.locator('.results tbody tr').count()).toBe(rows);
    expect(await page.locator('.results thead th').allTextContents()).toEqual(['id', 'name']);
    await screenshot(page, 'playground.png');
    await page.getByRole('button', { name: 'Count', exact: true }).click();
    await page.getByText(`Count: ${rows}`).waitFor();
    expect(await unnamedControls(page)).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('an unknown column\'s "did you mean" is a fix a click applies; Run with the error shown points at it and adds no second box', async () => {
    const { context, page, problems } = await open('/playground');
    await signIn(page, KEYS.globexAdmin);
    const query = page.getByLabel('Query', { exact: true });
    const bad = 'SELECT id, amout\nFROM opportunity\nORDER BY id\nLIMIT 5';
    await query.fill(bad);
    const problemsList = page.getByRole('list', { name: 'Problems' });
    const unknown = problemsList.getByRole('listitem').filter({ hasText: 'UNKNOWN_COLUMN' });
    await unknown.getByRole('button', { name: 'Line 1, column 12' }).waitFor();
    expect(await unknown.textContent()).toContain("did you mean 'amount'?");
    expect(await problemsList.getByRole('listitem').count()).toBe(1);

    // Run, twice, from the button and from the keyboard: the problem stays listed once, no error
    // box repeats it, and the caret is put on the misspelt name ('amout', offsets 11 to 16).
    for (const how of ['button', 'keyboard'] as const) {
      // any: this file compiles without the DOM library.
      await query.evaluate((t: any) => t.setSelectionRange(0, 0));
      if (how === 'button') await page.getByRole('button', { name: 'Run', exact: true }).click();
      else {
        await query.focus();
        await page.keyboard.press('Control+Enter');
      }
      await expect.poll(() => query.evaluate((t: any) => [t.selectionStart, t.selectionEnd, t.ownerDocument.activeElement === t])).toEqual([11, 16, true]);
      await page.getByText('Not run: fix the error listed above first.').waitFor();
      expect(await page.locator('.banner.error, [role="alert"]').count()).toBe(0);
      expect(await page.getByText("unknown column 'amout' on object 'opportunity'").count()).toBe(1);
    }
    // The top bar of the longer organization and user, with every page's link, is one line in the window.
    expect(await page.evaluate(`(() => { const top = document.querySelector('.top'); return [top.getBoundingClientRect().height, top.scrollWidth <= innerWidth]; })()`)).toEqual([56, true]);
    await screenshot(page, 'playground-unknown-column.png');

    // The fix is the diagnostic's own, as the lint endpoint gives it to any client.
    const linted = (await call(server.url, 'POST', '/api/v1/reports/lint', { key: KEYS.globexAdmin, body: { query: bad } })).json.data.diagnostics;
    expect(linted.map((d: { code: string; fix?: unknown }) => [d.code, d.fix])).toEqual([['UNKNOWN_COLUMN', { range: [11, 16], text: 'amount' }]]);
    await unknown.getByRole('button', { name: 'Apply fix' }).click();
    await expect.poll(() => query.inputValue()).toBe('SELECT id, amount\nFROM opportunity\nORDER BY id\nLIMIT 5');
    await page.getByText('No problems found.').waitFor();
    // The line about the text before the fix is gone with it.
    expect(await page.getByText('Not run:').count()).toBe(0);
    const rows = Math.min(5, liveRows('opportunity', 'org_globex').length);
    expect(await runQuery(page, await query.inputValue())).toMatch(new RegExp(`^${rows} rows? in \\d+ ms`));
    expect(await page.locator('.results thead th').allTextContents()).toEqual(['id', 'amount']);
    const theirs = new Set(liveRows('opportunity', 'org_globex').map((r) => r.id));
    const shown = await page.locator('.results tbody tr td:first-child').allTextContents();
    expect(shown.length).toBe(rows);
    for (const shownId of shown) expect(theirs.has(shownId), shownId).toBe(true);

    // A query that does not parse is not run either, and says so the same way.
    await query.fill('SELECT id FROM opportunity WHERE LIMIT 5');
    await problemsList.getByRole('listitem').first().waitFor();
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByText(/^Not run: fix the (error|\d+ errors) listed above first\.$/).waitFor();
    expect(await page.locator('.banner.error').count()).toBe(0);
    expect(await unnamedControls(page)).toEqual([]);
    // The runs were sent, and refused by the service (the browser logs each 400): nothing else went wrong.
    expect(problems.filter((p) => !/status of 400/.test(p))).toEqual([]);
    await context.close();
  });

  it('a key made with oql keys create shows its name and that it acts as itself, not "unnamed" and an id', async () => {
    const made = await oql('keys', 'create', '--database', world.pg.url, '--org', 'org_acme', '--role', 'member');
    expect(made.code, made.err).toBe(0);
    const id = /(key_[A-Za-z0-9_-]+)/.exec(made.err)![1]!;
    const named = await oql('keys', 'create', '--database', world.pg.url, '--org', 'org_acme', '--role', 'admin', '--name', 'Warehouse sync', '--user', 'u_acme_admin');
    expect(named.code, named.err).toBe(0);
    const namedId = /(key_[A-Za-z0-9_-]+)/.exec(named.err)![1]!;
    // Both keys work.
    expect(await rest('/api/v1/reports/count', made.out.trim(), REPORT)).toBe(200);
    expect(await rest('/api/v1/reports/count', named.out.trim(), REPORT)).toBe(200);
    // The widest rows there are: last used minutes ago, expiring, made by someone; and one revoked by someone.
    await world.pool.query('UPDATE oql_service.api_keys SET last_used_at = $1, expires_at = $2, created_by = $3 WHERE id = $4',
      [Date.now() - 45 * 60_000, Date.now() + 300 * 86_400_000, 'u_acme_admin', namedId]);
    const retired = await oql('keys', 'create', '--database', world.pg.url, '--org', 'org_acme', '--role', 'member', '--name', 'Retired export', '--user', 'u_acme_member');
    expect(retired.code, retired.err).toBe(0);
    const retiredId = /(key_[A-Za-z0-9_-]+)/.exec(retired.err)![1]!;
    expect((await call(server.url, 'POST', `/api/v1/keys/${retiredId}/revoke`, { key: KEYS.acmeAdmin })).status).toBe(200);

    const { context, page, problems } = await open('/keys');
    await signIn(page, KEYS.acmeAdmin);
    const row = page.getByRole('row').filter({ hasText: id });
    await row.waitFor();
    const cells = async (r: typeof row) => Promise.all([r.locator('th').textContent(), r.locator('td:nth-child(4)').textContent()]);
    const [name, owner] = await cells(row);
    expect(name).toBe(`CLI member key${id}`);
    // Made without --user, it acts as a user of its own: apikey_ and the random part of its id (docs/rest.md).
    expect(owner).toBe(`the key itselfapikey_${id.slice('key_'.length)}`);
    const [otherName, otherOwner] = await cells(page.getByRole('row').filter({ hasText: namedId }));
    expect([otherName, otherOwner]).toEqual([`Warehouse sync${namedId}`, 'u_acme_admin']);
    expect(await clippedKeys(page)).toEqual([]);
    await row.scrollIntoViewIfNeeded();
    await screenshot(page, 'api-keys-cli.png');
    await context.close();

    // The other organization sees neither.
    const globex = await open('/keys');
    await signIn(globex.page, KEYS.globexAdmin);
    await globex.page.getByRole('table').waitFor();
    const text = (await globex.page.getByRole('table').textContent())!;
    expect(text).not.toContain(id);
    expect(text).not.toContain(namedId);
    expect(text).not.toContain('Warehouse sync');
    expect(problems).toEqual([]);
    await globex.context.close();
  });

  it('a record value holding <script> shows as text and never runs (typed while the schema was still loading)', async () => {
    const { context, page, problems } = await open('/playground');
    // The schema list is held until the query is typed: the sample query the page offers when the
    // schema arrives goes only into an empty editor, never over what the user wrote.
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    await page.route('**/api/v1/org/objects/list', async (route) => { await held; await route.continue(); });
    await signIn(page, KEYS.acmeAdmin);
    const typed = `SELECT id, name FROM account WHERE name LIKE '<script>%' ORDER BY id LIMIT 5`;
    await page.getByLabel('Query', { exact: true }).fill(typed);
    release();
    await page.locator('summary', { hasText: /^Account account$/ }).waitFor();
    expect(await page.getByLabel('Query', { exact: true }).inputValue()).toBe(typed);
    expect(await runQuery(page, typed)).toMatch(/^1 row in \d+ ms/);
    expect(await page.locator('.results tbody td:nth-child(2)').textContent()).toBe(XSS);
    expect(await page.locator('.results img, .results script').count()).toBe(0);
    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shows an organization of more keys than one page holds a page at a time, the rest a click away', async () => {
    // The third organization's own: its bootstrap key and a hundred more, past the listing's page of 100.
    const db = databaseOf(world.pool);
    for (let i = 0; i < 100; i++) await issueApiKey(db, { orgId: 'org_initech', role: 'member', userId: 'u_initech_many', name: `many ${i}` });
    const { context, page } = await open('/keys');
    await signIn(page, KEYS.initechAdmin);
    await page.getByText('100 keys, newest first').waitFor();
    const more = page.getByRole('button', { name: 'Show more keys' });
    await more.click();
    await page.getByText('101 keys, newest first').waitFor();
    expect(await more.count()).toBe(0);
    await context.close();
  });

  it('a change sent with the session cookie but without its CSRF token is refused, even from the console\'s own page', async () => {
    const { context, page } = await open('/keys');
    await signIn(page, KEYS.acmeAdmin);
    const post = (withToken: boolean) => page.evaluate(`(async () => {
      const session = await (await fetch('/console/session')).json();
      const headers = { 'content-type': 'application/json' };
      if (${withToken}) headers['x-csrf-token'] = session.data.csrf_token;
      const r = await fetch('/api/v1/keys', { method: 'POST', headers, body: JSON.stringify({ name: 'from script', role: 'member' }) });
      return [r.status, (await r.json()).data.error_code ?? null];
    })()`);
    expect(await post(false)).toEqual([403, 'PERMISSION_DENIED']);
    expect(await post(true)).toEqual([201, null]);
    await context.close();
  });

  it('tool logs: filtered by tool and user, an entry opened in full, as the tool-log endpoint gives them', async () => {
    const { context, page, problems } = await open('/logs');
    await signIn(page, KEYS.acmeAdmin);
    const table = page.getByRole('table');
    await page.getByText('9 calls shown').waitFor();
    await screenshot(page, 'tool-logs.png');
    await page.getByLabel('Tool', { exact: true }).fill('lint_query');
    await page.getByLabel('User', { exact: true }).fill('u_acme_admin');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    // Entries 2, 5 and 8 are lint_query; 2, 5 and 8 are also u_acme_admin's (i % 3 != 0).
    await page.getByText('3 calls shown').waitFor();
    for (const tool of await table.locator('tbody td:nth-child(2)').allTextContents()) expect(tool).toBe('lint_query');
    await table.getByRole('button', { name: /^Open the lint_query call/ }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    const listed = (await call(server.url, 'POST', '/api/v1/org/tool/mcp/logs/list/', { key: KEYS.acmeAdmin, body: { tool_name: 'lint_query' } })).json.data.logs[0];
    expect(await dialog.textContent()).toContain(listed.id);
    expect(JSON.parse((await dialog.getByLabel('Input parameters').textContent())!)).toEqual(listed.input_params);
    // What the call answered, as logged: shown as text (its markup is not drawn), not cut.
    expect(listed.response).toMatch(/^\{\n {2}"records"/);
    expect(await dialog.getByLabel('Response', { exact: true }).textContent()).toBe(listed.response);
    expect(await dialog.locator('pre i, pre b').count()).toBe(0);
    expect(await dialog.getByText(/^Cut to the log's entry size/).count()).toBe(0);
    await screenshot(page, 'tool-log-entry.png');
    await dialog.getByRole('button', { name: 'Close' }).click();
    expect(await page.getByText('list_objects').count()).toBe(0);
    expect(await unnamedControls(page)).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();

    // The other organization: its one call, whose answer was cut to the entry and says so.
    const globex = await open('/logs');
    await signIn(globex.page, KEYS.globexAdmin);
    await globex.page.getByText('1 call shown').waitFor();
    expect(await globex.page.getByText('lint_query').count()).toBe(0);
    await globex.page.getByRole('button', { name: /^Open the list_objects call/ }).click();
    const entry = globex.page.getByRole('dialog');
    await entry.getByText("Cut to the log's entry size: the call answered more than this shows.").waitFor();
    const shown = (await entry.getByLabel('Response', { exact: true }).textContent())!;
    expect(shown.endsWith(' … cut here')).toBe(true);
    const kept = shown.slice(0, -' … cut here'.length);
    expect(LONG_ANSWER.startsWith(kept)).toBe(true);
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(1024);
    expect(kept.length).toBeGreaterThan(1000);
    await screenshot(globex.page, 'tool-log-entry-cut.png');
    expect(globex.problems).toEqual([]);
    await globex.context.close();
  });

  it('Connect an agent: the workspace\'s MCP URL, and a curl line that works as pasted', async () => {
    const { context, page, problems } = await open('/connect');
    await signIn(page, KEYS.acmeAdmin);
    const url = page.getByLabel('MCP URL');
    await url.waitFor();
    expect(await url.inputValue()).toBe(`${mcpUrl}/acme/mcp`);
    const curl = page.locator('pre[aria-labelledby="snippet-curl"]');
    const text = (await curl.textContent())!;
    await screenshot(page, 'connect.png');
    const { stdout } = await run('sh', ['-c', text], { env: { ...process.env, OQL_API_KEY: KEYS.globexAdmin } });
    const answer = JSON.parse(stdout);
    expect(answer.success).toBe(true);
    expect(answer.data.records.length).toBeGreaterThan(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('sign-out ends the session: the API refuses the cookie and the page asks to sign in again', async () => {
    const { context, page } = await open('/keys');
    await signIn(page, KEYS.acmeMember);
    const cookies = await context.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([['oql_session', true, 'Strict']]);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key', { exact: true }).waitFor();
    expect(await page.evaluate('fetch("/api/v1/keys").then((r) => r.status)')).toBe(401);
    // The old cookie, replayed by hand, is dead too.
    const replayed = await call(server.url, 'GET', '/api/v1/keys', { headers: { cookie: `oql_session=${cookies[0]!.value}` } });
    expect(replayed.status).toBe(401);
    await page.reload();
    await page.getByLabel('API key', { exact: true }).waitFor();
    await context.close();
  });
});
