import http from 'node:http';
import https from 'node:https';
import { randomUUID } from 'node:crypto';
import type { Database } from '../../run/database.js';
import { SERVICE_SCHEMA } from '../migrations.js';
import { checkOutboundHost, outboundLookup, OutboundAddressError, describeVerdict, type OutboundAllowance, type Resolver } from '../outbound.js';
import { positionOf, type Change, type ChangeLog } from '../changes/log.js';
import { webhookHeaders } from './signature.js';
import type { EndpointRow } from './store.js';

const S = SERVICE_SCHEMA;

/** The retry schedule, before its scale: about 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then hourly. */
const SCHEDULE_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000];
const HOURLY_MS = 3_600_000;
/** How long a change is retried before it is dead-lettered, before the scale. */
const RETRY_FOR_MS = 24 * 3_600_000;
/** Dead letters in a row after which an endpoint is disabled. */
const DISABLE_AFTER_DEAD = 3;
/** How much of a receiver's answer is read. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** How long an instance holds an endpoint it is delivering to, at least; a killed instance's claim runs out after it. */
const CLAIM_MS = 30_000;
/** How long a claim outlasts the delivery timeout, to record the answer: a claim never runs out while its delivery may still be out. */
const CLAIM_BEYOND_TIMEOUT_MS = 10_000;
/** The longest an idle instance waits before looking for work that another instance committed. */
const MAX_IDLE_MS = 30_000;
/** Changes delivered to one endpoint in one claim before it goes back to the pool. */
const PER_CLAIM = 50;

export interface SenderOptions {
  readonly allowPrivate: boolean;
  readonly slotsPerOrg: number;
  /** Deliveries in flight on this instance, all organizations together. */
  readonly slots?: number;
  readonly retryScale: number;
  readonly timeoutMs: number;
  /** How often to look for due work when nothing woke the sender (another instance's commits, retries). Default 1000 ms. */
  readonly pollMs?: number;
  /** Name resolution for deliveries; tests pass their own. */
  readonly resolver?: Resolver;
}

export interface DeliveryResult {
  readonly ok: boolean;
  readonly http_status: number | null;
  readonly latency_ms: number;
  readonly error: string | null;
  /** Seconds the receiver asked to wait (Retry-After), if it did. */
  readonly retryAfterSeconds?: number;
}

/**
 * Delivers each organization's changes to its webhook endpoints, in log order per endpoint. Any
 * instance of a fleet may deliver: an instance claims an endpoint in PostgreSQL (FOR UPDATE SKIP
 * LOCKED, then a claim that runs out), delivers its next changes, and lets it go. Each organization
 * has its own bounded number of deliveries in flight on an instance, so one whose receivers hang
 * holds only its own slots.
 */
export class WebhookSender {
  private readonly instance = `i_${randomUUID()}`;
  /** Claims this instance has made: each claim has its own name, so a claim the endpoint lost (to a replay) never acts for a later one. */
  private claims = 0;
  /** How long a claim lasts from its last step: CLAIM_MS, or past a longer delivery timeout. */
  private readonly claimMs: number;
  private readonly inFlight = new Map<string, number>();
  private total = 0;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private again = false;
  private stopped = false;
  private readonly running = new Set<Promise<void>>();
  /** Requests on the wire, ended when the sender stops. */
  private readonly requests = new Set<http.ClientRequest>();
  private readonly allow: OutboundAllowance;
  /** How long to wait before looking for work again when the last look found none: doubles while idle. */
  private idleMs = 0;
  /** The earliest retry this instance scheduled and has not made yet. */
  private nextRetryAt = Infinity;

  constructor(private readonly db: Database, private readonly log: ChangeLog, private readonly options: SenderOptions) {
    this.allow = options.allowPrivate ? { privateNetworks: true } : {};
    this.claimMs = Math.max(CLAIM_MS, options.timeoutMs + CLAIM_BEYOND_TIMEOUT_MS);
  }

