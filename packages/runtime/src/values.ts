/**
 * The value model (section 5): four statuses, value records with strictly increasing
 * timestamps, root causes of cancellations, and the public text form every host shows.
 */

export type Status = 'success' | 'fail' | 'undefined' | 'canceled';

export interface RootCause {
  /** The variable whose command canceled. */
  name: string;
  /** Normalised reason (5.5). */
  reason: unknown;
  command?: string | null;
  heuristic?: unknown;
  source?: string;
}

export interface Value {
  status: Status;
  /** Success: the command's data as given; otherwise the reason text. */
  data: unknown;
  timestamp: number;
  /** `TIMESTAMP:STATUS:DATA`; shown in snapshots, parsed by nothing. */
  raw: string;
  rootCause: RootCause | null;
  /** Propagated cancellations: the upstream variable it arrived through. */
  via: string | null;
  /** Informational label of what produced the value. */
  origin: string;
  [extra: string]: unknown;
}

/**
 * The last stamp handed out lives on globalThis, so every copy of this module in a process (the
 * library, the compat bundle, a host's own bundle) shares one strictly increasing clock.
 */
const CLOCK = Symbol.for('lightsop.runtime.clock');
const clock: { last: number } = ((globalThis as Record<symbol, unknown>)[CLOCK] ??= { last: 0 }) as { last: number };

/** Wall-clock milliseconds, forced to increase strictly within the process (5.4). */
export function nextTimestamp(): number {
  const now = Math.trunc(Date.now());
  clock.last = now > clock.last ? now : clock.last + 1;
  return clock.last;
}

const UNSHOWABLE = '[value that cannot be converted to text]';

/**
 * `String(x)` that never throws. A command may hand back anything (a null-prototype object, an
 * object whose `toString` throws, a Proxy whose every trap throws); such a value gets its
 * `[object Tag]` form, or a fixed text when even that cannot be read, so one hostile value never
 * takes the run down with it.
 */
export function textOf(x: unknown): string {
  // Most values are text already: no call to the String constructor.
  if (typeof x === 'string') return x;
  try {
    return String(x);
  } catch {
    // Conversion refused: fall back to the tag, which needs no cooperation from the value.
  }
  try {
    return Object.prototype.toString.call(x);
  } catch {
    // A Proxy that throws on every trap cannot even be tagged.
  }
  return UNSHOWABLE;
}

/** The reason text of a thrown value (6.4): an Error's message, or `String(X)`; never throws. */
export function errorText(error: unknown): string {
  try {
    if (error instanceof Error) return textOf(error.message);
  } catch {
    // `instanceof` on a Proxy, or a `message` getter, threw: describe the value itself instead.
  }
  return textOf(error);
}

const ALIASES: Record<string, Status> = {
  success: 'success', fail: 'fail', undefined: 'undefined', canceled: 'canceled',
  cancelled: 'canceled', cancled: 'canceled', cancel: 'canceled',
};

/** Reads a status from text: trimmed, lower-cased, with the cancel aliases; null otherwise. */
export function normalizeStatus(status: unknown): Status | null {
  // The four statuses as they are (every value a responder makes): no text to build.
  if (status === 'success' || status === 'fail' || status === 'undefined' || status === 'canceled') return status;
  if (!status) return null;
  const key = textOf(status).trim().toLowerCase();
  return Object.prototype.hasOwnProperty.call(ALIASES, key) ? ALIASES[key]! : null;
}

/** '000' to '999'. */
const THREE_DIGITS: readonly string[] = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
/** The text of the thousands of the last timestamp converted, and that number. */
let thousandsText = '';
let thousands = -1;

/**
 * `String(timestamp)` for the integer timestamps the clock hands out: successive ones share all
 * but their last three digits, so those are kept as text and the rest comes from a table (a
 * number's conversion to text is the most expensive step of making a value). Anything else is
 * converted as usual.
 */
