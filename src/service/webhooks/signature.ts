import { createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks (standardwebhooks.com): a secret is `whsec_` and base64 of random bytes; a
// signature is `v1,` and base64 of HMAC-SHA256, keyed by those bytes, of "{id}.{timestamp}.{body}".

const PREFIX = 'whsec_';

export function newSecret(): string {
  return `${PREFIX}${randomBytes(24).toString('base64')}`;
}

export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The headers of one delivery: one signature per secret still valid, space-separated. */
export function webhookHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => sign(s, id, timestamp, body)).join(' '),
  };
}
