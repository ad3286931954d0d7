'use strict';
// The Chevrotain grammar (grammar.ts) when the compiler runs from its sources (tests, tsx):
// bundled here on first use, as the build bundles it into dist/grammar.cjs. parse.ts loads the
// grammar with `require`, and Chevrotain is published as ES modules only, which `require`
// cannot read on Node 20. Never part of the package: the build points parse.ts at grammar.cjs.
const { buildSync } = require('esbuild');
const { join } = require('node:path');

const entry = join(__dirname, 'grammar.ts');
const [bundle] = buildSync({ entryPoints: [entry], bundle: true, format: 'cjs', platform: 'node', target: 'node20', write: false, sourcemap: 'inline' }).outputFiles;
const grammar = new module.constructor(entry, module);
grammar.filename = entry;
grammar.paths = module.paths;
grammar._compile(bundle.text, entry);
module.exports = grammar.exports;
