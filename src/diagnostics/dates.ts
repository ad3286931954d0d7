import type { Fix } from './diagnostic.js';
import type { Span } from './span.js';

/**
 * Epoch forms of dates for hints and fixes. A hint must mean what the user wrote, in the zone
 * the user meant: the zone of the query's own `AT TIME ZONE`, else the `timeZone` option, else
 * UTC. A hint never invents a zone.
 */

const DAY = 86_400_000;
const DATE_TIME = /^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?(Z|[+-]\d{2}:?\d{2})?\s*$/;
const QUERY_ZONE = /AT\s+TIME\s+ZONE\s+'([^']+)'/i;

/** Whether `zone` is an IANA zone name this runtime knows. */
export function isZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The zone a hint speaks in: the query's first `AT TIME ZONE '...'`, else the option, else UTC. */
export function hintZone(source: string, option: string | undefined): string {
  const used = QUERY_ZONE.exec(source)?.[1];
  if (used !== undefined && isZone(used)) return used;
  return option !== undefined && isZone(option) ? option : 'UTC';
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at an instant, in milliseconds. */
function offsetAt(instant: number, zone: string): number {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formats.set(zone, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(instant)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return wall - Math.floor(instant / 1000) * 1000;
}

export interface ParsedDate {
  /** The instant the text names, read in `zone` when it carries no offset of its own. */
  readonly epoch: number;
  /** The text has no time of day: it names a whole calendar day. */
  readonly dateOnly: boolean;
  /** The instant the next calendar day starts (date-only texts). */
  readonly nextDay: number;
  /** The zone the text was read in ('UTC' when it carries an offset). */
  readonly zone: string;
}

/** Reads `2024-01-31`, `2024-01-31 10:00`, `2024-01-31T10:00:00Z` as epoch milliseconds. */
export function parseDateText(text: string, zone: string): ParsedDate | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s, frac, offset] = [m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]];
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0), Math.floor(Number(`0.${frac ?? '0'}`) * 1000)] as const;
  const wall = Date.UTC(...fields);
  const check = new Date(wall);
  if (check.getUTCMonth() !== fields[1] || check.getUTCDate() !== fields[2] || fields[3] > 23 || fields[4] > 59 || fields[5] > 59) return null;
  const dateOnly = h === undefined;
  if (offset !== undefined) {
    const sign = offset === 'Z' ? 0 : offset.startsWith('-') ? -1 : 1;
    const digits = offset.replace(/[^0-9]/g, '');
    const shift = sign * (Number(digits.slice(0, 2)) * 3_600_000 + Number(digits.slice(2, 4)) * 60_000);
    return { epoch: wall - shift, dateOnly, nextDay: wall - shift + DAY, zone: 'UTC' };
  }
  const epoch = zonedWall(wall, zone);
  return { epoch, dateOnly, nextDay: zonedWall(Date.UTC(fields[0], fields[1], fields[2] + 1), zone), zone };
}

/** The instant a wall-clock time (given as if UTC) has in `zone`. */
function zonedWall(wall: number, zone: string): number {
  let instant = wall - offsetAt(wall, zone);
  // Near an offset change the first guess used the other side's offset: settle it once more.
  instant = wall - offsetAt(instant, zone);
  return instant;
}

/** `2024-01-01T00:00:00 in Asia/Kolkata`, the reading a hint states next to its number. */
export function describeInstant(p: ParsedDate): string {
  const local = new Date(p.epoch + offsetAt(p.epoch, p.zone)).toISOString().slice(0, 19);
  return `${local} in ${p.zone}`;
}

export type DateComparisonOp = '=' | '<>' | '!=' | '<' | '<=' | '>' | '>=' | 'between' | 'in';

export interface DateStringRepair {
  readonly hint: string;
  readonly fix: Fix;
}

/**
 * The epoch form of a comparison with a date string, keeping the user's operator and bounds:
 * `created_at < '2024-01-01'` becomes `created_at < <ms>`, a BETWEEN bound or IN item becomes
 * its instant, and `=` / `<>` with a whole day becomes the day's half-open range (equality with
 * the midnight instant would match almost nothing).
 *
 * `epochColumn`, when the compared side is a timestamp made of an epoch column
 * (`to_timestamp(created_at / 1000) AT TIME ZONE 'z'`), is that column's text: the fix then
 * compares the column itself, the settled form, since a timestamp compared with epoch
 * milliseconds would be the next error. The comparison must then be the whole of `whole`.
 */
export function repairDateString(
  source: string,
  literal: Span,
  value: string,
  column: Span | null,
  op: DateComparisonOp,
  whole: Span,
  zone: string,
  epochColumn?: string,
): DateStringRepair | null {
  const p = parseDateText(value, zone);
  if (!p) return null;
  const reading = describeInstant(p);
  if (epochColumn !== undefined && column) {
    if (!(p.dateOnly && (op === '=' || op === '<>' || op === '!='))) {
      const [first, second] = column.start < literal.start ? [column, literal] : [literal, column];
      const part = (s: Span): string => (s === column ? epochColumn : String(p.epoch));
      const text = `${source.slice(whole.start, first.start)}${part(first)}${source.slice(first.end, second.start)}${part(second)}${source.slice(second.end, whole.end)}`;
      return { hint: `compare ${epochColumn} itself with the epoch value (${reading}): write ${text}`, fix: { range: [whole.start, whole.end], text } };
    }
  }
  if (column && p.dateOnly && (op === '=' || op === '<>' || op === '!=')) {
    const col = epochColumn ?? source.slice(column.start, column.end);
    const text = op === '=' ? `(${col} >= ${p.epoch} AND ${col} < ${p.nextDay})` : `(${col} < ${p.epoch} OR ${col} >= ${p.nextDay})`;
    return {
      hint: `${value.trim()} is a whole day (from ${reading}); write ${text}`,
      fix: { range: [whole.start, whole.end], text },
    };
  }
  const replaced = `${source.slice(whole.start, literal.start)}${p.epoch}${source.slice(literal.end, whole.end)}`;
  const shown = whole.start === literal.start && whole.end === literal.end || replaced.length > 80 ? `${p.epoch} for ${source.slice(literal.start, literal.end)}` : replaced;
  return {
    hint: `compare with the epoch value (${reading}): write ${shown}`,
    fix: { range: [literal.start, literal.end], text: String(p.epoch) },
  };
}
