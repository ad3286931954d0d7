import { randomBytes } from 'node:crypto';
import { OqlError } from '../../diagnostics/diagnostic.js';
import { CHANGE_OPERATIONS, type ChangeOperation } from '../../records/changes.js';
import type { Database } from '../../run/database.js';
import { SERVICE_SCHEMA } from '../migrations.js';
import { checkOutboundHost, describeVerdict, OutboundAddressError, type OutboundAllowance } from '../outbound.js';
import { cursorOf } from '../changes/log.js';
import { newSecret } from './signature.js';

const S = SERVICE_SCHEMA;

export type WebhookStatus = 'active' | 'paused' | 'disabled';

/** An endpoint as the API shows it (never its secret, except once when created or rotated). */
export interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly description: string | null;
  readonly objects: string[] | null;
  readonly operations: ChangeOperation[] | null;
  readonly status: WebhookStatus;
  readonly disabled_reason: string | null;
  /** The cursor of the last change it is done with (delivered or dead-lettered). */
  readonly cursor: string;
  /** While a change waits to be retried: when the next attempt is due. */
  readonly next_attempt_at: number | null;
  readonly failing_since: number | null;
  readonly created_at: number;
  readonly created_by: string;
  readonly updated_at: number;
}

export interface EndpointRow {
  id: string;
  org_id: string;
  url: string;
  description: string | null;
  objects: string[] | null;
  operations: ChangeOperation[] | null;
  status: WebhookStatus;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  position: string;
  attempt: number;
  first_failed_at: string | null;
  next_attempt_at: string;
  dead_in_a_row: number;
  created_at: string;
  created_by: string;
  updated_at: string;
}

export function webhookOf(r: EndpointRow): Webhook {
  const next = Number(r.next_attempt_at);
  return {
    id: r.id, url: r.url, description: r.description, objects: r.objects, operations: r.operations,
    status: r.status, disabled_reason: r.disabled_reason, cursor: cursorOf(r.position),
    next_attempt_at: r.attempt > 0 && next > 0 ? next : null,
    failing_since: r.first_failed_at === null ? null : Number(r.first_failed_at),
    created_at: Number(r.created_at), created_by: r.created_by, updated_at: Number(r.updated_at),
  };
}

/**
 * Where a webhook may send: an absolute https URL (http too with the development flag), no
 * credentials in it, and a host that is not written as an address the service never sends to.
 * A name is judged again at every delivery, on the address actually connected to.
 */
export function checkWebhookUrl(value: unknown, allow: OutboundAllowance & { http?: boolean }): string {
  const refuse = (why: string) => OqlError.plain('INVALID_WEBHOOK_URL', `the webhook URL is refused: ${why}`,
    'give an https URL of a receiver on the public internet, e.g. https://hooks.example.com/oql');
  if (typeof value !== 'string' || value.length === 0) throw refuse('url must be a string');
  if (value.length > 2000) throw refuse('it is longer than 2000 characters');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse('it is not an absolute URL');
  }
  if (url.protocol !== 'https:' && !(allow.http && url.protocol === 'http:')) throw refuse(`only https URLs are allowed, not ${url.protocol.replace(':', '')}`);
  if (url.username !== '' || url.password !== '') throw refuse('it carries a user name or password; put credentials in a query parameter your receiver checks, or verify the signature');
  try {
    checkOutboundHost(url.hostname, allow);
  } catch (e) {
    if (e instanceof OutboundAddressError) throw refuse(describeVerdict(e.verdict));
    throw e;
  }
  if (url.hostname === 'localhost' || url.hostname.endsWith('.localhost')) {
    if (!allow.loopback && !allow.privateNetworks) throw refuse('localhost is this machine');
  }
  return url.toString();
}

export interface NewWebhook {
  readonly url: string;
  readonly objects: string[] | null;
  readonly operations: ChangeOperation[] | null;
  readonly description: string | null;
}

export function checkOperations(value: unknown): ChangeOperation[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length === 0) throw OqlError.plain('VALIDATION_FAILED', 'operations must be a non-empty array', `name some of ${CHANGE_OPERATIONS.join(', ')}, or leave operations out for all`);
  for (const op of value) {
    if (!(CHANGE_OPERATIONS as readonly unknown[]).includes(op)) {
      throw OqlError.plain('VALIDATION_FAILED', `operations lists ${JSON.stringify(op)}, which is not an operation`, `the operations are ${CHANGE_OPERATIONS.join(', ')}`);
    }
  }
  return [...new Set(value as ChangeOperation[])];
}

