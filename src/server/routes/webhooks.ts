import type { FastifyInstance } from 'fastify';
import { toEnvelope } from '../../query/envelope.js';
import { contextOf } from '../context.js';
import { EXAMPLES } from '../openapi/examples.js';
import { ref } from '../openapi/response-schemas.js';
import { BODY_ERRORS, errors, LIGHT_ERRORS, success } from '../openapi/responses.js';

const OPERATIONS = { type: 'array', minItems: 1, maxItems: 5, items: { type: 'string', enum: ['created', 'updated', 'deleted', 'restored', 'purged'] }, description: 'only these operations; leave out for all' } as const;
const OBJECTS = { type: 'array', minItems: 1, maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 200 }, description: 'only changes of these object slugs; leave out for every object your role may read' } as const;
const URL_FIELD = { type: 'string', minLength: 1, maxLength: 2000, description: 'an https URL on the public internet (http and private addresses only with OQL_WEBHOOK_ALLOW_PRIVATE=1)' } as const;
const DESCRIPTION = { type: ['string', 'null'], maxLength: 500 } as const;
const ID_PARAM = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 200, description: 'the endpoint id', examples: ['whk_3q9Xb2LkV0aHc8Zt'] } } } as const;
const ADMIN = 'Admins and superadmins; members get 403.';

const DELIVERY_PARAMS = {
  type: 'object', required: ['id', 'delivery_id'],
  properties: { ...ID_PARAM.properties, delivery_id: { type: 'string', pattern: '^[0-9]{1,18}$', description: 'the id of a dead_lettered delivery, as the delivery log gives it', examples: ['413'] } },
} as const;

interface IdParams {
  readonly id: string;
}

