/**
 * Helpers for the attack tests of the standard skills: one call through the registry (as a
 * session would make it), and a bound on calls that used to hang, so a regression fails the test
 * with a message instead of blocking the worker.
 */
import { createResponder, type CommandRegistry } from '@lightsop/runtime';

export interface CallResult {
  status: string;
  data: unknown;
}

/** Calls one command of a registry; a thrown error becomes `{ status: 'error', data: message }`. */
export async function call(registry: CommandRegistry, command: string, args: string[], signal?: AbortSignal): Promise<CallResult> {
  const responder = createResponder('v', command, false, null);
  try {
    const payload = { command, args, raw: `${command} ${args.join(' ')}`, variable: 'v', lineNumber: 1, comment: '', commentLines: [], ...(signal ? { signal } : {}) };
    const value = (await registry.executeCommand(payload, responder.api)) as CallResult;
    return { status: value.status, data: value.data };
  } catch (error) {
    return { status: 'error', data: (error as Error).message };
  }
}

/**
 * Resolves with the promise's value, or rejects when it has not settled within `ms` (a hang is
 * the bug these tests guard against; the bound is generous and never asserts a duration).
 */
export function settleWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}
