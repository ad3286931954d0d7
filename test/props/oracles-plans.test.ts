import { defineOracles } from './oracles.js';

/**
 * The compiler against oracles that do not use it (oracles.ts): oracle 6, the semi-join plan
 * gives the rows of the fan-out plan; oracle 4, tenant isolation; oracle 5, pg-mem on its subset.
 */
defineOracles('plans', ['oracle 6:', 'oracle 4:', 'oracle 5:']);
