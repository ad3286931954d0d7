import Ajv2020 from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';

/**
 * Holds real answers to the OpenAPI document: the status must be one the operation documents,
 * the body must match that response's schema (Ajv, JSON Schema 2020-12, as OpenAPI 3.1 says),
 * and a Retry-After header must be one the response declares. The document is the one the
 * server serves; the check knows nothing of the code that answered.
 */

export interface OpenApiDocument {
  readonly paths: Record<string, Record<string, Operation>>;
  readonly components?: { readonly schemas?: Record<string, unknown>; readonly examples?: Record<string, { value: unknown }> };
  readonly [key: string]: unknown;
}

export interface Operation {
  readonly operationId?: string;
  readonly summary?: string;
  readonly tags?: string[];
  readonly security?: Record<string, string[]>[];
  readonly responses: Record<string, ResponseObject>;
  readonly [key: string]: unknown;
}

export interface ResponseObject {
  readonly description: string;
  readonly headers?: Record<string, unknown>;
  readonly content?: Record<string, { schema: unknown; example?: unknown; examples?: Record<string, { $ref?: string; value?: unknown }> }>;
}

const pointer = (...segments: string[]) => segments.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export class DocumentCheck {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  /** Every (operation, status) pair an answer was checked for. */
  readonly seen = new Set<string>();

  constructor(readonly document: OpenApiDocument) {
    // Formats by their RFC shapes, so that a date-time or uuid the service writes is held to them.
    this.ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
    this.ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
    this.ajv.addSchema(document as object, 'openapi.json');
  }

  operation(method: string, path: string): Operation {
    const op = this.document.paths[path]?.[method.toLowerCase()];
    if (!op) throw new Error(`the document has no operation ${method.toUpperCase()} ${path}`);
    return op;
  }

  /** The schema of one documented response, compiled once. */
  private validator(method: string, path: string, status: string): ValidateFunction {
    const key = `${method} ${path} ${status}`;
    let validate = this.validators.get(key);
    if (!validate) {
      const ref = `openapi.json#/${pointer('paths', path, method, 'responses', status, 'content', 'application/json', 'schema')}`;
      validate = this.ajv.getSchema(ref);
      if (!validate) throw new Error(`no schema at ${ref}`);
      this.validators.set(key, validate);
    }
    return validate;
  }

  /** Throws, saying what differs, unless the answer is one the document describes. */
  check(method: string, path: string, status: number, headers: Headers, body: unknown): void {
    const m = method.toLowerCase();
    const op = this.operation(m, path);
    const response = op.responses[String(status)];
    const where = `${method.toUpperCase()} ${path} answered ${status}`;
    if (!response) throw new Error(`${where}, which the document does not list (it lists ${Object.keys(op.responses).join(', ')})\n${JSON.stringify(body).slice(0, 500)}`);
    const type = headers.get('content-type') ?? '';
    // A stream of events: its type is checked here, its events by the test that reads them (`schemaMatches`).
    if (response.content?.['text/event-stream'] && type.startsWith('text/event-stream')) {
      this.seen.add(`${m} ${path} ${status}`);
      return;
    }
    // CSV, where the document offers it: its text is checked by the test that asked for it.
    if (response.content?.['text/csv'] && type.startsWith('text/csv')) {
      if (typeof body !== 'string') throw new Error(`${where} with CSV that is not text`);
      this.seen.add(`${m} ${path} ${status}`);
      return;
    }
    if (!response.content?.['application/json'] || !type.startsWith('application/json')) {
      throw new Error(`${where} with content type '${type}', documented: ${Object.keys(response.content ?? {}).join(', ') || 'none'}`);
    }
    if (headers.has('retry-after') && !Object.keys(response.headers ?? {}).some((h) => h.toLowerCase() === 'retry-after')) {
      throw new Error(`${where} with a Retry-After header that the document does not declare`);
    }
    const validate = this.validator(m, path, String(status));
    if (!validate(body)) {
      throw new Error(`${where} with a body outside its schema: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 800)}`);
    }
    this.seen.add(`${m} ${path} ${status}`);
  }

  /**
   * The documented path a request path is an instance of (a literal path before a templated
   * one), or undefined. A trailing slash is ignored, as the router ignores it.
   */
  templateOf(method: string, requestPath: string): string | undefined {
    const segments = requestPath.split('?')[0]!.replace(/(.)\/+$/, '$1').split('/');
    const fits = (template: string) => {
      const parts = template.split('/');
      return parts.length === segments.length && parts.every((p, i) => (/^\{.+\}$/.test(p) ? segments[i] !== '' : p === segments[i]));
    };
    return Object.keys(this.document.paths)
      .filter((p) => this.document.paths[p]![method.toLowerCase()] !== undefined)
      .sort((a, b) => a.split('{').length - b.split('{').length)
      .find(fits);
  }

  /** Checks a value against the response schema of an operation and status (for the document's own examples). */
  /** Null when `value` fits the document's schema `name` (of components.schemas), else what differs. */
  schemaMatches(name: string, value: unknown): string | null {
    const validate = this.ajv.getSchema(`openapi.json#/components/schemas/${name}`);
    if (!validate) throw new Error(`no schema ${name}`);
    return validate(value) ? null : this.ajv.errorsText(validate.errors);
  }

  matches(method: string, path: string, status: string, value: unknown): string | null {
    const validate = this.validator(method.toLowerCase(), path, status);
    return validate(value) ? null : this.ajv.errorsText(validate.errors);
  }
}

/** Every operation of the document as [method, path, operation]. */
export function operationsOf(document: OpenApiDocument): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => [method, path, op] as [string, string, Operation]));
}