function timestampText(timestamp: number): string {
  if (!(timestamp >= 1000 && timestamp <= Number.MAX_SAFE_INTEGER && Number.isInteger(timestamp))) return String(timestamp);
  const high = Math.floor(timestamp / 1000);
  if (high !== thousands) {
    thousands = high;
    thousandsText = String(high);
  }
  return thousandsText + THREE_DIGITS[timestamp - high * 1000]!;
}

/** `:STATUS:` (a switch: a lookup by a varying key would be a slow, megamorphic one). */
function statusSeparated(status: Status): string {
  switch (status) {
    case 'success':
      return ':success:';
    case 'fail':
      return ':fail:';
    case 'undefined':
      return ':undefined:';
    case 'canceled':
      return ':canceled:';
    default:
      // A host's status that is none of the four (`setValue` passes it on as given).
      return `:${textOf(status)}:`;
  }
}

/**
 * `TIMESTAMP:STATUS:DATA`. A success keeps its text for as long as it lives (the results of a
 * plan); concatenated, a short one is a tree of V8 cons strings several times the size of its
 * characters, so it is flattened once here (reading a character flattens a string; the garbage
 * collector then drops the tree). The other statuses mostly hold passing states (`waiting for`,
 * `definition changed`) and stay concatenations, as does a long text (flattening copies it).
 */
function rawText(timestamp: number, status: Status, text: string): string {
  const raw = timestampText(timestamp) + statusSeparated(status) + text;
  if (status === 'success' && text.length <= 64) raw.charCodeAt(0);
  return raw;
}

/** Creates a value; `null`/`undefined` data is stored as the empty string. */
export function createValue(status: Status, data: unknown, origin: string, extra?: { rootCause?: RootCause | null; via?: string | null; timestamp?: number }): Value {
  const timestamp = extra?.timestamp ?? nextTimestamp();
  const payload = data ?? '';
  return {
    status,
    data: payload,
    timestamp,
    raw: rawText(timestamp, status, textOf(payload)),
    rootCause: status === 'canceled' ? (extra?.rootCause ?? null) : null,
    via: extra?.via ?? null,
    origin,
  };
}

export const successValue = (data: unknown, origin = 'command'): Value => createValue('success', data, origin);
export const failValue = (reason: unknown, origin = 'internal'): Value => createValue('fail', reason, origin);
export const undefinedValue = (reason: unknown = '', origin = 'internal'): Value => createValue('undefined', reason, origin);

/** `no reason provided` for an absent or blank reason; otherwise the trimmed text (5.5). */
export function normalizeCancelReason(reason: unknown): string {
  if (reason === null || reason === undefined) return 'no reason provided';
  return textOf(reason).trim() || 'no reason provided';
}

/** A root cancellation: `command C canceled (R)`. */
export function rootCanceledValue(variable: string, reason: unknown, origin: string, meta: { command?: string | null; heuristic?: unknown; source?: string } = {}): Value {
  const text = normalizeCancelReason(reason);
  return createValue('canceled', `command ${meta.command ?? variable} canceled (${text})`, origin, {
    rootCause: { name: variable, reason: text, command: meta.command ?? null, heuristic: meta.heuristic ?? null, source: meta.source ?? origin },
  });
}

/** A propagated cancellation: `because command L canceled (R) via V`. */
export function propagatedCanceledValue(rootCause: RootCause, via: string): Value {
  const label = textOf(rootCause.command || rootCause.name);
  return createValue('canceled', `because command ${label} canceled (${normalizeCancelReason(rootCause.reason)}) via ${via}`, 'propagation', { rootCause, via });
}

/** The public text form (5.3): data for success, `fail:R`, `undefined[:R]`, `canceled:R`. */
export function publicForm(value: Value | undefined): unknown {
  if (!value) return undefined;
  const data = value.data ?? '';
  switch (value.status) {
    case 'success':
      return data;
    case 'undefined':
      return data === '' || data === null ? 'undefined' : `undefined:${textOf(data)}`;
    case 'fail':
      return `fail:${textOf(data)}`;
    default:
      return `canceled:${textOf(data)}`;
  }
}

/** The value's data as text, without a status prefix (the CLI's JSON `value`). */
export function dataText(value: Value): string {
  return textOf(value.data ?? '');
}
