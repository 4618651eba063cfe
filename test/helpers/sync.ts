/**
 * Synchronisation for tests: deferred promises a test opens when a state is reached, a turn of
 * the event loop, and the one polling wait (`waitFor`) that the suites' own waits call. Tests wait
 * on states with these, never on fixed sleeps.
 */

export interface Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Resolves once the promise callbacks already queued and one macrotask have run. It makes a
 * command asynchronous (it settles after the current scheduling round) without sleeping.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** How `waitFor` reads again. */
export interface WaitOptions {
  /** How long to wait before failing; a generous deadline, not a timing (default 30 s). */
  readonly timeoutMs?: number;
  /** Between reads: milliseconds, or `'turn'` for once per event-loop turn (default 20 ms). */
  readonly every?: number | 'turn';
  /**
   * Whether a read that throws is read again (the last error is named if the deadline passes);
   * by default the error fails the wait at once.
   */
  readonly retryErrors?: boolean;
}

/**
 * Resolves with `read()` (which may be async) once it is truthy, reading it again until then;
 * rejects after the deadline, naming `what`. The one polling wait of the tests: a state, never a
 * sleep. `options` as a number is the deadline in milliseconds.
 */
export async function waitFor<T>(
  what: string,
  read: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  options: WaitOptions | number = {},
): Promise<T> {
  const { timeoutMs = 30_000, every = 20, retryErrors = false } = typeof options === 'number' ? { timeoutMs: options } : options;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await read();
      if (value) return value;
    } catch (error) {
      if (!retryErrors) throw error;
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? ` (${last.message})` : ''}`);
    await (every === 'turn' ? nextTurn() : new Promise((resolve) => setTimeout(resolve, every)));
  }
}
