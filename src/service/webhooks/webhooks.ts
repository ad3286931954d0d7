import type { Catalog } from '../../catalog/types.js';
import { requireObject } from '../../catalog/entities.js';
import { OqlError } from '../../diagnostics/diagnostic.js';
import type { ServerConfig } from '../config.js';
import type { Policy, RequestContext } from '../policy.js';
import { positionOf, type ChangeLog } from '../changes/log.js';
import type { WebhookSender } from './sender.js';
import { attemptOf, checkOperations, checkWebhookUrl, webhookOf, type WebhookStore } from './store.js';

/** How long a rotated secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
const OUTCOMES = ['succeeded', 'failed', 'dead_lettered'];

/**
 * The webhook endpoints of an organization, for its admins and superadmins: every check of a
 * request (role, URL, objects, operations, the cap) and the store and sender behind them.
 */
export class Webhooks {
  constructor(
    private readonly store: WebhookStore,
    readonly sender: WebhookSender,
    private readonly log: ChangeLog,
    private readonly catalog: Catalog,
    private readonly config: ServerConfig,
    private readonly policy: Policy,
  ) {}

  private admit<T>(ctx: RequestContext, fn: () => Promise<T>): Promise<T> {
    this.policy.checkRole(ctx, 'admin', 'manage webhooks');
    return this.policy.admit(ctx, 'light', fn);
  }

  private get allow() {
    return this.config.webhookAllowPrivate ? { privateNetworks: true, http: true } : {};
  }

  private objects(ctx: RequestContext, value: unknown): string[] | null {
    if (value === undefined || value === null) return null;
    if (!Array.isArray(value) || value.length === 0) throw OqlError.plain('VALIDATION_FAILED', 'objects must be a non-empty array of object slugs', 'leave objects out for every object');
    for (const slug of value) {
      requireObject(this.catalog, String(slug));
      this.policy.checkObject(ctx, String(slug));
    }
    return [...new Set(value.map(String))];
  }

  create(ctx: RequestContext, body: Record<string, unknown>) {
    return this.admit(ctx, async () => {
      const spec = {
        url: checkWebhookUrl(body.url, this.allow),
        objects: this.objects(ctx, body.objects),
        operations: checkOperations(body.operations),
        description: typeof body.description === 'string' ? body.description : null,
      };
      // An endpoint gets what commits from its creation on; a replay sends what came before.
      const row = await this.store.create(ctx.org, ctx.principal.userId, spec, await this.log.head(ctx.org), this.config.maxWebhooksPerOrg);
      return { ...webhookOf(row), secret: row.secret };
    });
  }

  list(ctx: RequestContext) {
    return this.admit(ctx, async () => ({ webhooks: (await this.store.list(ctx.org)).map(webhookOf) }));
  }

  get(ctx: RequestContext, id: string) {
    return this.admit(ctx, async () => webhookOf(await this.store.get(ctx.org, id)));
  }

  update(ctx: RequestContext, id: string, body: Record<string, unknown>) {
    return this.admit(ctx, async () => {
      const changes: Parameters<WebhookStore['update']>[2] = {};
      if (body.url !== undefined) changes.url = checkWebhookUrl(body.url, this.allow);
      if (body.objects !== undefined) changes.objects = this.objects(ctx, body.objects);
      if (body.operations !== undefined) changes.operations = checkOperations(body.operations);
      if (body.description !== undefined) changes.description = typeof body.description === 'string' ? body.description : null;
      if (body.status !== undefined) {
        if (body.status !== 'active' && body.status !== 'paused') throw OqlError.plain('VALIDATION_FAILED', 'status must be active or paused', 'pause an endpoint with {"status": "paused"}, resume it with {"status": "active"}');
        changes.status = body.status;
      }
      const row = await this.store.update(ctx.org, id, changes);
      if (row.status === 'active') this.sender.poke();
      return webhookOf(row);
    });
  }

  remove(ctx: RequestContext, id: string) {
    return this.admit(ctx, async () => {
      await this.store.remove(ctx.org, id);
      return { id, deleted: true as const };
    });
  }

