import type { FastifyInstance, FastifyReply } from 'fastify';
import { errorEnvelope, toEnvelope } from '../../query/envelope.js';
import { DEFAULT_CHANGES_LIMIT, MAX_CHANGES_LIMIT, MAX_WAIT_SECONDS } from '../../service/changes/feed.js';
import { positionOf } from '../../service/changes/log.js';
import { contextOf } from '../context.js';
import { EXAMPLES } from '../openapi/examples.js';
import { ref } from '../openapi/response-schemas.js';
import { errors, LIGHT_ERRORS, success } from '../openapi/responses.js';

const CURSOR = { type: 'string', maxLength: 40, description: 'a cursor as a change, next_cursor or /api/v1/changes/head gave it; leave it out to start at the oldest change kept' } as const;
const OBJECTS = { type: 'string', maxLength: 4000, description: 'object slugs separated by commas; default every object your role may read', examples: ['contact,account'] } as const;

interface ChangesQuery {
  readonly after?: string;
  readonly objects?: string;
  readonly limit?: string;
  readonly wait?: string;
}

/** An AbortSignal that fires when the client goes away before the answer is sent. */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** The change log (docs/changes.md): pages, long-polls, the head, and a Server-Sent Events stream. */
export async function changeRoutes(app: FastifyInstance): Promise<void> {
  const { streamMaxSeconds, streamHeartbeatSeconds } = app.oql.config;

  app.get<{ Querystring: ChangesQuery }>('/api/v1/changes', {
    schema: {
      operationId: 'listChanges', summary: 'Read the changes after a cursor, oldest first; with wait, a long-poll', tags: ['changes'],
      description: `Your organization's changes of the objects your role may read, in commit order: a reader following next_cursor never misses a change nor gets one twice. With wait (seconds, at most ${MAX_WAIT_SECONDS}), an empty answer waits until a change commits (answered within about a second of its commit) or the wait runs out (no changes, the same cursor). A cursor older than the retention (OQL_CHANGES_RETENTION_DAYS) is 410 CURSOR_EXPIRED.`,
      querystring: {
        type: 'object', additionalProperties: false,
        properties: {
          after: CURSOR, objects: OBJECTS,
          limit: { type: 'string', pattern: '^[0-9]{1,4}$', description: `changes per page, 1 to ${MAX_CHANGES_LIMIT}; default ${DEFAULT_CHANGES_LIMIT}`, examples: ['100'] },
          wait: { type: 'string', pattern: '^[0-9]{1,2}$', description: `seconds to wait for a change when there is none yet, 0 to ${MAX_WAIT_SECONDS}; default 0`, examples: ['25'] },
        },
      },
      response: {
        200: success('One page of changes, and where to read on.', ref('ChangePage'), EXAMPLES.changes),
        ...errors('invalidCursor', 'changesQuery', 'cursorExpired', 'invalidSlug', 'objectDenied', 'tooManyWaiting', ...LIGHT_ERRORS),
      },
    },
  }, async (request, reply) => {
    const page = await app.oql.ops.changes(contextOf(request), request.query, clientGone(reply));
    return toEnvelope(page);
  });

  app.get('/api/v1/changes/head', {
    schema: {
      operationId: 'changesHead', summary: 'The cursor of now: read from it to get only the changes that commit from now on', tags: ['changes'],
      response: {
        200: success('The cursor of your organization\'s newest change.', { type: 'object', required: ['cursor'], additionalProperties: false, properties: { cursor: { type: 'string' } } }, EXAMPLES.changesHead),
        ...errors(...LIGHT_ERRORS),
      },
    },
  }, async (request) => toEnvelope(await app.oql.ops.changesHead(contextOf(request))));

  app.get<{ Querystring: Omit<ChangesQuery, 'limit' | 'wait'> }>('/api/v1/changes/stream', {
    schema: {
      operationId: 'streamChanges', summary: 'The changes as Server-Sent Events, from a cursor on', tags: ['changes'],
      description: `text/event-stream: each change is an event with id (its cursor), event (record.<operation>) and data (the change as JSON). Last-Event-ID resumes after that change. A comment line every ${streamHeartbeatSeconds} s keeps idle connections open; the server ends the stream after ${streamMaxSeconds} s and the client reconnects with Last-Event-ID, as EventSource does by itself.`,
      querystring: { type: 'object', additionalProperties: false, properties: { after: CURSOR, objects: OBJECTS } },
      headers: { type: 'object', properties: { 'last-event-id': { ...CURSOR, description: 'resume after this change: its cursor, as the last event\'s id gave it; wins over after' } } },
      response: {
        200: { description: 'The stream of changes.', content: { 'text/event-stream': { schema: { type: 'string' }, example: 'id: c2n9c\nevent: record.updated\ndata: {"cursor":"c2n9c","event_id":"5f0c1c1e-8f4b-4d7a-9b0e-3c6a2d9e7f10",…}\n\n' } } },
        ...errors('invalidCursor', 'cursorExpired', 'invalidSlug', 'objectDenied', 'tooManyWaiting', ...LIGHT_ERRORS),
      },
    },
  }, async (request, reply) => {
    const ctx = contextOf(request);
    const lastEventId = request.headers['last-event-id'];
    const after = typeof lastEventId === 'string' && lastEventId !== '' ? lastEventId : request.query.after;
    const feed = app.oql.ops.feed;
    const read = feed.parse(ctx, { after, objects: request.query.objects, limit: String(DEFAULT_CHANGES_LIMIT) });
    const signal = clientGone(reply);
    // The first page before the stream opens, so a cursor that is wrong or expired answers with its status.
    let seen = feed.watcher.seen(ctx.org);
    let page = await feed.page(ctx, read);
    await feed.waiting(ctx, async () => {
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no', connection: 'keep-alive' });
      const write = async (text: string) => {
        if (!raw.write(text)) await new Promise<void>((resolve) => { raw.once('drain', resolve); raw.once('close', resolve); });
      };
      await write('retry: 1000\n\n');
      const end = Date.now() + streamMaxSeconds * 1000;
      let position = read.after;
      // Where the head poll next wakes this stream: past changes of objects it does not follow too.
      let from = position;
      let lastWrite = Date.now();
      try {
        // A stopping service ends its streams; clients reconnect from their last id, elsewhere.
        while (!signal.aborted && Date.now() < end && !feed.watcher.stopped) {
          for (const change of page.changes) {
            await write(`id: ${change.cursor}\nevent: record.${change.operation}\ndata: ${JSON.stringify(change)}\n\n`);
            position = positionOf(change.cursor);
            if (position > from) from = position;
            lastWrite = Date.now();
          }
          if (!page.has_more) {
            const idle = Math.min(lastWrite + streamHeartbeatSeconds * 1000, end) - Date.now();
            const head = idle > 0 ? await feed.watcher.wait(ctx.org, from, idle, signal, seen) : undefined;
            if (head !== undefined && head > from) from = head;
            if (signal.aborted) break;
            if (Date.now() - lastWrite >= streamHeartbeatSeconds * 1000) {
              await write(': heartbeat\n\n');
              lastWrite = Date.now();
            }
          }
          seen = feed.watcher.seen(ctx.org);
          page = await feed.page(ctx, { ...read, after: position });
        }
      } catch (e) {
        // Mid-stream the status is sent: the refusal goes as an event, and the client reconnects from its last id.
        const envelope = errorEnvelope(e);
        if (!signal.aborted) await write(`event: error\ndata: ${JSON.stringify(envelope)}\n\n`).catch(() => {});
      } finally {
        raw.end();
      }
    });
  });
}
