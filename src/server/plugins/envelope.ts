import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DiagnosticCode } from '../../diagnostics/codes.js';
import { OqlError, type ValidationError } from '../../diagnostics/diagnostic.js';
import { errorEnvelope, type ErrorEnvelope } from '../../query/envelope.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

function plain(code: DiagnosticCode, message: string, hint?: string): ErrorEnvelope {
  return errorEnvelope(OqlError.plain(code, message, hint));
}

type AjvError = { instancePath?: string; schemaPath?: string; keyword?: string; message?: string; params?: Record<string, unknown> };
type Schema = { type?: string; required?: readonly string[]; properties?: Record<string, Schema>; items?: Schema };

/**
 * A schema as a JSON sketch (`{"values": [{…}, …]}`): what a value of the wrong type should have
 * looked like, so "body must be object" also says which object.
 */
function sketch(schema: Schema | undefined, depth = 0): string {
  switch (schema?.type) {
    case 'object': {
      const required = schema.required ?? [];
      if (required.length === 0 || depth > 2) return '{…}';
      return `{${required.map((k) => `"${k}": ${sketch(schema.properties?.[k], depth + 1)}`).join(', ')}}`;
    }
    case 'array':
      return `[${sketch(schema.items, depth + 1)}, …]`;
    case 'string':
      return '"…"';
    case 'number':
    case 'integer':
      return '0';
    case 'boolean':
      return 'true';
    default:
      return '…';
  }
}

