import { defineOracles } from './oracles.js';

/**
 * The compiler against oracles that do not use it (oracles.ts): oracle 2, ternary-logic
 * partitioning, and oracle 3, count = rows.
 */
defineOracles('logic', ['oracle 2:', 'oracle 3:']);