/** Webhook endpoints (docs/webhooks.md): the changes of the log, pushed to the organization's receivers. */
export async function webhookRoutes(app: FastifyInstance): Promise<void> {
  const ops = () => app.oql.ops.webhooks;

  app.post<{ Body: Record<string, unknown> }>('/api/v1/webhooks', {
    schema: {
      operationId: 'createWebhook', summary: 'Add a webhook endpoint; its signing secret is in this answer only', tags: ['webhooks'],
      description: `Changes committed from now on are POSTed to the URL, signed as Standard Webhooks, in log order, retried for 24 hours. ${ADMIN}`,
      body: {
        type: 'object', required: ['url'], additionalProperties: false,
        properties: { url: URL_FIELD, objects: OBJECTS, operations: OPERATIONS, description: DESCRIPTION },
        examples: [{ url: 'https://hooks.example.com/oql', objects: ['contact', 'account'], description: 'Warehouse sync' }],
      },
      response: {
        201: success('The endpoint, with its secret (shown once).', ref('WebhookWithSecret'), EXAMPLES.webhookCreated),
        ...errors('webhookUrl', 'tooManyWebhooks', 'invalidSlug', 'objectDenied', 'webhookAdminOnly', ...LIGHT_ERRORS, ...BODY_ERRORS),
      },
    },
  }, async (request, reply) => reply.code(201).send(toEnvelope(await ops().create(contextOf(request), request.body))));

  app.get('/api/v1/webhooks', {
    schema: {
      operationId: 'listWebhooks', summary: "The organization's webhook endpoints", tags: ['webhooks'], description: ADMIN,
      response: {
        200: success('Every endpoint, oldest first.', { type: 'object', required: ['webhooks'], additionalProperties: false, properties: { webhooks: { type: 'array', items: ref('Webhook') } } }, EXAMPLES.webhooks),
        ...errors('webhookAdminOnly', ...LIGHT_ERRORS),
      },
    },
  }, async (request) => toEnvelope(await ops().list(contextOf(request))));

  app.get<{ Params: IdParams }>('/api/v1/webhooks/:id', {
    schema: {
      operationId: 'getWebhook', summary: 'One webhook endpoint', tags: ['webhooks'], params: ID_PARAM, description: ADMIN,
      response: { 200: success('The endpoint.', ref('Webhook'), EXAMPLES.webhook), ...errors('webhookNotFound', 'webhookAdminOnly', ...LIGHT_ERRORS) },
    },
  }, async (request) => toEnvelope(await ops().get(contextOf(request), request.params.id)));

  app.patch<{ Params: IdParams; Body: Record<string, unknown> }>('/api/v1/webhooks/:id', {
    schema: {
      operationId: 'updateWebhook', summary: 'Change, pause or resume a webhook endpoint', tags: ['webhooks'], params: ID_PARAM,
      description: `Only the fields sent change. status paused holds deliveries (changes wait, nothing is lost); active resumes them, and re-enables an endpoint the service disabled. ${ADMIN}`,
      body: {
        type: 'object', additionalProperties: false, minProperties: 1,
        properties: { url: URL_FIELD, objects: { ...OBJECTS, type: ['array', 'null'] }, operations: { ...OPERATIONS, type: ['array', 'null'] }, description: DESCRIPTION, status: { type: 'string', enum: ['active', 'paused'] } },
        examples: [{ status: 'paused' }],
      },
      response: { 200: success('The endpoint after the change.', ref('Webhook'), EXAMPLES.webhook), ...errors('webhookNotFound', 'webhookUrl', 'invalidSlug', 'objectDenied', 'webhookAdminOnly', ...LIGHT_ERRORS, ...BODY_ERRORS) },
    },
  }, async (request) => toEnvelope(await ops().update(contextOf(request), request.params.id, request.body)));

  app.delete<{ Params: IdParams }>('/api/v1/webhooks/:id', {
    schema: {
      operationId: 'deleteWebhook', summary: 'Remove a webhook endpoint and its delivery log', tags: ['webhooks'], params: ID_PARAM, description: ADMIN,
      response: {
        200: success('It is gone.', { type: 'object', required: ['id', 'deleted'], additionalProperties: false, properties: { id: { type: 'string' }, deleted: { type: 'boolean', const: true } } }, EXAMPLES.webhookDeleted),
        ...errors('webhookNotFound', 'webhookAdminOnly', ...LIGHT_ERRORS),
      },
    },
  }, async (request) => toEnvelope(await ops().remove(contextOf(request), request.params.id)));

  app.post<{ Params: IdParams }>('/api/v1/webhooks/:id/rotate-secret', {
    schema: {
      operationId: 'rotateWebhookSecret', summary: 'A new signing secret; the old one keeps signing beside it for 24 hours', tags: ['webhooks'], params: ID_PARAM,
      description: `While both are valid every delivery carries two signatures, so a receiver switches over without losing one. ${ADMIN}`,
      response: { 200: success('The endpoint with its new secret (shown once).', ref('WebhookWithSecret'), EXAMPLES.webhookRotated), ...errors('webhookNotFound', 'webhookAdminOnly', ...LIGHT_ERRORS) },
    },
  }, async (request) => toEnvelope(await ops().rotate(contextOf(request), request.params.id)));

  app.post<{ Params: IdParams }>('/api/v1/webhooks/:id/test', {
    schema: {
      operationId: 'testWebhook', summary: 'Send a ping (type webhook.test) now and say what the receiver answered', tags: ['webhooks'], params: ID_PARAM, description: ADMIN,
      response: {
        200: success('What the receiver answered.', {
          type: 'object', required: ['success', 'http_status', 'latency_ms', 'error'], additionalProperties: false,
          properties: { success: { type: 'boolean' }, http_status: { type: ['integer', 'null'] }, latency_ms: { type: 'integer' }, error: { type: ['string', 'null'] } },
        }, EXAMPLES.webhookTest),
        ...errors('webhookNotFound', 'webhookAdminOnly', ...LIGHT_ERRORS),
      },
    },
  }, async (request) => toEnvelope(await ops().test(contextOf(request), request.params.id)));

  app.get<{ Params: IdParams; Querystring: { status?: string; before?: string; limit?: string } }>('/api/v1/webhooks/:id/deliveries', {
    schema: {
      operationId: 'listWebhookDeliveries', summary: "An endpoint's delivery attempts, newest first", tags: ['webhooks'], params: ID_PARAM, description: ADMIN,
      querystring: {
        type: 'object', additionalProperties: false,
        properties: {
          status: { type: 'string', enum: ['succeeded', 'failed', 'dead_lettered'] },
          before: { type: 'string', maxLength: 20, description: 'next_before of the previous page' },
          limit: { type: 'string', pattern: '^[0-9]{1,3}$', description: '1 to 500; default 50' },
        },
      },
      response: {
        200: success('One page of attempts.', {
          type: 'object', required: ['deliveries', 'next_before'], additionalProperties: false,
          properties: { deliveries: { type: 'array', items: ref('WebhookDelivery') }, next_before: { type: ['string', 'null'] } },
        }, EXAMPLES.webhookDeliveries),
        ...errors('webhookNotFound', 'changesQuery', 'webhookAdminOnly', ...LIGHT_ERRORS),
      },
    },
  }, async (request) => toEnvelope(await ops().deliveries(contextOf(request), request.params.id, request.query)));

  app.post<{ Params: IdParams & { delivery_id: string } }>('/api/v1/webhooks/:id/deliveries/:delivery_id/retry', {
    schema: {
      operationId: 'retryWebhookDelivery', summary: 'Send one dead-lettered change again, now', tags: ['webhooks'], params: DELIVERY_PARAMS,
      description: 'The change goes out at once with its own webhook-id, signed with the current secrets, beside the endpoint\'s stream (which has moved past it, so not in its order); '
        + `the attempt joins the delivery log: succeeded, or dead_lettered again with what went wrong. The endpoint's cursor and retries do not change. Only a dead_lettered delivery may be retried. ${ADMIN}`,
      response: {
        200: success('What the receiver answered, and the attempt as the delivery log shows it.', {
          type: 'object', required: ['success', 'http_status', 'latency_ms', 'error', 'delivery'], additionalProperties: false,
          properties: { success: { type: 'boolean' }, http_status: { type: ['integer', 'null'] }, latency_ms: { type: 'integer' }, error: { type: ['string', 'null'] }, delivery: ref('WebhookDelivery') },
        }, EXAMPLES.webhookRetried),
        ...errors('webhookNotFound', 'notDeadLettered', 'cursorExpired', 'webhookAdminOnly', ...LIGHT_ERRORS),
      },
    },
  }, async (request) => toEnvelope(await ops().retry(contextOf(request), request.params.id, request.params.delivery_id)));

  app.post<{ Params: IdParams; Body: Record<string, unknown> }>('/api/v1/webhooks/:id/replay', {
    schema: {
      operationId: 'replayWebhook', summary: 'Deliver again every change after a cursor', tags: ['webhooks'], params: ID_PARAM,
      description: `The endpoint goes back to the cursor and sends, in order, every change after it that it selects (the same webhook-id as the first time). ${ADMIN}`,
      body: { type: 'object', required: ['after'], additionalProperties: false, properties: { after: { type: 'string', maxLength: 40, description: 'a change cursor' } }, examples: [{ after: 'c2n9c' }] },
      response: { 200: success('The endpoint, at the cursor.', ref('Webhook'), EXAMPLES.webhook), ...errors('webhookNotFound', 'invalidCursor', 'cursorExpired', 'webhookAdminOnly', ...LIGHT_ERRORS, ...BODY_ERRORS) },
    },
  }, async (request) => toEnvelope(await ops().replay(contextOf(request), request.params.id, request.body)));
}
