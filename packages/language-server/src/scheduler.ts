/**
 * Debounced diagnostics, per document: each edit restarts that document's timer, so a burst of
 * edits is analysed once, at its end. The delay is adaptive by default: half the time the
 * document's last analysis took (incremental after the first), at most 20 ms. Cheap plans and
 * cheap edits get diagnostics at once; on a large plan, edits that arrive faster than the plan
 * can be analysed are coalesced, and the delay adds at most half an analysis to the latency. What to publish (and whether it is stale) is
 * the server's business; this module only owns the timers.
 */

/** The most the adaptive delay ever waits, in milliseconds. */
export const MAX_AUTO_DELAY_MS = 20;

/** The adaptive delay for a document whose last analysis took `millis` milliseconds. */
export function autoDelay(millis: number | undefined): number {
  if (millis === undefined) return 0;
  return Math.min(MAX_AUTO_DELAY_MS, Math.round(millis / 2));
}

export class DebounceTimers {
  private readonly timers = new Map<string, () => void>();

  constructor(private readonly run: (key: string) => void) {}

  /**
   * (Re)starts the timer of `key`. A delay of 0 runs once the messages already read are handled
   * (an immediate, not a 1 ms timer the process would sleep for: with incremental analysis most
   * edits get delay 0, and on a busy machine every wake-up is latency the user feels).
   */
  schedule(key: string, delay: number): void {
    this.timers.get(key)?.();
    const fire = () => {
      this.timers.delete(key);
      this.run(key);
    };
    if (delay <= 0) {
      const handle = setImmediate(fire);
      this.timers.set(key, () => clearImmediate(handle));
    } else {
      const handle = setTimeout(fire, delay);
      this.timers.set(key, () => clearTimeout(handle));
    }
  }

  cancel(key: string): void {
    this.timers.get(key)?.();
    this.timers.delete(key);
  }

  dispose(): void {
    for (const stop of this.timers.values()) stop();
    this.timers.clear();
  }
}
