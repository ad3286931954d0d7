import { expect } from 'vitest';
import { OqlError } from '../../src/diagnostics/diagnostic.js';

/** Awaits a call that must fail with an OqlError and returns the error. */
export async function failure(p: Promise<unknown>): Promise<OqlError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(OqlError);
    return e as OqlError;
  }
  throw new Error('expected the call to fail');
}
