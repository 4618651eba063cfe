/**
 * Debounced diagnostics, per document: each edit restarts that document's timer, so a burst of
 * edits is analysed once, at its end. The delay is adaptive by default: half the time the
 * document's last analysis took, at most 20 ms. Cheap plans get diagnostics at once; on a large
 * plan, edits that arrive faster than the plan can be analysed are coalesced, and the delay
 * adds at most half an analysis to the latency. What to publish (and whether it is stale) is
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
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly run: (key: string) => void) {}

  /** (Re)starts the timer of `key`; `delay` 0 still runs after the current message is handled. */
  schedule(key: string, delay: number): void {
    const existing = this.timers.get(key);
    if (existing) clearTimeout(existing);
    this.timers.set(key, setTimeout(() => {
      this.timers.delete(key);
      this.run(key);
    }, Math.max(0, delay)));
  }

  cancel(key: string): void {
    const existing = this.timers.get(key);
    if (existing) clearTimeout(existing);
    this.timers.delete(key);
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
