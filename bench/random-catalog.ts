/**
 * Random catalogs for the unseen-texts benchmark: schemas nobody tuned the compiler for. Each
 * has 4 to 11 objects named from a pool of business nouns, a primary name column, scalar
 * columns of every logical type under realistic names (a few objects wide), to-one relations
 * that connect every object (some to itself, as a parent or a manager), and one-to-many
 * relations back along most of them. Deterministic for a seed. Written in either payload form by
 * synthetic-catalog.ts.
 *
 * Names are plain lower-case words that neither the query language nor PostgreSQL reserves, so
 * every generated text is also one libpg-query parses.
 */
import type { ScalarType, Shape, ShapeColumn } from './synthetic-catalog.js';

export type Random = () => number;

export const pick = <T>(random: Random, xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
export const between = (random: Random, lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));

/** A random subset of `n` distinct items, in random order. */
export function sample<T>(random: Random, xs: readonly T[], n: number): T[] {
  const copy = xs.slice();
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, Math.min(n, copy.length));
}

const OBJECTS = [
  'account', 'company', 'contact', 'person', 'lead', 'deal', 'opportunity', 'invoice', 'payment', 'subscription', 'product',
  'vendor', 'supplier', 'shipment', 'warehouse', 'ticket', 'incident', 'project', 'task', 'milestone', 'campaign', 'member',
  'employee', 'candidate', 'interview', 'property', 'listing', 'booking', 'reservation', 'patient', 'appointment', 'vehicle',
  'contract', 'quote', 'asset', 'site', 'course', 'student', 'donation', 'donor', 'event', 'venue', 'partner', 'store',
  'purchase', 'claim', 'policy', 'agent', 'territory', 'renewal', 'feedback', 'survey', 'release', 'repository', 'device',
];

const PRIMARY = ['name', 'title', 'label', 'code', 'subject', 'full_name', 'reference', 'display_name'];

/** Column names by logical type (none is an audit field: those are added on purpose, below). */
const NAMES: Record<ScalarType, readonly string[]> = {
  text: ['description', 'notes', 'city', 'country', 'street', 'postal_code', 'summary', 'department', 'external_ref', 'nickname', 'headline', 'sku', 'model', 'brand', 'job_title', 'timezone_name', 'memo', 'color', 'locale'],
  number: ['score', 'rating', 'weight_kg', 'distance_km', 'probability', 'discount_pct', 'margin', 'latitude', 'longitude', 'progress', 'health_score', 'nps'],
  integer: ['quantity', 'seats', 'headcount', 'employees', 'visits', 'attempts', 'units', 'capacity', 'floors', 'licenses', 'duration_minutes', 'age_years'],
  currency: ['amount', 'price', 'budget', 'cost', 'revenue', 'balance', 'fee', 'deposit', 'total_value', 'list_price', 'arr', 'mrr', 'amount_paid'],
  boolean: ['is_active', 'is_archived', 'has_contract', 'is_verified', 'is_billable', 'is_public', 'is_flagged', 'auto_renew', 'opted_in', 'is_vip'],
  date: ['due_on', 'start_on', 'end_on', 'birthday', 'renewal_on', 'signed_on', 'expires_on', 'launch_on', 'hired_on'],
  datetime: ['closed_at', 'opened_at', 'last_seen_at', 'resolved_at', 'shipped_at', 'paid_at', 'scheduled_at', 'contacted_at', 'approved_at'],
  enum: ['status', 'stage', 'priority', 'tier', 'segment', 'kind', 'channel', 'category', 'severity', 'lifecycle', 'region', 'plan', 'source', 'outcome'],
  multiselect: ['tags', 'labels', 'features', 'interests', 'skills', 'languages', 'regions_served', 'badges'],
  email: ['email', 'billing_email', 'contact_email', 'support_email'],
  phone: ['phone', 'mobile', 'fax_number'],
  url: ['website', 'profile_url', 'docs_url'],
  json: ['metadata', 'settings', 'extra', 'payload'],
};

/** Share of scalar columns per type, in tenths of a percent (sums to 1000). */
const TYPE_WEIGHTS: readonly [ScalarType, number][] = [
  ['text', 190], ['number', 80], ['integer', 80], ['currency', 100], ['boolean', 100], ['date', 70], ['datetime', 100],
  ['enum', 130], ['multiselect', 50], ['email', 40], ['phone', 20], ['url', 20], ['json', 20],
];

