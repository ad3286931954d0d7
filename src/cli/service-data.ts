import type { ServerOptions } from '../service/config.js';
import { UsageError } from './io.js';
import { loadSchema, type SchemaFlags } from './schema.js';

/** The values of SERVICE_DATA_OPTIONS (args.ts) after parsing. */
export interface ServiceDataFlags extends SchemaFlags {
  readonly database?: string | undefined;
  readonly 'data-dir'?: string | undefined;
  readonly memory?: boolean | undefined;
  readonly demo?: boolean | undefined;
  readonly 'search-indexes'?: boolean | undefined;
}

export type ServiceData = Pick<ServerOptions, 'database' | 'dataDir' | 'memory' | 'catalog' | 'demo' | 'searchIndexes'>;

/**
 * Where the service's data is and what it serves, from the flags `serve` and `mcp` share: one
 * database (a PostgreSQL URL, an embedded directory, or memory), and the catalog of --schema.
 * The bundled example CRM is left to the server, which pairs it with its generated data.
 */
export async function serviceDataOf(values: ServiceDataFlags, command: string, cwd: string): Promise<ServiceData> {
  if (values.database !== undefined && (values['data-dir'] !== undefined || values.memory)) {
    throw new UsageError('--database cannot be combined with --data-dir or --memory', command);
  }
  if (values['data-dir'] !== undefined && values.memory) throw new UsageError('--data-dir and --memory exclude each other', command);
  const { catalog, isFixture } = await loadSchema(values, cwd);
  return {
    database: values.database,
    dataDir: values['data-dir'],
    memory: values.memory,
    ...(isFixture ? {} : { catalog }),
    demo: values.demo === true,
    searchIndexes: values['search-indexes'] === true,
  };
}
