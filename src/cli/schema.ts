import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { loadCatalogText } from '../catalog/load.js';
import type { Catalog } from '../catalog/types.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import { FIXTURE_DATA_OPTIONS, loadFixtureCatalog } from '../demo/index.js';
import { UsageError } from './io.js';

/** The tenant the CLI runs as when --org is not given: the example CRM's first tenant. */
export const DEFAULT_ORG = FIXTURE_DATA_OPTIONS.crm.tenants[0]!;

export interface SchemaFlags {
  readonly schema?: string | undefined;
  readonly 'type-codes'?: string | undefined;
}

export interface LoadedSchema {
  readonly catalog: Catalog;
  /** True for the bundled example CRM, whose generated data the embedded database can hold. */
  readonly isFixture: boolean;
}

export async function readTextFile(cwd: string, path: string, what: string): Promise<string> {
  try {
    return await readFile(resolve(cwd, path), 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code ?? (e as Error).message;
    throw new UsageError(`cannot read ${what} '${path}': ${why}`);
  }
}

/** --schema (service payload or compact form, JSON) with --type-codes, or the example CRM. */
export async function loadSchema(flags: SchemaFlags, cwd: string): Promise<LoadedSchema> {
  if (flags.schema === undefined) {
    if (flags['type-codes'] !== undefined) throw new UsageError('--type-codes needs --schema (the example CRM has its own)');
    return { catalog: loadFixtureCatalog('crm'), isFixture: true };
  }
  const text = await readTextFile(cwd, flags.schema, 'schema file');
  let typeCodes: Record<string, string> | undefined;
  if (flags['type-codes'] !== undefined) {
    const codesText = await readTextFile(cwd, flags['type-codes'], 'type-codes file');
    try {
      typeCodes = JSON.parse(codesText) as Record<string, string>;
    } catch (e) {
      throw OqlError.plain('INVALID_OPTIONS', `type-codes file '${flags['type-codes']}' is not valid JSON: ${(e as Error).message}`);
    }
  }
  return { catalog: loadCatalogText(text, typeCodes === undefined ? {} : { typeCodes }), isFixture: false };
}
