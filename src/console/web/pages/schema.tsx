import { useEffect, useState } from 'preact/hooks';
import { DEFAULT_TYPE_CODES, Problems, draftsOf, type Draft, type DraftColumn } from '../../../catalog/payload.js';
import { api } from '../api.js';
import { ErrorBanner } from '../components.js';

/**
 * The objects the caller may read, from the public object list (POST /api/v1/org/objects/list),
 * read by the library's own payload reader: fields with their logical types, to-one relations and
 * virtual (one-to-many) ones. A click on a field puts its name into the query.
 */

export type SchemaObject = Draft;

export function useSchema(): { objects: readonly SchemaObject[] | null; error: Error | null } {
  const [objects, setObjects] = useState<readonly SchemaObject[] | null>(null);
  const [error, setError] = useState<Error | null>(null);
  useEffect(() => {
    api<unknown[]>('POST', '/api/v1/org/objects/list').then(
      (payload) => setObjects(draftsOf(payload, new Map(Object.entries(DEFAULT_TYPE_CODES)), new Problems())),
      (e: Error) => setError(e),
    );
  }, []);
  return { objects, error };
}

/** A query every catalog can run: the first object's (opportunity's, in the example CRM) primary field. */
export function sampleQuery(objects: readonly SchemaObject[], limit: number): { readonly query: string; readonly slug: string } | null {
  const o = objects.find((x) => x.slug === 'opportunity') ?? objects[0];
  if (!o) return null;
  const primary = o.columns.find((c) => c.isPrimary && c.slug !== 'id' && c.relation === null)?.slug;
  const query = primary === undefined ? `SELECT id FROM ${o.slug} ORDER BY id LIMIT ${limit}` : `SELECT id, ${primary} FROM ${o.slug} ORDER BY ${primary} LIMIT ${limit}`;
  return { query, slug: o.slug };
}

function typeLabel(c: DraftColumn): string {
  if (c.relation?.kind === 'to-one') return `\u2192 ${c.relation.object}`;
  if (c.relation?.kind === 'virtual') return `\u21c9 ${c.relation.object}.${c.relation.via}`;
  return c.type;
}

function typeTitle(c: DraftColumn): string {
  if (c.relation?.kind === 'to-one') return `to-one relation: the id of a ${c.relation.object} record; follow it with ${c.slug}.<field>`;
  if (c.relation?.kind === 'virtual') return `virtual (one-to-many) relation: the ${c.relation.object} records whose ${c.relation.via} is this record`;
  if (c.options) return `${c.type}: ${c.options.join(', ')}`;
  return c.type;
}

export function SchemaPanel({ objects, error, from, onInsert }: {
  objects: readonly SchemaObject[] | null;
  error: Error | null;
  from: string | null;
  onInsert: (text: string) => void;
}) {
  const [filter, setFilter] = useState('');
  // The object the query reads from opens by itself; nothing closes by itself while the query is typed.
  const [opened, setOpened] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => {
    if (from !== null && !opened.has(from)) setOpened(new Set([...opened, from]));
  }, [from, opened]);
  const toggle = (slug: string, open: boolean) => {
    if (open !== opened.has(slug)) setOpened(new Set(open ? [...opened, slug] : [...opened].filter((s) => s !== slug)));
  };
  const needle = filter.trim().toLowerCase();
  return (
    <aside class="schema card" aria-labelledby="schema-title">
      <h2 id="schema-title">Schema</h2>
      <label class="visually-hidden" for="schema-filter">Filter fields</label>
      <input id="schema-filter" type="search" placeholder="Filter fields" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      <ErrorBanner error={error} />
      {objects === null && !error && <p class="muted" role="status">Loading the schema…</p>}
      {objects?.map((o) => {
        const fields = o.columns.filter((c) => needle === '' || c.slug.toLowerCase().includes(needle) || o.slug.includes(needle));
        if (fields.length === 0) return null;
        return (
          <details key={o.slug} open={opened.has(o.slug) || needle !== ''}
            onToggle={(e) => needle === '' && toggle(o.slug, (e.currentTarget as HTMLDetailsElement).open)}>
            <summary><span class="object-name">{o.displayName}</span> <code>{o.slug}</code></summary>
            <ul class="fields-list">
              {fields.map((c) => (
                <li key={c.slug}>
                  <button type="button" class="field-button" title={`Insert ${c.slug}`} onClick={() => onInsert(c.slug)}>{c.slug}</button>
                  <span class={`type ${c.relation ? 'relation' : ''}`} title={typeTitle(c)}>{typeLabel(c)}</span>
                </li>
              ))}
            </ul>
          </details>
        );
      })}
    </aside>
  );
}
