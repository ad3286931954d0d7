import { identFrom } from './leaves.js';
import { lex } from './lex.js';
import * as T from './tokens.js';

/**
 * The object a query's top-level FROM names, read from its tokens alone, so that a query with
 * mistakes elsewhere still says which object it is about; undefined when it names none. Tools that
 * take a query without a slug (oql lint, oql run, report files) use it as the request's slug: the
 * compiler then checks the query against that object as it would any request.
 */
export function fromSlug(text: string): string | undefined {
  const { tokens } = lex(text);
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const type = tokens[i]!.tokenType;
    if (type === T.LParen) depth++;
    else if (type === T.RParen) depth--;
    else if (type === T.From && depth === 0) {
      const next = tokens[i + 1];
      return next !== undefined && (next.tokenType === T.Identifier || next.tokenType === T.QuotedIdentifier) ? identFrom(next).name : undefined;
    }
  }
  return undefined;
}
