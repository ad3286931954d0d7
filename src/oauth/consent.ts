import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SCOPE_TEXT, type Scope } from './scopes.js';

/**
 * The consent page: server-rendered HTML that works without JavaScript, names the client and the
 * workspace, and posts back to the authorization endpoint.
 *
 * Protection against clickjacking: `X-Frame-Options: DENY` and CSP `frame-ancestors 'none'`.
 * Protection against cross-site posts, in three layers: the browser's Origin (and Sec-Fetch-Site)
 * must be our own; the form carries a CSRF token signed over the authorization request it was
 * rendered for and over a random value in a SameSite=Strict cookie (a signed double submit), so a
 * token copied into another site's form, or into another request, is refused; and the token
 * expires. Everything shown is HTML-escaped: a client names itself at registration, so its name is
 * attacker-controlled text.
 */

const CSRF_COOKIE = 'oql_oauth_csrf';
const CSRF_LIFETIME_MS = 15 * 60 * 1000;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The authorization request a page was rendered for: the hidden fields of its form. */
export interface ConsentRequest {
  readonly response_type: string;
  readonly client_id: string;
  readonly redirect_uri: string;
  readonly code_challenge: string;
  readonly code_challenge_method: string;
  readonly resource: string;
  /** The scopes asked for, space-separated and in a fixed order (./scopes.ts). */
  readonly scope: string;
  readonly state?: string | undefined;
}

const FIELDS = ['response_type', 'client_id', 'redirect_uri', 'code_challenge', 'code_challenge_method', 'resource', 'scope', 'state'] as const;

