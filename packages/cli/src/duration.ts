/** Durations on the command line and in the environment: `30` (seconds), `30s`, `500ms`, `2m`. */

/** The longest duration accepted: Node's timers cannot wait longer than 2^31 - 1 ms. */
const MAX_MS = 24 * 24 * 3600 * 1000;

/**
 * Parses a duration into milliseconds. Zero is refused unless `allowZero` (a zero timeout would
 * end a run before it starts), and so is anything above 24 days, which Node's timers would
 * silently turn into an immediate expiry.
 */
export function parseDuration(value: string, options: { allowZero?: boolean } = {}): number {
  const kind = options.allowZero ? 'duration' : 'positive duration';
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
  const n = m ? Number(m[1]) : NaN;
  const ms = !m ? NaN : m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
  if (!Number.isFinite(ms) || (ms === 0 && !options.allowZero) || ms > MAX_MS) {
    throw new Error(`expected a ${kind} such as 30, 30s, 500ms or 2m, of at most 24 days`);
  }
  return ms;
}

/** Milliseconds as seconds for messages: `2 s`, `0.5 s`. */
export function formatSeconds(ms: number): string {
  return `${Math.round(ms) / 1000} s`;
}
