// The floor's bulk_create, shared by bench:server (workloads.mjs) and bench:fleet (fleet/floor.mjs,
// a plain Node process): plain JavaScript, importing nothing.

/**
 * One hand-made multi-row INSERT of the opportunities oql's bulk_create takes, a parameter per
 * value, no validation: the row the service writes, its search column too (the name in lower
 * case, which is what the service writes for the bench's plain names), so that PostgreSQL keeps
 * the same index entries. `idOf(i)`: the i-th row's id.
 */
export function floorInsert(org, records, idOf, now = Date.now()) {
  const params = [];
  const tuples = records.map((r, i) => {
    const values = [idOf(i), org, r.name.toLowerCase(), r.name, r.amount, r.stage, r.owner, r.account, now, now, 'u_bench', 'u_bench'];
    return `(${values.map((v) => (params.push(v), `$${params.length}`)).join(', ')})`;
  });
  return {
    sql: `INSERT INTO public.opportunity (id, org_id, search_field, name, amount, stage, owner, account, created_at, updated_at, created_by, updated_by) VALUES ${tuples.join(', ')}`,
    params,
  };
}
