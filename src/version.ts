// esbuild inlines the JSON into the bundle, so the CLI reads no files at start-up.
import pkg from '../package.json' with { type: 'json' };

export const VERSION: string = pkg.version;
