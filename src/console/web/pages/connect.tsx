import type { Session } from '../api.js';
import { CopyButton } from '../components.js';
import { sampleQuery, useSchema } from './schema.js';

/** Single quotes for a POSIX shell. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function Snippet({ title, text, note }: { title: string; text: string; note?: string }) {
  const id = `snippet-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <div class="snippet">
      <div class="snippet-head">
        <h3 id={id}>{title}</h3>
        <CopyButton text={text} />
      </div>
      {note && <p class="muted small">{note}</p>}
      <pre aria-labelledby={id} tabIndex={0}><code>{text}</code></pre>
    </div>
  );
}

/** The hosted MCP URL of each workspace of the organization, and configurations to paste into clients. */
export function ConnectPage({ session }: { session: Session }) {
  const { objects } = useSchema();
  const sample = objects && sampleQuery(objects, 5);
  const curl = sample && `curl -s -X POST ${session.base_url}/api/v1/reports/execute \\
  -H "Authorization: Bearer $OQL_API_KEY" \\
  -H 'Content-Type: application/json' \\
  -d ${shellQuote(JSON.stringify(sample))}`;
  return (
    <section aria-labelledby="connect-title">
      <div class="page-head">
        <h1 id="connect-title">Connect an agent</h1>
        <p class="muted">Agents reach your CRM data through the workspace's hosted MCP server. A client that speaks MCP with OAuth needs only the URL: it opens a consent page where you approve it with an API key.</p>
      </div>
      {session.workspaces.length === 0 && (
        <div class="card">
          <h2>No workspace yet</h2>
          <p>A workspace names your organization in MCP and OAuth URLs. Create one on the server:</p>
          <pre tabIndex={0}><code>{`oql workspaces create --subdomain acme --org ${session.org_id}`}</code></pre>
          <p class="muted small">or start the service with <code>{`OQL_WORKSPACES=acme=${session.org_id}`}</code>.</p>
        </div>
      )}
      {session.workspaces.map((w) => {
        const name = `crm-${w.subdomain}`;
        if (w.mcp_url === null) {
          return (
            <div class="card" key={w.subdomain}>
              <h2>Workspace <code>{w.subdomain}</code></h2>
              <p>This server runs the API alone and does not know the public URL of the MCP host. Start it with <code>--mcp-url</code> to show the workspace's MCP URL here.</p>
            </div>
          );
        }
        const url = w.mcp_url;
        return (
          <div class="card" key={w.subdomain}>
            <h2>Workspace <code>{w.subdomain}</code></h2>
            <div class="secret-row">
              <label for={`mcp-${w.subdomain}`}>MCP URL</label>
              <input id={`mcp-${w.subdomain}`} class="secret" type="text" readOnly value={url} onFocus={(e) => e.currentTarget.select()} />
              <CopyButton text={url} label="Copy URL" />
            </div>
            <div class="snippets">
              <Snippet title="MCP client configuration (JSON)" note="For clients that read an mcpServers file and sign in with OAuth."
                text={JSON.stringify({ mcpServers: { [name]: { type: 'http', url } } }, null, 2)} />
              <Snippet title="Claude Code" text={`claude mcp add --transport http ${name} ${url}`} />
              <Snippet title="Claude Desktop" note="claude_desktop_config.json, through the mcp-remote bridge (it runs the OAuth sign-in in your browser)."
                text={JSON.stringify({ mcpServers: { [name]: { command: 'npx', args: ['-y', 'mcp-remote', url] } } }, null, 2)} />
            </div>
          </div>
        );
      })}
      <div class="card">
        <h2>REST API</h2>
        <p class="muted">Scripts call the API with an API key from the API keys page. The OpenAPI document is at <a href="/openapi.json">/openapi.json</a>.</p>
        {curl && <Snippet title="curl" note="With the key in the OQL_API_KEY variable of your shell." text={curl} />}
      </div>
    </section>
  );
}
