/**
 * Cancellation primitives and small helpers shared by both session regimes (sessions.md 1.5 to
 * 1.7): the prompt controller and its link to the caller's signal, interruption reasons and
 * messages, the synchronous event hub, and JSON-safe snapshots.
 */
import type { Disposable, SessionEvent, SessionLogger } from './types';

/** Thrown inside a session when the prompt signal fired; never escapes `newPrompt()`. */
export class PromptInterrupted extends Error {
  constructor() {
    super('interrupted');
    this.name = 'PromptInterrupted';
  }
}

/** Throws PromptInterrupted when the signal has fired. */
export function checkSignal(signal: AbortSignal): void {
  if (signal.aborted) throw new PromptInterrupted();
}

/**
 * One prompt's abort controller, linked to the caller's signal by a single listener that
 * `release()` removes, so an old signal can never cancel a later prompt.
 */
export class PromptControl {
  readonly controller = new AbortController();
  private readonly caller: AbortSignal | undefined;
  private readonly onCallerAbort = () => this.controller.abort(interruptionReasonOf(this.caller!.reason));

  constructor(callerSignal: AbortSignal | undefined) {
    this.caller = callerSignal;
    if (!callerSignal) return;
    if (callerSignal.aborted) this.controller.abort(interruptionReasonOf(callerSignal.reason));
    else callerSignal.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The interruption reason: the abort reason when it is a non-empty string, else 'external-signal'. */
  get reason(): string {
    return interruptionReasonOf(this.controller.signal.reason);
  }

  release(): void {
    this.caller?.removeEventListener('abort', this.onCallerAbort);
  }
}

export function interruptionReasonOf(reason: unknown): string {
  return typeof reason === 'string' && reason.trim() !== '' ? reason : 'external-signal';
}

const USER_REASONS = new Set(['', 'cancelled', 'esc', 'escape', 'external-signal', 'user']);

/** `Interrupted by user` for the user-ish reasons, otherwise `Interrupted: <reason>`. */
export function interruptionMessage(reason: string): string {
  return USER_REASONS.has(reason.trim().toLowerCase()) ? 'Interrupted by user' : `Interrupted: ${reason}`;
}

export interface InterruptionEntry {
  type: 'system';
  event: 'interrupted';
  by: 'user';
  reason: string;
  message: string;
  at: string;
}

/** Appends the interruption entry unless the newest entry already is one. */
export function appendInterruption(history: unknown[], reason: string, message: string): void {
  const last = history[history.length - 1] as { type?: unknown; event?: unknown } | undefined;
  if (last && last.type === 'system' && last.event === 'interrupted') return;
  const entry: InterruptionEntry = { type: 'system', event: 'interrupted', by: 'user', reason, message, at: new Date().toISOString() };
  history.push(entry);
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A synchronous observer list; listener exceptions are caught and logged. */
export class EventHub<E = SessionEvent> {
  private readonly listeners = new Set<(event: E) => void>();
  constructor(private readonly log: SessionLogger) {}

  onEvent(listener: (event: E) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  emit(event: E): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.log(`an event listener threw: ${errorText(error)}`);
      }
    }
  }
}

/** A JSON round trip; values that cannot be serialised fall back to `String(value)`. */
export function jsonSafe<T = unknown>(value: unknown): T {
  try {
    const text = JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? v.toString() : v));
    return (text === undefined ? null : JSON.parse(text)) as T;
  } catch {
    if (Array.isArray(value)) return value.map((v) => jsonSafe(v)) as T;
    return String(value) as T;
  }
}

/** Trims and unwraps one enclosing code fence (any language tag). */
export function unwrapFence(text: string): string {
  const trimmed = text.trim();
  const m = /^```[^\n`]*\n([\s\S]*?)\n[ \t]*```$/.exec(trimmed);
  return m ? m[1]!.trim() : trimmed;
}

/** Present-key semantics of per-prompt options: `key in options` persists the value (null clears). */
export function hasKey<T extends object>(options: T | undefined, key: keyof T): boolean {
  return options !== undefined && options !== null && Object.prototype.hasOwnProperty.call(options, key);
}

export const FRESH_INSTRUCTION_VERBS = new Set([
  'list', 'show', 'display', 'view', 'get', 'find', 'search', 'add', 'create', 'new', 'update', 'edit', 'change',
  'delete', 'remove', 'import', 'wipe', 'help', 'exit', 'quit', 'start', 'stop',
]);

/** True when the prompt's first word is one of the fresh-instruction verbs (2.6, 3.5). */
export function looksLikeFreshInstruction(prompt: string): boolean {
  const first = prompt.trim().split(/\s+/)[0]?.toLowerCase().replace(/[^a-z]/g, '') ?? '';
  return FRESH_INSTRUCTION_VERBS.has(first);
}