  start(): void {
    this.schedule(0);
  }

  /** A change committed here: look for work now rather than at the next poll. */
  poke(): void {
    this.idleMs = 0;
    if (!this.stopped) this.schedule(0);
  }

  /**
   * Stops looking for work and ends the deliveries on the wire at once, rather than waiting up to
   * the delivery timeout for receivers that hang: an ended delivery is neither recorded nor
   * retried by this instance, and its claim is released, so another instance (or this one, after
   * a restart) makes it again under the same webhook-id. Deliveries already answered are recorded
   * before this resolves.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const request of this.requests) request.destroy(new Error('the service is stopping'));
    await Promise.allSettled([...this.running]);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.ticking = true;
    this.again = false;
    let claimed = 0;
    try {
      claimed = await this.claimAndDeliver();
    } catch {
      // The database is away for a moment: the next poll tries again.
    } finally {
      this.ticking = false;
      // Idle, the look for work (other instances' commits, retries) slows down to every 30 s, so a
      // service without webhooks does not keep a connection busy; a commit here to an organization
      // with an active endpoint, or a retry this instance scheduled, looks at once.
      const poll = this.options.pollMs ?? 1000;
      this.idleMs = claimed > 0 || this.total > 0 ? poll : Math.min(MAX_IDLE_MS, Math.max(poll, this.idleMs * 2));
      const retry = this.nextRetryAt - Date.now();
      if (retry <= 0) this.nextRetryAt = Infinity;
      this.schedule(this.again ? 0 : Math.max(0, Math.min(this.idleMs, retry)));
    }
  }

  /** Claims due endpoints and starts their deliveries; returns how many it claimed. */
  private async claimAndDeliver(): Promise<number> {
    const slots = this.options.slots ?? 32;
    const free = slots - this.total;
    if (free <= 0) return 0;
    const busy = [...this.inFlight].filter(([, n]) => n >= this.options.slotsPerOrg).map(([org]) => org);
    const now = Date.now();
    const claim = `${this.instance}.${++this.claims}`;
    // Due endpoints with a change after their position, not of an organization whose slots are all in use here.
    const { rows } = await this.db.query<EndpointRow>(
      `UPDATE ${S}.webhook_endpoints e SET claimed_by = $1, claimed_until = $2::bigint + $5::bigint
        WHERE e.id IN (
          SELECT w.id FROM ${S}.webhook_endpoints w
           WHERE w.status = 'active' AND w.next_attempt_at <= $2::bigint AND (w.claimed_until IS NULL OR w.claimed_until < $2::bigint)
             AND NOT (w.org_id = ANY($3::text[]))
             AND EXISTS (SELECT 1 FROM ${S}.changes c WHERE c.org_id = w.org_id AND c.position > w.position)
           ORDER BY w.next_attempt_at, random() LIMIT $4 FOR UPDATE SKIP LOCKED)
        RETURNING e.id, e.org_id, e.url, e.objects, e.operations, e.secret, e.previous_secret, e.previous_secret_until::text, e.position::text, e.attempt, e.first_failed_at::text, e.dead_in_a_row`,
      [claim, now, busy, free, this.claimMs]);
    for (const row of rows) {
      if ((this.inFlight.get(row.org_id) ?? 0) >= this.options.slotsPerOrg || this.total >= slots) {
        await this.release(row.id, claim);
        continue;
      }
      this.inFlight.set(row.org_id, (this.inFlight.get(row.org_id) ?? 0) + 1);
      this.total++;
      const work = this.work(row, claim).catch(() => {}).finally(() => {
        this.total--;
        const n = (this.inFlight.get(row.org_id) ?? 1) - 1;
        if (n <= 0) this.inFlight.delete(row.org_id);
        else this.inFlight.set(row.org_id, n);
        this.running.delete(work);
        this.schedule(0);
      });
      this.running.add(work);
    }
    return rows.length;
  }