/** The part of a route's schema an error's schemaPath (`#/properties/values/type`) points into. */
function schemaAt(root: Schema | undefined, schemaPath: string | undefined): Schema | undefined {
  const steps = (schemaPath ?? '').replace(/^#\/?/, '').split('/').slice(0, -1);
  let at: unknown = root;
  for (const step of steps) at = at === undefined || at === null ? undefined : (at as Record<string, unknown>)[step.replace(/~1/g, '/').replace(/~0/g, '~')];
  return at as Schema | undefined;
}

// JSON-schema keywords → the error codes record validation uses for the same kind of problem.
const KEYWORD_CODES: Record<string, string> = {
  type: 'TYPE_MISMATCH',
  required: 'REQUIRED',
  additionalProperties: 'UNKNOWN_FIELD',
  maxItems: 'TOO_MANY_RECORDS',
  minItems: 'TOO_FEW_ITEMS',
  maxLength: 'TOO_LONG',
  minLength: 'TOO_SHORT',
  enum: 'INVALID_OPTION',
};

/** Fastify's schema errors as validation entries, one per problem. */
function schemaEntries(errors: readonly AjvError[], context: string, slug: string, schema: Schema | undefined): ValidationError[] {
  return errors.map((e) => {
    const segments = (e.instancePath ?? '').split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    const parent = [context, ...segments].join('.');
    if (e.keyword === 'required' && typeof e.params?.['missingProperty'] === 'string') segments.push(e.params['missingProperty']);
    // A record's index: the first array position of a record list (the body itself, or body.values).
    const start = segments[0] === 'values' ? 1 : 0;
    const index = context === 'body' && /^\d+$/.test(segments[start] ?? '') ? Number(segments[start]) : null;
    const field = segments.slice(index === null ? 0 : start + 1).join('.');
    const where = [context, ...segments].join('.');
    return {
      object_slug: slug,
      field,
      message: `${parent} ${e.message ?? 'is invalid'}${e.keyword === 'type' ? `, shaped as ${sketch(schemaAt(schema, e.schemaPath))}` : ''}`,
      error_code: KEYWORD_CODES[e.keyword ?? ''] ?? 'INVALID_VALUE',
      record_index: index,
      meta_data: where,
    };
  });
}

/** Anything a route or Fastify threw, as the error envelope; never a stack trace or a driver's text. */
export function envelopeFor(err: unknown, request: FastifyRequest): ErrorEnvelope {
  if (err instanceof OqlError) return errorEnvelope(err);
  const e = err as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (Array.isArray(e.validation)) {
    const slug = (request.params as { slug?: unknown } | undefined)?.slug;
    const context = e.validationContext ?? 'body';
    const schema = (request.routeOptions?.schema as Record<string, Schema | undefined> | undefined)?.[context];
    return errorEnvelope(OqlError.validation('Invalid request', schemaEntries(e.validation, context, typeof slug === 'string' ? slug : '', schema)));
  }
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return plain('UNSUPPORTED_MEDIA_TYPE', 'request bodies must be JSON', 'send Content-Type: application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return plain('PAYLOAD_TOO_LARGE', 'the request body is larger than this server accepts', 'split the records over several requests');
    // The router's own errors, which Fastify answers in its own shape unless given `frameworkErrors`.
    case 'FST_ERR_BAD_URL':
      return badRequest(400, 'the request path is not valid percent-encoded UTF-8');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return badRequest(414, 'a path segment is longer than this server accepts');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return plain('MALFORMED_JSON', 'the request body is not valid JSON');
    default:
      break;
  }
  // secure-json-parse and JSON.parse throw SyntaxError: bad JSON, or a __proto__/constructor key.
  if (err instanceof SyntaxError || (e.statusCode === 400 && /JSON|prototype|constructor/i.test(String(e.message)))) {
    return plain('MALFORMED_JSON', 'the request body is not valid JSON, or holds a __proto__ or constructor key');
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return badRequest(e.statusCode, 'the request could not be read');
  }
  return errorEnvelope(err);
}

function badRequest(status: number, message: string): ErrorEnvelope {
  return { success: false, data: { message, status_code: status, error_code: 'BAD_REQUEST', validation_errors: null, meta_data: null } };
}

/**
 * Fastify's `frameworkErrors` option: a path that does not decode, or a parameter longer than
 * `maxParamLength`, is refused by the router before any hook or error handler runs.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const envelope = envelopeFor(err, request);
  void reply.code(envelope.data.status_code).type('application/json; charset=utf-8').send(envelope);
}

/**
 * Fastify's `clientErrorHandler` option: what Node's HTTP parser refuses (a request line or headers
 * over the size limit, a request that is not HTTP, one that arrives too slowly) never reaches
 * Fastify, so the envelope is written on the socket here.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset connection has no one to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'the request took too long to arrive']
    : err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'the request line or headers are larger than this server accepts']
    : [400, 'the request is not valid HTTP'];
  const body = JSON.stringify(badRequest(status, message));
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

/**
 * One error handler and one not-found handler for the whole instance, so every failure — from
 * the body parser, the schema validator, the auth hook or a route — leaves in the same envelope.
 */
export interface EnvelopeOptions {
  /** Where to look instead, for the 404 of a path no route has. Default: the OpenAPI document. */
  readonly notFoundHint?: (path: string) => string;
}

export function installEnvelope(app: FastifyInstance, options: EnvelopeOptions = {}): void {
  const notFoundHint = options.notFoundHint ?? (() => 'see /openapi.json for the endpoints');
  app.setErrorHandler((err, request, reply) => {
    const envelope = envelopeFor(err, request);
    if (envelope.data.status_code >= 500) {
      // The log names the failure, never its text: a driver message may hold a record's values.
      const code = (err as { code?: unknown }).code;
      request.log.error({ errorName: (err as Error)?.name, errorCode: typeof code === 'string' ? code : undefined, oqlCode: envelope.data.error_code }, 'request failed');
    }
    retryAfter(reply, err);
    void reply.code(envelope.data.status_code).type('application/json; charset=utf-8').send(envelope);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = METHODS.filter((m) => m !== request.method && request.server.findRoute({ method: m, url: path }) !== null);
    const envelope = allowed.length > 0
      ? plain('METHOD_NOT_ALLOWED', `${request.method} is not allowed here`, `use ${allowed.join(' or ')}`)
      : plain('ROUTE_NOT_FOUND', `no endpoint ${request.method} ${path.length > 200 ? `${path.slice(0, 200)}…` : path}`, notFoundHint(path));
    if (allowed.length > 0) void reply.header('allow', allowed.join(', '));
    void reply.code(envelope.data.status_code).type('application/json; charset=utf-8').send(envelope);
  });

  // A path written out as a route of its own for other methods (POST /api/v1/org/objects/list)
  // also matches a parametric route of this one (GET /api/v1/org/objects/:slug), which would
  // answer about an object 'list'. The path named for itself wins: 405, with the methods it takes.
  // The paths written out as routes, with their methods, gathered as routes are added: a Map
  // lookup per request of a parametric route, where asking the router costs a walk per method.
  const written = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    if (route.url.includes(':') || route.url.includes('*')) return;
    const methods = written.get(route.url) ?? new Set<string>();
    for (const m of [route.method].flat()) methods.add(m);
    written.set(route.url, methods);
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.routeOptions.url?.includes(':')) return done();
    const path = request.url.split('?')[0] ?? '/';
    const methods = written.get(path);
    const allowed = methods === undefined ? [] : METHODS.filter((m) => m !== request.method && methods.has(m));
    if (allowed.length === 0) return done();
    const envelope = plain('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${path.length > 200 ? `${path.slice(0, 200)}…` : path}`, `use ${allowed.join(' or ')}`);
    // Answered here: `done` is not called, so the route's handler never runs.
    void reply.header('allow', allowed.join(', ')).code(envelope.data.status_code).type('application/json; charset=utf-8').send(envelope);
  });
}

/** Sends an error envelope from a hook. */
export function sendError(reply: FastifyReply, err: OqlError): FastifyReply {
  const envelope = errorEnvelope(err);
  retryAfter(reply, err);
  return reply.code(envelope.data.status_code).type('application/json; charset=utf-8').send(envelope);
}

/** A refusal that passes with time (429, 503) says when to come back (RFC 9110 section 10.2.3). */
function retryAfter(reply: FastifyReply, err: unknown): void {
  const seconds = err instanceof OqlError ? err.retryAfterSeconds : undefined;
  if (seconds !== undefined) void reply.header('retry-after', String(seconds));
}