function signature(secret: string, workspace: string, request: ConsentRequest, browser: string, expires: number): string {
  // JSON of an array: no choice of separator can make two different requests sign alike.
  const message = JSON.stringify([workspace, ...FIELDS.map((f) => request[f] ?? null), browser, expires]);
  return createHmac('sha256', secret).update(message).digest('base64url');
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const BROWSER_VALUE = /^[A-Za-z0-9_-]{22,64}$/;

/**
 * The browser's CSRF value: the one its cookie already holds (so two tabs of one browser agree),
 * else a new one, set on the reply.
 */
function browserValue(request: FastifyRequest, reply: FastifyReply, cookiePath: string, secure: boolean): string {
  const existing = readCookie(request, CSRF_COOKIE);
  if (existing !== undefined && BROWSER_VALUE.test(existing)) return existing;
  const value = randomBytes(18).toString('base64url');
  reply.header('set-cookie', `${CSRF_COOKIE}=${value}; Path=${cookiePath}; HttpOnly; SameSite=Strict; Max-Age=${CSRF_LIFETIME_MS / 1000}${secure ? '; Secure' : ''}`);
  return value;
}

export interface CsrfInput {
  readonly secret: string;
  readonly workspace: string;
  readonly request: ConsentRequest;
  readonly now: number;
}

export function issueCsrfToken(req: FastifyRequest, reply: FastifyReply, input: CsrfInput, cookiePath: string, secure: boolean): string {
  const browser = browserValue(req, reply, cookiePath, secure);
  const expires = input.now + CSRF_LIFETIME_MS;
  return `${expires}.${signature(input.secret, input.workspace, input.request, browser, expires)}`;
}

/** Whether a posted token was issued by us, for this request, to this browser, and is still fresh. */
export function csrfTokenValid(req: FastifyRequest, token: string | undefined, input: CsrfInput): boolean {
  const browser = readCookie(req, CSRF_COOKIE);
  if (token === undefined || browser === undefined || !BROWSER_VALUE.test(browser)) return false;
  const match = /^(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return false;
  const expires = Number(match[1]);
  if (!(expires > input.now)) return false;
  const want = Buffer.from(signature(input.secret, input.workspace, input.request, browser, expires));
  const got = Buffer.from(match[2]!);
  return want.length === got.length && timingSafeEqual(want, got);
}

/**
 * Whether a form post comes from our own page. Browsers send Origin on every cross-origin POST
 * (and Chromium and Firefox on same-origin ones too); a client without one (curl, a test, an
 * automation using the form) is judged by the CSRF token and cookie alone.
 */
export function sameOriginPost(req: FastifyRequest, baseUrl: string): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  const allowed = new Set<string>([new URL(baseUrl).origin, `${req.protocol}://${req.host}`]);
  return allowed.has(origin);
}

/** Headers of every page the authorization endpoint renders. */
function pageHeaders(reply: FastifyReply, styleNonce: string): void {
  reply
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', `default-src 'none'; style-src 'nonce-${styleNonce}'; img-src 'none'; base-uri 'none'; frame-ancestors 'none'`)
    .header('x-content-type-options', 'nosniff')
    // same-origin, not no-referrer: under no-referrer browsers send `Origin: null` with the form
    // post, and the Origin check could not tell our page from a sandboxed attacker's.
    .header('referrer-policy', 'same-origin')
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8');
}

// Phone first: one column, no fixed widths, long URLs wrap instead of widening the page.
const STYLE = `
*{box-sizing:border-box}
body{margin:0;overflow-wrap:anywhere;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1d2129}
main{max-width:30rem;margin:0 auto;padding:1.5rem 1rem}
.card{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:1.25rem}
h1{font-size:1.25rem;margin:0 0 .75rem;overflow-wrap:anywhere}
p,li{overflow-wrap:anywhere;word-break:break-word}
ul{padding-left:1.2rem}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input[type=password]{width:100%;font:inherit;padding:.6rem;border:1px solid #9aa4b0;border-radius:6px}
.buttons{display:flex;flex-wrap:wrap;gap:.75rem;margin-top:1.25rem}
button{flex:1 1 8rem;font:inherit;padding:.7rem 1rem;border-radius:6px;border:1px solid #1f5fbf;cursor:pointer}
.approve{background:#1f5fbf;color:#fff}
.deny{background:#fff;color:#1f5fbf}
.error{background:#fdecea;border:1px solid #f5c2bd;color:#8a1c12;border-radius:6px;padding:.75rem;margin:0 0 1rem}
code{font-size:.9em;overflow-wrap:anywhere}
small{color:#5b6470}
`;

function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  const nonce = randomUUID().replace(/-/g, '');
  pageHeaders(reply, nonce);
  return reply.code(status).send(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
<div class="card">
${body}
</div>
</main>
</body>
</html>
`);
}

export interface ConsentPage {
  readonly clientName: string;
  readonly clientUri?: string | undefined;
  /** The URL of the client's metadata document, when its client_id is one. */
  readonly metadataDocument?: string | undefined;
  readonly workspace: string;
  readonly request: ConsentRequest;
  readonly csrfToken: string;
  /** A problem with the last post (a key not accepted), shown above the form. */
  readonly error?: string | undefined;
}

/** The consent form. Every value shown or placed in an attribute goes through escapeHtml. */
export function renderConsentPage(reply: FastifyReply, status: number, p: ConsentPage): FastifyReply {
  const client = escapeHtml(p.clientName);
  const workspace = escapeHtml(p.workspace);
  const redirect = new URL(p.request.redirect_uri);
  // A native app's private-use scheme (com.example.app:/callback) has no origin: name the scheme.
  const back = escapeHtml(redirect.origin !== 'null' ? redirect.origin : redirect.protocol);
  const hidden = FIELDS
    .filter((f) => p.request[f] !== undefined)
    .map((f) => `<input type="hidden" name="${f}" value="${escapeHtml(p.request[f]!)}">`)
    .join('\n');
  const site = p.clientUri !== undefined
    ? `<p><small>Client site: <a href="${escapeHtml(p.clientUri)}" rel="noopener noreferrer">${escapeHtml(p.clientUri)}</a></small></p>`
    : '';
  const error = p.error !== undefined ? `<p class="error" role="alert">${escapeHtml(p.error)}</p>` : '';
  const granted = p.request.scope.split(' ').filter((s): s is Scope => s in SCOPE_TEXT);
  const scopes = granted.map((s) => `<li id="scope-${escapeHtml(s.replace(':', '-'))}"><code>${escapeHtml(s)}</code>: ${escapeHtml(SCOPE_TEXT[s])}</li>`).join('\n');
  // Anyone can name a loopback redirect URI, in a metadata document or a registration alike.
  const local = ['127.0.0.1', '[::1]', 'localhost'].includes(redirect.hostname)
    ? '<li>The approval goes to a program on <strong>this computer</strong>: approve only if you started it yourself just now.</li>\n'
    : '';
  const document = p.metadataDocument !== undefined
    ? `<p><small>Client described by <code>${escapeHtml(p.metadataDocument)}</code></small></p>`
    : '';
  return page(reply, status, `Authorize ${p.clientName}`, `<h1>Allow <span id="client-name">${client}</span> to use workspace <span id="workspace">${workspace}</span>?</h1>
${error}<p><strong>${client}</strong> asks to query the CRM data of the workspace <strong>${workspace}</strong> as you, with your role, through its MCP server.</p>
<p>It asks to:</p>
<ul id="scopes">
${scopes}
</ul>
<ul>
<li>You will be sent back to <code id="redirect-host">${back}</code>.</li>
${local}<li>Approve only if you started this from an application you trust.</li>
</ul>
${site}${document}
<form method="post" action="authorize">
${hidden}
<input type="hidden" name="csrf_token" value="${escapeHtml(p.csrfToken)}">
<label for="api_key">Your API key for ${workspace}</label>
<input type="password" id="api_key" name="api_key" autocomplete="off" required>
<div class="buttons">
<button type="submit" class="approve" name="decision" value="approve">Approve</button>
<button type="submit" class="deny" name="decision" value="deny" formnovalidate>Deny</button>
</div>
</form>`);
}

/**
 * A request that cannot be sent back to the client (unknown client, unregistered redirect URI,
 * a refused form post): the error is shown here, never redirected to a URI nobody registered.
 */
export function renderErrorPage(reply: FastifyReply, status: number, error: string, description: string): FastifyReply {
  return page(reply, status, 'Authorization failed', `<h1>Authorization failed</h1>
<p class="error" role="alert"><code id="error">${escapeHtml(error)}</code>: <span id="error-description">${escapeHtml(description)}</span></p>
<p>Return to the application and start again.</p>`);
}
