/** How the console writes times and values: as text, never as markup. */

const DATE_TIME = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });
const DATE_TIME_SECONDS = new Intl.DateTimeFormat(undefined, {
  year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', second: '2-digit',
});

export function dateTime(ms: number | null | undefined, seconds = false): string {
  if (ms === null || ms === undefined) return '';
  return (seconds ? DATE_TIME_SECONDS : DATE_TIME).format(new Date(ms));
}

const DAY = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
const TIME = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });

/** The day and the time of day apart, for a narrow column that shows them on two lines. */
export function dayAndTime(ms: number): { readonly day: string; readonly time: string } {
  const at = new Date(ms);
  return { day: DAY.format(at), time: TIME.format(at) };
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** "3 minutes ago", "in 2 days": for last use and expiry. */
export function relative(ms: number, now = Date.now()): string {
  const diff = ms - now;
  const abs = Math.abs(diff);
  const units: [Intl.RelativeTimeFormatUnit, number][] = [['day', 86_400_000], ['hour', 3_600_000], ['minute', 60_000]];
  const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  for (const [unit, size] of units) if (abs >= size) return rtf.format(Math.round(diff / size), unit);
  return diff < 0 ? 'just now' : 'in under a minute';
}

/** A record value as a table cell's text: strings as they are, null as null, anything else as JSON. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n.toLocaleString()} ${n === 1 ? word : many}`;
}

/** Copies text, falling back to a selected field where the Clipboard API is refused. */
export async function copyText(text: string, fallback?: HTMLInputElement | HTMLTextAreaElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (!fallback) return false;
    fallback.focus();
    fallback.select();
    return document.execCommand('copy');
  }
}
