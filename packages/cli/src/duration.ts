/** Durations on the command line and in the environment: `30` (seconds), `30s`, `500ms`, `2m`. */
import { parseDurationMs } from '@lightsop/core';

/**
 * Parses a duration into milliseconds with core's parser (the config reads durations the same
 * way), throwing a usage message when it is not one. Zero is refused unless `allowZero` (a zero
 * timeout would end a run before it starts), and so is anything above 24 days.
 */
export function parseDuration(value: string, options: { allowZero?: boolean } = {}): number {
  const ms = parseDurationMs(value, options);
  if (ms === null) {
    throw new Error(`expected a ${options.allowZero ? 'duration' : 'positive duration'} such as 30, 30s, 500ms or 2m, of at most 24 days`);
  }
  return ms;
}

/** Milliseconds as seconds for messages: `2 s`, `0.5 s`. */
export function formatSeconds(ms: number): string {
  return `${Math.round(ms) / 1000} s`;
}