  private async release(id: string, claim: string): Promise<void> {
    await this.db.query(`UPDATE ${S}.webhook_endpoints SET claimed_by = NULL, claimed_until = NULL WHERE id = $1 AND claimed_by = $2`, [id, claim]);
  }

  /** Delivers the endpoint's next changes in order until one fails, none is left, or the claim has done its share. */
  private async work(endpoint: EndpointRow, claim: string): Promise<void> {
    let position = BigInt(endpoint.position);
    let attempt = endpoint.attempt;
    let firstFailed = endpoint.first_failed_at === null ? null : Number(endpoint.first_failed_at);
    let deadInARow = endpoint.dead_in_a_row;
    // The endpoint's next changes, read a page at a time and taken one by one, for the objects and
    // operations it selected when they were read: a change of them empties it.
    let ahead: Change[] = [];
    let aheadFor = '';
    try {
      for (let n = 0; n < PER_CLAIM && !this.stopped; n++) {
        // The endpoint as it is now: a pause, a deletion, a new URL or a rotated secret holds from
        // the next delivery on; a replay took the claim back (WebhookStore.rewind), and the next
        // claim goes on from the replay's cursor.
        const { rows: [current] } = await this.db.query<EndpointRow>(
          `SELECT id, org_id, url, objects, operations, status, secret, previous_secret, previous_secret_until::text FROM ${S}.webhook_endpoints WHERE id = $1 AND claimed_by = $2`,
          [endpoint.id, claim]);
        if (current === undefined || current.status !== 'active') return;
        endpoint = { ...endpoint, ...current };
        const selects = JSON.stringify([endpoint.objects, endpoint.operations]);
        if (ahead.length === 0 || selects !== aheadFor) {
          ahead = await this.next(endpoint, claim, position, PER_CLAIM - n);
          aheadFor = selects;
        }
        const change = ahead.shift();
        if (change === undefined) return;
        const from = position;
        const result = await this.deliver(endpoint, change);
        // Ended by stop(): the change stays where it is, for the next claim.
        if (this.stopped && !result.ok) return;
        const now = Date.now();
        const changePosition = positionOf(change.cursor);
        if (result.ok) {
          await this.record(endpoint, change, 'succeeded', result, null);
          position = changePosition;
          attempt = 0;
          firstFailed = null;
          deadInARow = 0;
          await this.advance(endpoint.id, claim, from, position, 0, null, 0, 0);
          continue;
        }
        if (result.http_status === 410) {
          await this.record(endpoint, change, 'failed', result, null);
          await this.disable(endpoint.id, claim, 'the receiver answered 410 Gone: it asked for no more deliveries', now);
          return;
        }
        firstFailed ??= now;
        if (now - firstFailed >= RETRY_FOR_MS * this.options.retryScale) {
          // Retried for the whole window: dead-lettered (listed, replayable), and the next change goes on.
          await this.record(endpoint, change, 'dead_lettered', result, null);
          position = changePosition;
          attempt = 0;
          firstFailed = null;
          deadInARow++;
          if (deadInARow >= DISABLE_AFTER_DEAD) {
            await this.advance(endpoint.id, claim, from, position, 0, null, 0, deadInARow);
            await this.disable(endpoint.id, claim, `${deadInARow} changes in a row were dead-lettered; the last: ${result.error ?? `HTTP ${result.http_status}`}`, now);
            return;
          }
          await this.advance(endpoint.id, claim, from, position, 0, null, 0, deadInARow);
          continue;
        }
        attempt++;
        const wait = this.backoff(attempt, result.retryAfterSeconds);
        await this.record(endpoint, change, 'failed', result, now + wait);
        await this.advance(endpoint.id, claim, from, position, attempt, firstFailed, now + wait, deadInARow);
        this.nextRetryAt = Math.min(this.nextRetryAt, now + wait);
        return;
      }
    } finally {
      await this.release(endpoint.id, claim).catch(() => {});
    }
  }