  rotate(ctx: RequestContext, id: string) {
    return this.admit(ctx, async () => {
      const row = await this.store.rotate(ctx.org, id, ROTATION_OVERLAP_MS);
      return { ...webhookOf(row), secret: row.secret, previous_secret_expires_at: Number(row.previous_secret_until) };
    });
  }

  test(ctx: RequestContext, id: string) {
    return this.admit(ctx, async () => {
      const row = await this.store.get(ctx.org, id);
      const result = await this.sender.ping(row);
      return { success: result.ok, http_status: result.http_status, latency_ms: Math.round(result.latency_ms), error: result.error };
    });
  }

  deliveries(ctx: RequestContext, id: string, query: { status?: unknown; before?: unknown; limit?: unknown }) {
    return this.admit(ctx, async () => {
      const status = query.status === undefined || query.status === '' ? undefined : String(query.status);
      if (status !== undefined && !OUTCOMES.includes(status)) throw OqlError.plain('VALIDATION_FAILED', `status ${JSON.stringify(status.slice(0, 40))} is not one of ${OUTCOMES.join(', ')}`, 'leave status out for every attempt');
      const before = query.before === undefined || query.before === '' ? undefined : /^\d{1,18}$/.test(String(query.before)) ? BigInt(String(query.before)) : undefined;
      if (query.before !== undefined && query.before !== '' && before === undefined) throw OqlError.plain('INVALID_TOKEN', 'before must be the next_before of a previous page', 'leave before out for the newest attempts');
      const limit = query.limit === undefined || query.limit === '' ? 50 : Number(query.limit);
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > 500) throw OqlError.plain('VALIDATION_FAILED', 'limit must be a whole number from 1 to 500', 'pass limit=50, or leave it out');
      const rows = await this.store.attempts(ctx.org, id, status, before, limit + 1);
      const page = rows.slice(0, limit).map(attemptOf);
      return { deliveries: page, next_before: rows.length > limit ? page[page.length - 1]!.id : null };
    });
  }

  /**
   * Sends one dead-lettered change again, now (Svix's "resend"): the endpoint's stream has already
   * moved past it, so it goes beside the stream, not in its order; the receiver knows it by its
   * webhook-id (its event_id) and its cursor. A failure leaves it dead-lettered, to retry again.
   */
  retry(ctx: RequestContext, id: string, deliveryId: string) {
    return this.admit(ctx, async () => {
      const endpoint = await this.store.get(ctx.org, id);
      const attempt = await this.store.attempt(ctx.org, id, deliveryId);
      if (attempt.outcome !== 'dead_lettered') {
        throw OqlError.plain('VALIDATION_FAILED', `delivery ${attempt.id} ${attempt.outcome === 'succeeded' ? 'succeeded' : 'failed and is still being retried'}; only a dead-lettered change is retried this way`,
          attempt.outcome === 'succeeded' ? 'to send delivered changes again, replay the endpoint from a cursor before them' : 'the endpoint retries it on its schedule (next_attempt_at); pass the id of a dead_lettered delivery');
      }
      const position = BigInt(attempt.position);
      const { change } = await this.log.next(ctx.org, position - 1n, null, null);
      if (change === null || positionOf(change.cursor) !== position) {
        throw OqlError.plain('CURSOR_EXPIRED', `the change of delivery ${attempt.id} is no longer kept: the retention removed it`,
          'resynchronise the receiver: run a full connector sync of the objects it follows');
      }
      this.policy.checkObject(ctx, change.object_slug);
      const { result, attemptId } = await this.sender.resend(endpoint, change);
      return {
        success: result.ok, http_status: result.http_status, latency_ms: Math.round(result.latency_ms), error: result.error,
        delivery: attemptOf(await this.store.attempt(ctx.org, id, attemptId)),
      };
    });
  }

  replay(ctx: RequestContext, id: string, body: Record<string, unknown>) {
    return this.admit(ctx, async () => {
      const after = positionOf(body.after);
      await this.store.get(ctx.org, id);
      // Reading from there tells whether the changes after it are still kept (CURSOR_EXPIRED otherwise).
      await this.log.read(ctx.org, after, [...this.catalog.objects.keys()], 1);
      const row = await this.store.rewind(ctx.org, id, after);
      this.sender.poke();
      return webhookOf(row);
    });
  }
}

