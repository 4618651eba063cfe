/**
 * Errors of the session layer (sessions.md 1.8 and 4.2). Callers branch on the class and, for
 * registry errors, on the `kind` string.
 */
import type { CANNOT_COMPLETE } from '@lightsop/core';

/** A caller-supplied tool or command uses a name the runtime reserves. */
export class ReservedNameError extends Error {
  constructor(readonly toolName: string) {
    super(`"${toolName}" is a reserved name: the session provides it and callers cannot supply it`);
    this.name = 'ReservedNameError';
  }
}

/** `newPrompt()` was called while another prompt of the same session was in flight. */
export class SessionBusyError extends Error {
  constructor() {
    super('a prompt is already running in this session; callers serialise prompts');
    this.name = 'SessionBusyError';
  }
}

/** A non-abort failure of preparation or of a required agent call. */
export class SessionRunError extends Error {
  override readonly cause: unknown;
  constructor(readonly phase: 'setup' | 'planning' | 'decision', cause: unknown) {
    super(`${phase} failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'SessionRunError';
    this.cause = cause;
  }
}

export type ChangeErrorKind =
  | 'invalid_mode' | 'invalid_model' | 'invalid_effort' | 'no_changes'
  | 'loop_shutting_down' | 'loop_exited' | 'aborted' | 'commit_failed';

/** A refused mode or inference change of a live loop; nothing was applied. */
export class ChangeError extends Error {
  constructor(readonly kind: ChangeErrorKind, message?: string, readonly mode?: string) {
    super(message ?? kind.replace(/_/g, ' '));
    this.name = 'ChangeError';
  }
}

export type SessionErrorKind =
  | 'loop_not_found' | 'loop_exited' | 'closing' | 'faulted' | 'aborted'
  | 'depth_exceeded' | 'quota_exceeded' | 'delegation_blocked';

/** A refused registry operation. */
export class SessionError extends Error {
  constructor(readonly kind: SessionErrorKind, message?: string) {
    super(message ?? kind.replace(/_/g, ' '));
    this.name = 'SessionError';
  }
}

/** Shutdown finished with cleanup failures (loops that missed the drain deadline, log errors). */
export class ShutdownError extends Error {
  constructor(readonly causes: readonly unknown[]) {
    super(`shutdown finished with ${causes.length} cleanup error${causes.length === 1 ? '' : 's'}`);
    this.name = 'ShutdownError';
  }
}

/** A delegated child turn did not produce an answer (failed, cannot_complete or interrupted). */
export class DelegationError extends Error {
  constructor(readonly outcome: 'failed' | typeof CANNOT_COMPLETE | 'interrupted' | 'error', message: string) {
    super(message);
    this.name = 'DelegationError';
  }
}