  /** About 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then hourly, each give or take 20 %, scaled; at least what Retry-After asks (up to an hour). */
  private backoff(attempt: number, retryAfterSeconds: number | undefined): number {
    const base = (SCHEDULE_MS[attempt - 1] ?? HOURLY_MS) * this.options.retryScale;
    const jittered = base * (0.8 + Math.random() * 0.4);
    const asked = retryAfterSeconds === undefined ? 0 : Math.min(retryAfterSeconds * 1000, HOURLY_MS) * this.options.retryScale;
    return Math.max(1, Math.round(Math.max(jittered, asked)));
  }

  /**
   * Records a step that started at `from`: the endpoint's new position and retry state. Only while
   * this claim holds it and it still stands at `from`: a replay made while the step's delivery was
   * out (it sets the position back and takes the claim, which a later claim of this same instance
   * does not give back), or an instance that claimed the endpoint after this claim ran out and moved
   * it on, is kept.
   */
  private async advance(id: string, claim: string, from: bigint, position: bigint, attempt: number, firstFailed: number | null, nextAt: number, deadInARow: number): Promise<void> {
    await this.db.query(
      `UPDATE ${S}.webhook_endpoints SET position = $3::bigint, attempt = $4, first_failed_at = $5::bigint, next_attempt_at = $6::bigint, dead_in_a_row = $7,
              claimed_until = $8::bigint
        WHERE id = $1 AND claimed_by = $2 AND position = $9::bigint`,
      [id, claim, position.toString(), attempt, firstFailed, nextAt, deadInARow, Date.now() + this.claimMs, from.toString()]);
  }

  /** Stops deliveries to the endpoint, saying why, while this claim holds it. */
  private async disable(id: string, claim: string, reason: string, now: number): Promise<void> {
    await this.db.query(`UPDATE ${S}.webhook_endpoints SET status = 'disabled', disabled_reason = $3, updated_at = $4 WHERE id = $1 AND claimed_by = $2`, [id, claim, reason, now]);
  }

  private async record(endpoint: EndpointRow, change: Change, outcome: 'succeeded' | 'failed' | 'dead_lettered', result: DeliveryResult, nextAt: number | null): Promise<string> {
    const { rows } = await this.db.query<{ id: string }>(
      `INSERT INTO ${S}.webhook_attempts (endpoint_id, org_id, position, event_id, attempted_at, outcome, http_status, latency_ms, error, next_attempt_at)
       VALUES ($1, $2, $3::bigint, $4, $5, $6, $7, $8, $9, $10::bigint) RETURNING id::text`,
      [endpoint.id, endpoint.org_id, positionOf(change.cursor).toString(), change.event_id, Date.now(), outcome, result.http_status, Math.round(result.latency_ms), result.error, nextAt]);
    return rows[0]!.id;
  }

  /** The endpoint's next changes after `position` that its objects and operations select, at most `limit`; with none, the position moves past the others. */
  private async next(endpoint: EndpointRow, claim: string, position: bigint, limit: number): Promise<Change[]> {
    const { changes, head } = await this.log.upcoming(endpoint.org_id, position, endpoint.objects, endpoint.operations, limit);
    if (changes.length === 0 && head > position) {
      // None selected up to the head of the same snapshot: the position moves there, past the changes this endpoint does not want.
      await this.db.query(
        `UPDATE ${S}.webhook_endpoints SET position = greatest(position, $3::bigint) WHERE id = $1 AND claimed_by = $2 AND attempt = 0`,
        [endpoint.id, claim, head.toString()]);
    }
    return changes;
  }