const COLUMNS = 'id, org_id, url, description, objects, operations, status, disabled_reason, secret, previous_secret, previous_secret_until::text, position::text, attempt, first_failed_at::text, next_attempt_at::text, dead_in_a_row, created_at::text, created_by, updated_at::text';

/**
 * Whether the organization (the text of its parameter) has an active endpoint: asked by the
 * statement that writes a write's changes (ChangeLogOptions.listening), so that a commit wakes the
 * sender only when there is something to send. An endpoint made active in another instance after
 * that statement's snapshot is found by the sender's own poll.
 */
export function listeningSql(orgParam: string): string {
  return `EXISTS (SELECT 1 FROM ${S}.webhook_endpoints w WHERE w.org_id = ${orgParam} AND w.status = 'active')`;
}

/** The organization's webhook endpoints in PostgreSQL (or the embedded database). */
export class WebhookStore {
  constructor(private readonly db: Database) {}

  async create(orgId: string, userId: string, spec: NewWebhook, startPosition: bigint, max: number): Promise<EndpointRow> {
    return this.db.transaction(async (tx) => {
      // One creator at a time per organization, so the cap holds under concurrent creations.
      await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('oql webhooks|' || $1, 0))`, [orgId]);
      const { rows: [count] } = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${S}.webhook_endpoints WHERE org_id = $1`, [orgId]);
      if (count!.n >= max) {
        throw OqlError.plain('TOO_MANY_WEBHOOKS', `your organization already has ${count!.n} webhook endpoints, the most it may have`,
          `delete an endpoint you no longer use first (at most ${max}: OQL_MAX_WEBHOOKS_PER_ORG)`);
      }
      const now = Date.now();
      const { rows: [row] } = await tx.query<EndpointRow>(
        `INSERT INTO ${S}.webhook_endpoints (id, org_id, url, description, objects, operations, status, secret, position, created_at, created_by, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'active', $7, $8::bigint, $9, $10, $9) RETURNING ${COLUMNS}`,
        [`whk_${randomBytes(12).toString('base64url')}`, orgId, spec.url, spec.description, spec.objects, spec.operations, newSecret(), startPosition.toString(), now, userId]);
      return row!;
    });
  }

  async list(orgId: string): Promise<EndpointRow[]> {
    return (await this.db.query<EndpointRow>(`SELECT ${COLUMNS} FROM ${S}.webhook_endpoints WHERE org_id = $1 ORDER BY created_at, id`, [orgId])).rows;
  }

  async get(orgId: string, id: string): Promise<EndpointRow> {
    const { rows: [row] } = await this.db.query<EndpointRow>(`SELECT ${COLUMNS} FROM ${S}.webhook_endpoints WHERE org_id = $1 AND id = $2`, [orgId, id]);
    if (!row) throw notFound(id);
    return row;
  }

  async update(orgId: string, id: string, changes: { url?: string; objects?: string[] | null; operations?: ChangeOperation[] | null; description?: string | null; status?: 'active' | 'paused' }): Promise<EndpointRow> {
    const sets: string[] = [];
    const params: unknown[] = [orgId, id, Date.now()];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (changes.url !== undefined) set('url', changes.url);
    if (changes.objects !== undefined) set('objects', changes.objects);
    if (changes.operations !== undefined) set('operations', changes.operations);
    if (changes.description !== undefined) set('description', changes.description);
    if (changes.status !== undefined) {
      set('status', changes.status);
      // Resuming starts retrying at once, with the failure count of a fresh start.
      if (changes.status === 'active') sets.push('disabled_reason = NULL', 'attempt = 0', 'first_failed_at = NULL', 'next_attempt_at = 0', 'dead_in_a_row = 0');
    }
    const { rows: [row] } = await this.db.query<EndpointRow>(
      `UPDATE ${S}.webhook_endpoints SET updated_at = $3${sets.map((s) => `, ${s}`).join('')} WHERE org_id = $1 AND id = $2 RETURNING ${COLUMNS}`, params);
    if (!row) throw notFound(id);
    return row;
  }

  async remove(orgId: string, id: string): Promise<void> {
    const { rows } = await this.db.query(`DELETE FROM ${S}.webhook_endpoints WHERE org_id = $1 AND id = $2 RETURNING id`, [orgId, id]);
    if (rows.length === 0) throw notFound(id);
    await this.db.query(`DELETE FROM ${S}.webhook_attempts WHERE org_id = $1 AND endpoint_id = $2`, [orgId, id]);
  }

  /** A new secret; the old one keeps signing beside it for `overlapMs`. */
  async rotate(orgId: string, id: string, overlapMs: number): Promise<EndpointRow> {
    const now = Date.now();
    const { rows: [row] } = await this.db.query<EndpointRow>(
      `UPDATE ${S}.webhook_endpoints SET previous_secret = secret, previous_secret_until = $3::bigint, secret = $4, updated_at = $5
        WHERE org_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [orgId, id, now + overlapMs, newSecret(), now]);
    if (!row) throw notFound(id);
    return row;
  }

  /** Delivers again every change after `position`: the endpoint goes back there, retrying at once. */
  async rewind(orgId: string, id: string, position: bigint): Promise<EndpointRow> {
    const { rows: [row] } = await this.db.query<EndpointRow>(
      `UPDATE ${S}.webhook_endpoints SET position = $3::bigint, attempt = 0, first_failed_at = NULL, next_attempt_at = 0, updated_at = $4,
              claimed_by = NULL, claimed_until = NULL
        WHERE org_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [orgId, id, position.toString(), Date.now()]);
    if (!row) throw notFound(id);
    return row;
  }

  /** One attempt of the endpoint, by the id the delivery log gives it. */
  async attempt(orgId: string, id: string, attemptId: string): Promise<AttemptRow> {
    await this.get(orgId, id);
    const { rows: [row] } = /^\d{1,18}$/.test(attemptId)
      ? await this.db.query<AttemptRow>(
        `SELECT ${ATTEMPT_COLUMNS} FROM ${S}.webhook_attempts WHERE org_id = $1 AND endpoint_id = $2 AND id = $3::bigint`, [orgId, id, attemptId])
      : { rows: [] };
    if (!row) throw OqlError.plain('NOT_FOUND', `webhook endpoint ${JSON.stringify(id.slice(0, 80))} has no delivery ${JSON.stringify(attemptId.slice(0, 40))}`, `GET /api/v1/webhooks/${id.slice(0, 80)}/deliveries?status=dead_lettered lists its dead letters`);
    return row;
  }

  async attempts(orgId: string, id: string, outcome: string | undefined, before: bigint | undefined, limit: number): Promise<AttemptRow[]> {
    await this.get(orgId, id);
    return (await this.db.query<AttemptRow>(
      `SELECT ${ATTEMPT_COLUMNS}
         FROM ${S}.webhook_attempts WHERE org_id = $1 AND endpoint_id = $2 AND ($3::text IS NULL OR outcome = $3) AND ($4::bigint IS NULL OR id < $4::bigint)
        ORDER BY webhook_attempts.id DESC LIMIT $5`,
      [orgId, id, outcome ?? null, before === undefined ? null : before.toString(), limit])).rows;
  }
}

const ATTEMPT_COLUMNS = 'id::text, position::text, event_id, attempted_at::text, outcome, http_status, latency_ms, error, next_attempt_at::text';

export interface AttemptRow {
  id: string;
  position: string;
  event_id: string;
  attempted_at: string;
  outcome: 'succeeded' | 'failed' | 'dead_lettered';
  http_status: number | null;
  latency_ms: number | null;
  error: string | null;
  next_attempt_at: string | null;
}

export function attemptOf(r: AttemptRow) {
  return {
    id: r.id, event_id: r.event_id, cursor: cursorOf(r.position), attempted_at: Number(r.attempted_at), outcome: r.outcome,
    http_status: r.http_status, latency_ms: r.latency_ms, error: r.error, next_attempt_at: r.next_attempt_at === null ? null : Number(r.next_attempt_at),
  };
}

export function notFound(id: unknown): OqlError {
  const shown = typeof id === 'string' ? JSON.stringify(id.slice(0, 80)) : 'this id';
  return OqlError.plain('NOT_FOUND', `your organization has no webhook endpoint ${shown}`, 'GET /api/v1/webhooks lists your endpoints');
}
