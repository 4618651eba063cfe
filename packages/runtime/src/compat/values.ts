/**
 * The reference's value helpers (`createSuccessValue`, `createFailValue`, `createUndefinedValue`)
 * and its value record, on top of the runtime's value model (section 5): same fields, same raw
 * text, same strictly increasing timestamps.
 */
import { failValue, successValue, undefinedValue, type Value } from '../values';

/** A value record as the reference shows it: status, timestamp, data, raw, rootCause, via, origin. */
export type LightSOPLangValue = Value;

/** A success value; `null` or `undefined` data is stored as the empty string. */
export function createSuccessValue(data: unknown = '', origin = 'command'): LightSOPLangValue {
  return successValue(data, origin);
}

/** A fail value with the given reason (the empty string when none is given). */
export function createFailValue(reason?: unknown, origin = 'internal'): LightSOPLangValue {
  return failValue(reason ?? '', origin);
}

/** An undefined value; an empty reason reads as `undefined` in `getVarValue`. */
export function createUndefinedValue(reason: unknown = '', origin = 'internal'): LightSOPLangValue {
  return undefinedValue(reason, origin);
}