  /** One POST of a change, signed with every secret still valid. */
  deliver(endpoint: Pick<EndpointRow, 'url' | 'secret' | 'previous_secret' | 'previous_secret_until'>, change: Change): Promise<DeliveryResult> {
    const timestamp = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: `record.${change.operation}`, timestamp: new Date(timestamp * 1000).toISOString(), data: change });
    return this.post(endpoint, change.event_id, timestamp, body);
  }

  /**
   * Sends one change again, now, beside the endpoint's stream (which has already moved past it),
   * signed with the endpoint's current secrets and the change's own webhook-id, and logs the attempt:
   * succeeded, or dead_lettered again with what went wrong. It changes nothing of the endpoint's
   * position, retries or failure count.
   */
  async resend(endpoint: EndpointRow, change: Change): Promise<{ result: DeliveryResult; attemptId: string }> {
    const result = await this.deliver(endpoint, change);
    const id = await this.record(endpoint, change, result.ok ? 'succeeded' : 'dead_lettered', result, null);
    return { result, attemptId: id };
  }

  /** A ping: `webhook.test`, with an id of its own. */
  ping(endpoint: Pick<EndpointRow, 'id' | 'url' | 'secret' | 'previous_secret' | 'previous_secret_until'>): Promise<DeliveryResult> {
    const timestamp = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date(timestamp * 1000).toISOString(), data: { endpoint_id: endpoint.id } });
    return this.post(endpoint, `msg_test_${randomUUID()}`, timestamp, body);
  }

  private post(endpoint: Pick<EndpointRow, 'url' | 'secret' | 'previous_secret' | 'previous_secret_until'>, id: string, timestamp: number, body: string): Promise<DeliveryResult> {
    const secrets = [endpoint.secret];
    if (endpoint.previous_secret !== null && Number(endpoint.previous_secret_until) > Date.now()) secrets.push(endpoint.previous_secret);
    const started = performance.now();
    const done = (ok: boolean, status: number | null, error: string | null, retryAfter?: number): DeliveryResult => ({
      ok, http_status: status, latency_ms: performance.now() - started, error, ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter }),
    });
    return new Promise((resolve) => {
      let url: URL;
      try {
        url = new URL(endpoint.url);
        checkOutboundHost(url.hostname, this.allow);
        if (url.protocol !== 'https:' && !(this.options.allowPrivate && url.protocol === 'http:')) throw new Error(`only https URLs are allowed, not ${url.protocol}`);
      } catch (e) {
        resolve(done(false, null, refusal(e)));
        return;
      }
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(url, {
        method: 'POST',
        headers: { ...webhookHeaders(secrets, id, timestamp, body), 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'oql-webhooks' },
        lookup: outboundLookup(this.allow, this.options.resolver),
        timeout: this.options.timeoutMs,
        agent: false,
      }, (response) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          // Only the status matters: at most 64 KiB of the answer is read.
          if (read > MAX_ANSWER_BYTES) response.destroy();
        });
        const finish = () => {
          const status = response.statusCode ?? 0;
          const retryAfter = Number(response.headers['retry-after']);
          resolve(done(status >= 200 && status < 300, status, status >= 200 && status < 300 ? null : `the receiver answered HTTP ${status}`, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined));
        };
        response.on('end', finish);
        response.on('close', finish);
        response.on('error', () => {});
      });
      request.on('timeout', () => request.destroy(new Error(`no answer within ${this.options.timeoutMs / 1000} s`)));
      request.on('error', (e) => resolve(done(false, null, refusal(e))));
      request.on('close', () => this.requests.delete(request));
      this.requests.add(request);
      if (this.stopped) request.destroy(new Error('the service is stopping'));
      request.end(body);
    });
  }
}

function refusal(e: unknown): string {
  if (e instanceof OutboundAddressError) return `refused: ${describeVerdict(e.verdict)}`;
  const err = e as { code?: string; message?: string };
  if (err.code === 'ECONNREFUSED') return 'connection refused';
  if (err.code === 'ENOTFOUND') return 'the host name does not resolve';
  if (err.code === 'ECONNRESET') return 'the connection was reset';
  return String(err.message ?? e).slice(0, 300);
}
