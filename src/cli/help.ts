/** Usage texts; each command's --help prints its own. */
export const COMMANDS = ['compile', 'lint', 'explain', 'run', 'ddl', 'demo', 'serve', 'keys', 'mcp'] as const;
export type Command = (typeof COMMANDS)[number];

const SCHEMA_FLAGS = `  --schema <file>       catalog: the service's object list (objects-list.json) or the
                        compact form, JSON; default: the bundled example CRM
  --type-codes <file>   column_data_type code → type map for --schema (JSON)`;

export const USAGE: Record<Command | 'main', string> = {
  main: `oql: compiles the CRM object query language to parameterized PostgreSQL

Usage: oql <command> [options]

Commands:
  compile "<query>" [--slug <s>] print the SQL and parameters a query compiles to
  lint <files or dirs...>        check saved reports (.sql, .oql, .json); exit 1 on errors
  explain <CODE>                 what a diagnostic code means, with a wrong and a right query
  run "<query>" [--slug <s>]     run a query on the embedded example CRM or a database
  ddl                            print the CREATE TABLE statements of a catalog
  demo                           load the example CRM and run a handful of real reports
  serve                          run the CRM data service over HTTP (REST endpoints, OpenAPI)
  keys create|list|revoke        the service's API keys
  mcp --stdio                    serve the MCP tools over stdio (key from OQL_API_KEY)
  workspaces create|list         map workspace subdomains to organizations (MCP and OAuth URLs)

Options:
  -h, --help      show help (also: oql <command> --help)
  -v, --version   show the version

Exit codes: 0 success, 1 query errors or failure, 2 usage error.
`,
  compile: `Usage: oql compile "<query>" [--slug <object>] [options]
       oql compile - [--slug <object>] [options]     (the query from standard input)

Prints the PostgreSQL a query compiles to, and its bind parameters.

Options:
  --slug <s>            the request slug (default: the object the query's top-level FROM names)
${SCHEMA_FLAGS}
  --org <id>            tenant id bound as $1 (default org_acme)
  --now <iso>           pin NOW() to an instant (ISO 8601 or epoch ms)
  --fanout exact        count each record once per group across one-to-many relations
                        (default service: the fan-out multiplies SUM and COUNT)
  --json                print {sql, params, columns} as JSON
  -h, --help            show this help

Example:
  oql compile "SELECT name, owner.manager.name AS manager FROM opportunity LIMIT 10"
`,
  lint: `Usage: oql lint <files or directories...> [options]

Checks saved reports without running them. A report file is
  .sql / .oql   one query; its slug from a header comment ('-- slug: opportunity'), else
                --slug, else the object its FROM names
  .json         the body of a report request, {"query": "...", "slug": "opportunity"}
                (slug optional), or an array of {"name", "slug", "query"} entries
Directories are walked for those extensions.

Options:
  --slug <s>            slug for files and entries that do not name one
${SCHEMA_FLAGS}
  --format <f>          stylish (default), json, or sarif (SARIF 2.1.0, for code scanning)
  --time-zone <zone>    zone of date fixes when a query names none (default UTC)
  --fanout exact        count each record once per group across one-to-many relations
                        (default service: the fan-out multiplies SUM and COUNT)
  --fix                 apply the safe fixes to the files (aliases, LIMIT 100, owner for
                        owner.id, the second AT TIME ZONE, date strings as epoch ms with the
                        same operator, option case); everything else is kept byte for byte
  --fix-dry-run         print the fixes as a unified diff instead of writing them
  --max-warnings <n>    exit 1 when there are more than n warnings
  --quiet               report errors only
  --rule <CODE:level>   set a code to off, warn or error (repeatable)
  --stdin               lint standard input (with --stdin-filename <name> for its path
                        and type: a name ending in .json reads a JSON report)
  -h, --help            show this help

Settings come from the nearest oql.config.json, or the "oql" key of the nearest package.json,
walking up from the working directory: {"schema", "typeCodes", "timeZone", "rules", "maxLimit",
"slug", "fanout"} (paths relative to the file). Flags win over the file.

Exit codes: 0 no errors (warnings allowed), 1 errors found, 2 usage error, unreadable\nfile or catalog.
`,
  explain: `Usage: oql explain <CODE>
       oql explain --markdown      (every page, as docs/diagnostics.md)

Prints what a diagnostic code means, and for codes about the query text a wrong query and its
right form. docs/diagnostics.md has every page.

Example:
  oql explain FANOUT_AGGREGATE
`,
  run: `Usage: oql run "<query>" [--slug <object>] [options]

Runs a query and prints its rows as a table. Without --database it runs on an embedded
PostgreSQL (PGlite) loaded with the example CRM and its demo data (the tenants org_acme,
org_globex and org_initech).

Options:
  --slug <s>            the request slug (default: the object the query's FROM names)
  --database <url>      a PostgreSQL server, postgres://user:password@host:5432/db
${SCHEMA_FLAGS}
  --org <id>            tenant to run as (default org_acme, the example's first tenant)
  --now <iso>           pin NOW() to an instant (ISO 8601 or epoch ms)
  --fanout exact        count each record once per group across one-to-many relations
                        (default service: the fan-out multiplies SUM and COUNT)
  --timeout <ms>        statement timeout in milliseconds (default 20000)
  --count               print the number of rows the query produces, up to its LIMIT, instead
  --json                print {records, message?, elapsedMs} (or {count, elapsedMs}) as JSON
  --format <f>          table (default), json (as --json) or csv: the rows as RFC 4180 CSV
                        with a header row, formulas neutralised (docs/rest.md#csv)
  -h, --help            show this help
`,
  ddl: `Usage: oql ddl [options]

Prints the CREATE TABLE (and index) statements of a database matching the catalog.

Options:
${SCHEMA_FLAGS}
  --if-not-exists       add IF NOT EXISTS to every statement
  -h, --help            show this help
`,
  serve: `Usage: oql serve [options]

Runs the CRM data service: records, filter, analytics, connectors and tool logs over HTTP, every
answer in the service's envelope, the OpenAPI document at /openapi.json. Without --database it
runs on embedded PostgreSQL (PGlite); on an embedded database without any API key it creates a
superadmin key for org_demo and prints it once. SIGTERM or Ctrl-C finish the requests in flight
and stop.

Options:
  --port <n>            port to listen on (default 8080; 0 picks a free one)
  --mcp-port <n>        port of the MCP host (default 8081; a free one with --port 0)
  --base-url <url>      public URL of the main host, for OAuth metadata (default: its address)
  --mcp-url <url>       public URL of the MCP host; endpoints are <url>/<workspace>/mcp
  --only api|mcp        run one host alone (both by default); --only mcp needs --base-url
  --host <h>            address to listen on (default 127.0.0.1)
  --database <url>      a PostgreSQL server, postgres://user:password@host:5432/db
  --data-dir <dir>      where the embedded database keeps its files (default ./.oql-data)
  --memory              embedded database in memory: nothing is kept
  --read-database <url> reports and filters read here: a read role on the primary, or a
                        streaming replica (with --database; see docs/fleet.md)
  --webhook-allow-private  webhooks may go to http URLs and loopback and private addresses
                        (development and tests only; never link-local)
  --trust-proxy <list>  proxies that may name the client's address (X-Forwarded-For): a hop
                        count, or addresses and CIDR ranges, e.g. 10.0.0.0/8 (default: none)
${SCHEMA_FLAGS}
  --demo                load generated demo data for org_demo when the tables are empty
  --search-indexes      trigram indexes for contains and global_search (needs pg_trgm)
  -h, --help            show this help

Environment:
  OQL_WEBHOOK_ALLOW_PRIVATE the same as --webhook-allow-private (1)
  OQL_TRUST_PROXY       the same as --trust-proxy
  OQL_API_KEYS          keys to create at start: key=org:role[:user],… (role member, admin, superadmin)
  OQL_TOKEN_SECRET      signs pagination tokens (default: generated once, kept in the database)
  OQL_BODY_LIMIT        largest request body in bytes (default 5242880)
  OQL_MAX_BULK_RECORDS  most records per bulk_create or bulk_upsert (default 1000)
  OQL_LOG_LEVEL         request log level (default info; one JSON line per request on stdout)
  OQL_ROLE_ACCESS       objects a role may read: member=account,contact;admin=… (default: all)
  OQL_MAX_CONCURRENT_REPORTS
                        reports, filter and connector pages one user may run at once, across
                        its keys, clients and instances; 429 beyond (default 2)
  OQL_MAX_CONCURRENT_REQUESTS
                        record requests one user may run at once; 429 beyond (default 8)
  OQL_QUERY_TIMEOUT_MS  budget of every statement, 504 beyond (default 20000 on PostgreSQL,
                        5000 embedded, where a runaway statement restarts the database process)
  OQL_MAX_RESPONSE_BYTES
                        bytes of rows one response may carry, RESPONSE_TOO_LARGE beyond
                        (default 16777216)
  OQL_MAX_QUERY_COST    planner cost above which a report or filter is refused unrun,
                        QUERY_TOO_COSTLY (default 50000000; 0 turns the check off)
  OQL_MAX_COMPILE_MS    milliseconds the checks of one query text may hold the thread,
                        COMPILE_BUDGET_EXCEEDED beyond (default 1000)
  OQL_MCP_MAX_ROWS, OQL_MCP_MAX_BYTES
                        rows and bytes of one MCP tool result, cut beyond and said so
                        (default 200 and 262144)
  OQL_MAX_HEAP_RATIO    share of the heap in use above which new work gets 503 (default 0.85)
  OQL_MAX_CONNECTIONS_PER_ADDRESS
                        open connections one client address may hold per host (default 256)
  OQL_API_KEY_CACHE_MS  how long a verified API key is trusted without a lookup (default 5000; 0: never)
  OQL_MAX_KEYS_PER_USER, OQL_MAX_KEYS_PER_ORG
                        live API keys one user, one organization may hold; TOO_MANY_KEYS
                        beyond (default 100 and 1000)
  OQL_MAX_CONSOLE_SESSIONS_PER_KEY
                        live console sessions of one key; a sign-in past it ends the oldest (default 20)
  OQL_MAX_CONSOLE_SIGN_INS_PER_MINUTE
                        console sign-ins with one key per minute; 429 beyond (default 30)
  OQL_MAX_TOOL_LOG_ENTRY_BYTES, OQL_MAX_TOOL_LOG_PAGE_BYTES
                        bytes of one tool-log entry's arguments (cut beyond, marked truncated)
                        and of one listing page's (default 65536 and 4194304)
  OQL_PURGE_AFTER_DAYS  deleted records are purged for good this many days later (default 30)
  OQL_CHANGES_RETENTION_DAYS
                        days the change log keeps a change; older cursors get 410 (default 7)
  OQL_MAX_WAITING_PER_USER, OQL_MAX_WAITING_PER_ORG
                        long-polls and change streams open at once per user and per organization
                        on each instance; 429 TOO_MANY_WAITING beyond (default 10 and 200)
  OQL_STREAM_MAX_SECONDS, OQL_STREAM_HEARTBEAT_SECONDS
                        a change stream's length and its heartbeat (default 300 and 15)
  OQL_MAX_WEBHOOKS_PER_ORG
                        webhook endpoints one organization may have (default 50)
  OQL_WEBHOOK_SLOTS_PER_ORG
                        webhook deliveries one organization may have in flight per instance (default 4)
  OQL_WEBHOOK_TIMEOUT_MS
                        a webhook receiver's time to answer (default 10000)
  OQL_WEBHOOK_RETRY_SCALE
                        multiplies the webhook retry schedule, 0 to 1 (default 1)

Example:
  oql serve --demo
`,
  keys: `Usage: oql keys create --org <org> --role <role> [options]
       oql keys list [--org <org>] [--revoked] [--json] [options]
       oql keys revoke <key id> [options]

create prints a new API key once (it is stored only as a SHA-256 hash) and its id on stderr;
list shows the keys' ids, names, organizations, users and roles, never the keys; revoke stops a key
and the OAuth tokens approved with it.

An embedded directory has one user at a time: while oql serve runs on it, these commands ask that
server (on its admin host, 127.0.0.1 only, with the secret it wrote into the directory), so a new
key works and a revoked one fails on its next request. With --database, servers sharing the
database refuse a revoked key within their key cache time (OQL_API_KEY_CACHE_MS, 5 s by default).

Options:
  --org <id>            the organization the key reads and writes (list: only its keys)
  --role <r>            member, admin or superadmin (tool logs need superadmin)
  --user <id>           the user the key acts as (created_by, updated_by); default one per key
  --name <text>         create: what the key is for, as the console and list show it (1 to 100
                        characters); default "CLI <role> key"
  --new-org             create: the organization is new (without it, an organization that has no
                        data, workspace or key yet is refused, as a misspelling would be)
  --revoked             list: include revoked keys
  --json                list: print the keys as JSON
  --database <url>      a PostgreSQL server
  --data-dir <dir>      the embedded database's directory (default ./.oql-data)
  -h, --help            show this help

Example:
  oql keys create --org org_demo --role member
`,
  mcp: `Usage: oql mcp --stdio [options]

Serves the MCP tools (list_objects, describe_object, execute_query, count_query, lint_query,
filter_records) over stdin and stdout, for an agent that starts oql as a child process. Every call
runs as the organization, user and role of the API key in OQL_API_KEY and is written to the tool
log. stdout carries the protocol only; messages go to stderr. Stops when stdin closes.

Options:
  --stdio               serve over stdin and stdout (required)
  --database <url>      a PostgreSQL server, postgres://user:password@host:5432/db
  --data-dir <dir>      the embedded database's directory (default ./.oql-data; not while
                        another process holds it: an embedded database has one user at a time)
  --memory              embedded database in memory (use with --demo and OQL_API_KEYS)
${SCHEMA_FLAGS}
  --demo                load generated demo data for org_demo when the tables are empty
  --search-indexes      trigram indexes for contains and global_search (needs pg_trgm)
  -h, --help            show this help

Environment:
  OQL_API_KEY           the API key the agent acts with (required)
  OQL_API_KEYS          keys to create at start: key=org:role[:user],…

Example (an MCP client's configuration):
  {"mcpServers": {"crm": {"command": "npx", "args": ["oql", "mcp", "--stdio", "--data-dir", "/srv/oql"],
                          "env": {"OQL_API_KEY": "oql_…"}}}}
`,
  demo: `Usage: oql demo

Loads the example CRM into an embedded PostgreSQL (PGlite) and runs a handful of real reports,
printing for each its query, the SQL it compiles to and the rows; the last one is a broken query
with the diagnostic oql gives for it.
`,
};
