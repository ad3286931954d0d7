import { OqlError } from '../diagnostics/diagnostic.js';

/** What the validator uses of libphonenumber-js. */
export interface PhoneLibrary {
  parsePhoneNumberFromString(text: string, options?: { defaultCallingCode?: string }): PhoneNumberLike | undefined;
}
interface PhoneNumberLike {
  readonly countryCallingCode: string;
  readonly nationalNumber: string;
  readonly number: string;
  isValid(): boolean;
}

let loading: Promise<PhoneLibrary> | undefined;

/**
 * libphonenumber-js, imported on the first phone value to check: `import 'oql'` never loads its
 * metadata (about 150 kB), and it is an optional peer dependency, needed only by callers who
 * write phone columns.
 */
export function phoneLibrary(): Promise<PhoneLibrary> {
  loading ??= import('libphonenumber-js/max').then(
    (m) => m as unknown as PhoneLibrary,
    (e: unknown) => {
      loading = undefined;
      const err = OqlError.plain(
        'MISSING_DEPENDENCY',
        'phone columns are validated with the package libphonenumber-js, which is not installed',
        'npm install libphonenumber-js',
      );
      Object.defineProperty(err, 'cause', { value: e, enumerable: false });
      throw err;
    },
  );
  return loading;
}

export interface PhoneRules {
  /** Calling code without '+', e.g. '91'; numbers without one are read in it, others refused. */
  readonly callingCode: string | null;
  /** Exact number of digits of the national number. */
  readonly length: number | null;
}

export function phoneRules(properties: Readonly<Record<string, unknown>> | null): PhoneRules {
  const p = properties?.phone_number;
  if (typeof p !== 'object' || p === null) return { callingCode: null, length: null };
  const { country_code: code, restricted_length: length } = p as Record<string, unknown>;
  const digits = typeof code === 'string' ? code.replace(/\D/g, '') : typeof code === 'number' ? String(code) : '';
  const n = typeof length === 'number' ? length : typeof length === 'string' ? Number(length) : NaN;
  return { callingCode: digits || null, length: Number.isInteger(n) && n > 0 ? n : null };
}

/** The number in E.164 form, or why it is not acceptable. */
export function checkPhone(lib: PhoneLibrary, text: string, rules: PhoneRules): { ok: string } | { error: string } {
  if (text.length > 64) return { error: 'is not a phone number' };
  let parsed: PhoneNumberLike | undefined;
  try {
    parsed = lib.parsePhoneNumberFromString(text, rules.callingCode ? { defaultCallingCode: rules.callingCode } : undefined);
  } catch {
    parsed = undefined;
  }
  if (!parsed) return { error: rules.callingCode ? `is not a phone number (numbers without a country code are read as +${rules.callingCode})` : 'is not a phone number (write it with its country code, e.g. +14155550123)' };
  if (rules.callingCode && parsed.countryCallingCode !== rules.callingCode) {
    return { error: `must be a +${rules.callingCode} number, not +${parsed.countryCallingCode}` };
  }
  if (rules.length !== null && parsed.nationalNumber.length !== rules.length) {
    return { error: `must have ${rules.length} digits after the country code, not ${parsed.nationalNumber.length}` };
  }
  if (!parsed.isValid()) return { error: 'is not a valid phone number' };
  return { ok: parsed.number };
}
