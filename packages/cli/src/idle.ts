/**
 * Work the CLI waits for that can no longer finish, and work it stops waiting for. Node exits as
 * soon as its event loop is empty, even while a promise is pending: a skill or a skills module that
 * awaits a promise nothing will ever settle would otherwise end the process silently with exit 0.
 * Node's 'beforeExit' event says exactly that the loop is empty, so whatever is still pending then
 * is stuck for good. Conversely, work the CLI gave up on (a command that ignores its abort signal,
 * a module still loading past its time limit) must not keep the process alive once the output is
 * written.
 */

/** Calls `handler` each time the event loop is empty (nothing left could settle a pending promise); returns the unsubscribe. */
export function onIdle(handler: () => void): () => void {
  process.on('beforeExit', handler);
  return () => void process.off('beforeExit', handler);
}

/**
 * Races `promise` against an empty event loop: when the loop empties first, the promise can never
 * settle and the result rejects with `stuck()` instead.
 */
export function unlessStuck<T>(promise: Promise<T>, stuck: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const off = onIdle(() => {
      off();
      reject(stuck());
    });
    promise.then(
      (value) => {
        off();
        resolve(value);
      },
      (error: unknown) => {
        off();
        reject(error);
      },
    );
  });
}

let leftBehind = false;

/** Notes that work was left running; the entry point then exits once the output is written. */
export function leaveWorkBehind(): void {
  leftBehind = true;
}

/** True when some work was left running (see `leaveWorkBehind`). */
export function workLeftBehind(): boolean {
  return leftBehind;
}

/** Exits with `code` once everything written to stdout and stderr so far has been handed to the OS. */
export function exitAfterOutput(code: number): void {
  process.exitCode = code;
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}
