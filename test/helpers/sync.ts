/**
 * Synchronisation for tests: deferred promises a test opens when a state is reached, and a turn
 * of the event loop. Tests wait on states with these, never on fixed sleeps.
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

/** Resolves with `read()` once it is truthy, or rejects after a generous deadline (a state, never a sleep). */
export async function waitFor<T>(what: string, read: () => T | null | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
