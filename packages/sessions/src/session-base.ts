/**
 * What both session kinds share (sessions.md 1.5 to 1.7): the event hub and `onEvent`, the
 * session status, the one prompt in flight with its controller (`cancel()`), the per-prompt call
 * options that persist, the approval gate and the logger. SopSession and LoopSession extend it
 * and keep only what differs: how a prompt is answered.
 */
import { EventHub, PromptControl, PromptInterrupted, checkSignal, errorText, hasKey, looksLikeFreshInstruction } from './control';
import { SessionBusyError, SessionRunError } from './errors';
import { ApprovalGate } from './supervisor';
import { defaultLogger, type ReasoningEffort, type SessionAgent, type SessionEvent, type SessionEvents, type SessionLogger, type SessionStatus } from './types';

/** The call options a prompt may change for itself and the prompts after it (present-key semantics). */
export interface CallSettings {
  model: string | null;
  tags: readonly string[] | null;
  reasoningEffort: ReasoningEffort | null;
}

/** What every prompt may say, in both session kinds: its signal and its call settings. */
export interface PromptCallOptions {
  signal?: AbortSignal;
  model?: string | null;
  tags?: readonly string[] | null;
  reasoningEffort?: ReasoningEffort | null;
}

/** Checks a session's init object and its agent before anything is built; a TypeError names what is missing. */
export function checkSessionInit(init: unknown, session: string, fields: string, method: 'complete' | 'executePrompt'): void {
  if (!init || typeof init !== 'object') throw new TypeError(`${session} needs { ${fields} }`);
  const agent = (init as { agent?: unknown }).agent as Record<string, unknown> | null | undefined;
  if (!agent || typeof agent !== 'object' || typeof agent[method] !== 'function') throw new TypeError(`${session} needs an agent with ${method}()`);
}

export abstract class SessionBase implements SessionEvents {
  abstract readonly agent: SessionAgent;
  /** The session's call settings; `startPrompt` applies a prompt's own. */
  abstract readonly options: CallSettings;
  protected readonly log: SessionLogger;
  /** Approvals of this session: serialised, with its always-approve cache. */
  protected readonly gate: ApprovalGate;
  readonly #hub: EventHub;
  #status: SessionStatus = 'idle';
  #control: PromptControl | null = null;
  #promptCount = 0;

  protected constructor(logger: SessionLogger | undefined) {
    this.log = logger ?? defaultLogger;
    this.#hub = new EventHub(this.log);
    this.gate = new ApprovalGate((e) => this.emit(e));
  }

  get events(): SessionEvents {
    return this;
  }

  onEvent(listener: (event: SessionEvent) => void) {
    return this.#hub.onEvent(listener);
  }

  get status(): SessionStatus {
    return this.#status;
  }

  /** Interrupts the prompt in flight; false when there is none. */
  cancel(reason = 'cancelled'): boolean {
    if (!this.#control) return false;
    this.#control.controller.abort(reason);
    return true;
  }

  protected setStatus(status: SessionStatus): void {
    this.#status = status;
  }

  protected emit(event: SessionEvent): void {
    this.#hub.emit(event);
  }

  /**
   * Claims the session for a prompt: throws SessionBusyError while another is in flight, else
   * applies the prompt's call options (a present key persists; null clears). Nothing else changes.
   */
  protected claimPrompt(options: PromptCallOptions): void {
    if (this.#control) throw new SessionBusyError();
    if (hasKey(options, 'model')) this.options.model = options.model ?? null;
    if (hasKey(options, 'tags')) this.options.tags = options.tags ? [...options.tags] : null;
    if (hasKey(options, 'reasoningEffort')) this.options.reasoningEffort = options.reasoningEffort ?? null;
  }

  /** Starts the claimed prompt: its controller (linked to the caller's signal), status `running`, `prompt_started`. */
  protected startPrompt(signal: AbortSignal | undefined): PromptControl {
    const control = new PromptControl(signal);
    this.#control = control;
    this.#status = 'running';
    this.emit({ type: 'prompt_started', promptIndex: this.#promptCount++ });
    return control;
  }

  /** The session's current call settings with the prompt signal, for a call to the agent. */
  protected callOptions(signal: AbortSignal): CallSettings & { signal: AbortSignal } {
    return { model: this.options.model, tags: this.options.tags, reasoningEffort: this.options.reasoningEffort, signal };
  }

  /**
   * Calls the agent for a step of the prompt: an interruption while it answers is an
   * interruption, any other failure a SessionRunError of `phase`; an answer that arrives after the
   * signal fired is never used.
   */
  protected async callAgent<T>(phase: SessionRunError['phase'], signal: AbortSignal, call: () => Promise<T>): Promise<T> {
    let answer: T;
    try {
      answer = await call();
    } catch (error) {
      if (signal.aborted) throw new PromptInterrupted();
      throw new SessionRunError(phase, error);
    }
    checkSignal(signal);
    return answer;
  }

  /**
   * Whether a prompt answers the command that waits for input (2.6, 3.5): never when it names
   * another of `commands`; else when the agent interprets it as accept, cancel or update, or
   * (without that verdict) when it does not start like a fresh instruction.
   */
  protected async repliesToPending(prompt: string, pending: string, commands: Iterable<string>, signal: AbortSignal): Promise<boolean> {
    const lower = prompt.toLowerCase();
    for (const name of commands) {
      if (name !== pending && lower.includes(name.toLowerCase())) return false;
    }
    let intent = 'unknown';
    if (typeof this.agent.interpretMessage === 'function') {
      try {
        const interpretation = await this.agent.interpretMessage(prompt, { intents: ['accept', 'cancel', 'update'], ...this.callOptions(signal) });
        intent = interpretation?.intent ?? 'unknown';
      } catch (error) {
        if (signal.aborted) throw new PromptInterrupted();
        this.log(`interpretMessage failed: ${errorText(error)}`);
      }
      checkSignal(signal);
    }
    return intent === 'accept' || intent === 'cancel' || intent === 'update' || !looksLikeFreshInstruction(prompt);
  }

  /** Ends the prompt: unlinks the caller's signal, frees the session and emits `prompt_settled`. */
  protected endPrompt(control: PromptControl): void {
    control.release();
    this.#control = null;
    this.emit({ type: 'prompt_settled', status: this.#status });
  }
}
