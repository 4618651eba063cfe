/**
 * The debugger's control of a run, on the runtime's `beforeCommand` hook: every ready
 * declaration calls `beforeCommand` just before it starts and starts once the returned promise
 * settles (abort during the wait means it does not start). The stepper decides, for each of
 * them, whether it may go on or the run pauses before it.
 *
 * - While paused, nothing starts: later arrivals wait in arrival order (commands already in
 *   flight go on and settle).
 * - Continue releases the paused declaration and lets the others go, up to the next one on a
 *   breakpoint line.
 * - Next releases the paused declaration, waits until it has settled, then pauses before the
 *   next declaration that starts (one that was waiting meanwhile, or the next to arrive).
 * - Pause (and stop on entry) pauses before the next declaration that starts.
 * - Abort (Stop/Disconnect) releases everyone; the runtime then starts nothing.
 *
 * No DAP and no VS Code here: the adapter turns `onStop` into a stopped event.
 */

export interface Step {
  readonly variable: string;
  readonly command: string;
}

export type StopReason = 'entry' | 'step' | 'pause' | 'breakpoint';

interface Waiter {
  readonly step: Step;
  readonly release: () => void;
}

export class Stepper {
  /** The declaration the run is paused before, or null while it runs. */
  private pausedAt: Waiter | null = null;
  /** Declarations waiting to start, in arrival order. */
  private readonly waiting: Waiter[] = [];
  /** Why the next arrival pauses, or null to run to a breakpoint. */
  private pauseNext: Exclude<StopReason, 'breakpoint'> | null;
  /** Set by Next: the released declaration; no other stop is decided until it has settled. */
  private stepping: string | null = null;
  private aborted = false;

  constructor(
    /** Whether a breakpoint is on the line of the step's declaration. */
    private readonly isBreakpoint: (step: Step) => boolean,
    private readonly onStop: (step: Step, reason: StopReason) => void,
    stopOnEntry: boolean,
  ) {
    this.pauseNext = stopOnEntry ? 'entry' : null;
  }

  /** The declaration the run is paused before. */
  get paused(): Step | null {
    return this.pausedAt?.step ?? null;
  }

  /** Whether `variable` is ready and held back by the debugger (not the paused one). */
  isWaiting(variable: string): boolean {
    return this.waiting.some((w) => w.step.variable === variable);
  }

  /** The runtime's hook: resolves when `step` may start. */
  readonly beforeCommand = (step: Step, signal: AbortSignal | null): Promise<void> => {
    if (this.aborted || signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const waiter: Waiter = {
        step: { variable: step.variable, command: step.command },
        release: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        if (this.pausedAt === waiter) this.pausedAt = null;
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
      this.pump();
    });
  };

  /** Runs to the next breakpoint. */
  continue(): void {
    this.pauseNext = null;
    this.stepping = null;
    this.resume();
  }

  /** Runs the paused declaration and pauses before the next one that starts. */
  next(): void {
    const current = this.pausedAt;
    this.pauseNext = 'step';
    this.stepping = current ? current.step.variable : null;
    this.resume();
  }

  /** Pauses before the next declaration that starts. */
  pause(): void {
    if (this.pausedAt) return;
    this.pauseNext = 'pause';
    this.stepping = null;
    this.pump();
  }

  /** A declaration settled: after Next, the stepped one lets the next stop be decided. */
  settled(variable: string): void {
    if (this.stepping !== variable) return;
    this.stepping = null;
    this.pump();
  }

  /** Releases everything for good: the run is being aborted (the runtime starts nothing more). */
  abort(): void {
    this.aborted = true;
    this.pausedAt?.release();
    this.pausedAt = null;
    for (const w of this.waiting.splice(0)) w.release();
  }

  private resume(): void {
    const current = this.pausedAt;
    this.pausedAt = null;
    current?.release();
    this.pump();
  }

  private pump(): void {
    if (this.aborted) {
      for (const w of this.waiting.splice(0)) w.release();
      return;
    }
    if (this.pausedAt || this.stepping !== null) return;
    while (this.waiting.length > 0) {
      const w = this.waiting.shift()!;
      const breakpoint = this.isBreakpoint(w.step);
      if (this.pauseNext !== null || breakpoint) {
        const reason: StopReason = breakpoint ? 'breakpoint' : this.pauseNext!;
        this.pauseNext = null;
        this.pausedAt = w;
        this.onStop(w.step, reason);
        return;
      }
      w.release();
    }
  }
}
