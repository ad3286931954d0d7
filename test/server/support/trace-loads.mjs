// Preloaded with --import: records every module URL the process resolves (ESM and, through the
// hooks, CommonJS required from ESM) into the file named by OQL_TRACE_FILE.
import { register } from 'node:module';

register('./trace-hooks.mjs', import.meta.url, { data: { file: process.env.OQL_TRACE_FILE } });