const OPTIONS = [
  'open', 'pending', 'closed', 'on_hold', 'cancelled', 'draft', 'active', 'inactive', 'won', 'lost', 'new', 'qualified', 'low',
  'medium', 'high', 'urgent', 'critical', 'gold', 'silver', 'bronze', 'enterprise', 'smb', 'emea', 'apac', 'amer', 'web', 'email',
  'phone', 'partner', 'referral', 'event', 'trial', 'paid', 'churned', 'blocked', 'review', 'approved', 'rejected',
];

const ROLES = ['primary', 'billing', 'assigned', 'source', 'owning', 'last', 'default', 'origin'];
const SELF = ['parent', 'manager', 'reports_to', 'duplicate_of', 'replaced_by'];

function scalarType(random: Random): ScalarType {
  let x = random() * 1000;
  for (const [t, w] of TYPE_WEIGHTS) if ((x -= w) < 0) return t;
  return 'text';
}

function plural(slug: string): string {
  if (/(s|x|ch|sh)$/.test(slug)) return `${slug}es`;
  if (/[^aeiou]y$/.test(slug)) return `${slug.slice(0, -1)}ies`;
  return `${slug}s`;
}

/** A column slug not yet taken on the object: the name, else the name with a number. */
function free(taken: Set<string>, name: string): string {
  let slug = name;
  for (let i = 2; taken.has(slug); i++) slug = `${name}_${i}`;
  taken.add(slug);
  return slug;
}

export interface RandomCatalogOptions {
  readonly minObjects?: number;
  readonly maxObjects?: number;
}

export function randomShapes(random: Random, options: RandomCatalogOptions = {}): Shape[] {
  const count = between(random, options.minObjects ?? 4, options.maxObjects ?? 11);
  const slugs = sample(random, OBJECTS, count);
  const columns = new Map<string, ShapeColumn[]>(slugs.map((s) => [s, []]));
  const taken = new Map<string, Set<string>>(slugs.map((s) => [s, new Set(['id'])]));
  const add = (object: string, name: string, make: (slug: string) => ShapeColumn): string => {
    const slug = free(taken.get(object)!, name);
    columns.get(object)!.push(make(slug));
    return slug;
  };

  for (const s of slugs) add(s, pick(random, PRIMARY), (slug) => ({ slug, kind: 'primary' }));
  // To-one relations: each object after the first points at an earlier one (so every object is
  // reachable), then a few more anywhere, some to itself; most get a one-to-many relation back.
  const refs: { from: string; to: string; via: string }[] = [];
  slugs.forEach((from, i) => {
    const targets = i > 0 ? [slugs[between(random, 0, i - 1)]!] : [];
    for (let k = between(random, 0, 3); k > 0; k--) targets.push(pick(random, slugs));
    for (const to of targets) {
      const name = to === from ? pick(random, SELF) : taken.get(from)!.has(to) || random() < 0.3 ? `${pick(random, ROLES)}_${to}` : to;
      refs.push({ from, to, via: add(from, name, (slug) => ({ slug, kind: 'ref', object: to })) });
    }
  });
  // Scalars: most objects have 6 to 24, one in four is wide (30 to 70).
  for (const s of slugs) {
    const n = random() < 0.25 ? between(random, 30, 70) : between(random, 6, 24);
    for (let c = 0; c < n; c++) {
      const type = scalarType(random);
      const options = type === 'enum' || type === 'multiselect' ? sample(random, OPTIONS, between(random, 3, 9)) : undefined;
      add(s, pick(random, NAMES[type]), (slug) => (options ? { slug, kind: 'scalar', type, options } : { slug, kind: 'scalar', type }));
    }
    // Audit timestamps as many real schemas declare them (the service adds what is missing).
    if (random() < 0.6) add(s, 'created_at', (slug) => ({ slug, kind: 'scalar', type: 'datetime' }));
    if (random() < 0.4) add(s, 'updated_at', (slug) => ({ slug, kind: 'scalar', type: 'datetime' }));
  }
  for (const r of refs) {
    if (random() < 0.25) continue;
    const name = taken.get(r.to)!.has(plural(r.from)) || r.from === r.to ? `${r.via}_${plural(r.from)}` : plural(r.from);
    add(r.to, name, (slug) => ({ slug, kind: 'virtual', object: r.from, via: r.via }));
  }
  // Columns in a shuffled order, as schemas grow; the primary stays first.
  return slugs.map((slug) => {
    const [primary, ...rest] = columns.get(slug)!;
    return { slug, columns: [primary!, ...sample(random, rest, rest.length)] };
  });
}
