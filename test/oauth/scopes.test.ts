import { describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../../src/mcp/tools.js';
import { covers, missingScopes, requestedScopes, SCOPES, storedScopes, TOOL_SCOPES } from '../../src/oauth/scopes.js';
import { READ_RECORDS_SCOPE } from '../../src/service/policy.js';

/** The scope rules on their own; the endpoints' use of them is tested in revision.test.ts and test/mcp/oauth.test.ts. */

describe('scopes', () => {
  it('names the scope of every MCP tool', () => {
    expect(Object.keys(TOOL_SCOPES).sort()).toEqual([...TOOL_NAMES].sort());
    // Tools that read records need records:read; the rest only the schema.
    expect(Object.entries(TOOL_SCOPES).filter(([, s]) => s === 'records:read').map(([t]) => t).sort()).toEqual(['count_query', 'execute_query', 'filter_records', 'list_changes']);
  });

  it("asks for the tool-log listing the scope execute_query needs, which no other scope implies", () => {
    expect(READ_RECORDS_SCOPE).toBe(TOOL_SCOPES['execute_query']);
    for (const s of SCOPES) if (s !== READ_RECORDS_SCOPE) expect(covers([s], READ_RECORDS_SCOPE)).toBe(false);
  });

  it('reads the scope parameter: absent or empty is every scope, unknown words are refused', () => {
    expect(requestedScopes(undefined)).toEqual({ ok: true, scopes: ['schema:read', 'records:read'] });
    expect(requestedScopes('  ')).toEqual({ ok: true, scopes: ['schema:read', 'records:read'] });
    expect(requestedScopes('records:read schema:read records:read')).toEqual({ ok: true, scopes: ['schema:read', 'records:read'] });
    expect(requestedScopes('records:read')).toEqual({ ok: true, scopes: ['records:read'] });
    const bad = requestedScopes('records:read openid');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.description).toContain("'openid'");
  });

  it('treats a grant from before scopes as every scope, and records:read as covering schema:read', () => {
    expect(storedScopes(null)).toEqual(['schema:read', 'records:read']);
    expect(storedScopes('schema:read')).toEqual(['schema:read']);
    expect(covers(['records:read'], 'schema:read')).toBe(true);
    expect(covers(['schema:read'], 'records:read')).toBe(false);
  });

  it('lists every missing scope of a request at once, batches included', () => {
    const call = (name: string) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } });
    expect(missingScopes(['schema:read'], call('describe_object'))).toEqual([]);
    expect(missingScopes(['schema:read'], call('execute_query'))).toEqual(['records:read']);
    expect(missingScopes(['schema:read'], [call('list_objects'), call('filter_records')])).toEqual(['records:read']);
    expect(missingScopes([], { jsonrpc: '2.0', id: 1, method: 'tools/list' })).toEqual(['schema:read']);
    expect(missingScopes([], call('count_query'))).toEqual(['schema:read', 'records:read']);
    expect(missingScopes(['records:read'], call('no_such_tool'))).toEqual([]);
  });
});
