import { defineOracles } from './oracles.js';

/**
 * The compiler against oracles that do not use it (oracles.ts): oracle 1, PostgreSQL rows = the
 * reference evaluator's rows, and the compiler bugs the oracles found.
 */
defineOracles('rows', ['oracle 1:', 'compiler bugs']);
