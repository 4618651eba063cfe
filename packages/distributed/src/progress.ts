/**
 * The progress of `lightsop batch` on stderr: a bar redrawn in place on a terminal, plain lines
 * every few seconds otherwise. Throughput is measured over the last ten seconds; the ETA follows
 * from it. `formatProgress` is pure, so tests read the exact text.
 */

export interface ProgressState {
  readonly done: number;
  readonly total: number;
  /** Inputs whose result is not a success. */
  readonly notOk: number;
  /** Results per second, or null before there is a measure. */
  readonly rate: number | null;
}

/** `3m05s`, `42s`, `1h02m`. */
export function formatEta(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function formatRate(rate: number | null): string {
  if (rate === null) return '-/s';
  return rate >= 100 ? `${Math.round(rate)}/s` : `${rate.toFixed(1)}/s`;
}

/** One progress line; with `barWidth` > 0 it starts with a bar. */
export function formatProgress(state: ProgressState, barWidth: number): string {
  const fraction = state.total === 0 ? 1 : state.done / state.total;
  const percent = `${Math.floor(fraction * 100)}%`.padStart(4);
  const remaining = state.total - state.done;
  const eta = remaining === 0 ? '0s' : state.rate && state.rate > 0 ? formatEta(remaining / state.rate) : '?';
  const counts = `${state.done}/${state.total}`;
  const tail = `${counts} ${percent} ${formatRate(state.rate)} ETA ${eta}${state.notOk > 0 ? ` (${state.notOk} not ok)` : ''}`;
  if (barWidth <= 0) return tail;
  const filled = Math.min(barWidth, Math.floor(fraction * barWidth));
  return `[${'#'.repeat(filled)}${'.'.repeat(barWidth - filled)}] ${tail}`;
}

export interface ProgressOptions {
  readonly total: number;
  /** Results that were already in the output file. */
  readonly skipped: number;
  readonly tty: boolean;
  readonly columns: number;
  readonly write: (text: string) => void;
  /** Period of the plain lines (not on a terminal). */
  readonly intervalMs: number;
}

/** Tracks completions and draws the progress at a bounded rate. */
export class ProgressReporter {
  private done: number;
  private notOk = 0;
  private readonly samples: { t: number; done: number }[] = [];
  private lastDraw = 0;
  private drawn = false;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly options: ProgressOptions) {
    this.done = options.skipped;
    this.samples.push({ t: Date.now(), done: this.done });
    if (!options.tty) {
      this.timer = setInterval(() => this.line(), options.intervalMs);
      this.timer.unref();
    }
  }

  /** One more result (ok says whether it was a success). */
  add(ok: boolean): void {
    this.done++;
    if (!ok) this.notOk++;
    if (this.options.tty) {
      const now = Date.now();
      if (now - this.lastDraw >= 100) this.draw(now);
    }
  }

  /** Draws the final state and ends the line. */
  finish(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.options.tty) {
      this.draw(Date.now());
      if (this.drawn) this.options.write('\n');
    } else {
      this.line();
    }
  }

  /** Clears the bar before another message is written on stderr (redrawn on the next update). */
  clear(): void {
    if (this.options.tty && this.drawn) this.options.write('\r\x1b[2K');
  }

  state(): ProgressState {
    const now = Date.now();
    this.samples.push({ t: now, done: this.done });
    while (this.samples.length > 2 && now - this.samples[0]!.t > 10_000) this.samples.shift();
    const first = this.samples[0]!;
    const elapsed = (now - first.t) / 1000;
    const rate = elapsed >= 0.5 ? (this.done - first.done) / elapsed : null;
    return { done: this.done, total: this.options.total, notOk: this.notOk, rate };
  }

  private draw(now: number): void {
    this.lastDraw = now;
    const width = Math.max(10, Math.min(40, this.options.columns - 60));
    const text = formatProgress(this.state(), width);
    this.options.write(`\r\x1b[2K${text.slice(0, Math.max(20, this.options.columns - 1))}`);
    this.drawn = true;
  }

  private line(): void {
    this.options.write(`lightsop batch: ${formatProgress(this.state(), 0)}\n`);
  }
}
