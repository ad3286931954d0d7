export * from './ast.js';
export { parse, parseInto, getParser, getLexer, DEFAULT_SYNTAX_LIMITS, type SyntaxLimits } from './parse.js';
export { KEYWORDS } from './tokens.js';
export { printQuery, printExpr } from './print.js';
