/**
 * The session registry and its live loops (sessions.md section 4): every loop of one user
 * session, the active loop (only the default target of `submit`), trusted controllers, the
 * delegation tree, interruption with its barrier, lifecycle and shutdown. Each live loop is an
 * actor that serialises its inputs and runs each one as a turn of its SOP or loop session,
 * SOP first with the loop fallback (5.1). Handles show only committed state; a change is
 * committed when its event is appended to the event log.
 */
import { randomUUID } from 'node:crypto';
import { CANNOT_COMPLETE } from '@lightsop/core';
import { errorText } from './control';
import { ChangeError, DelegationError, SessionError, SessionRunError, ShutdownError } from './errors';
import type { LoopSession, LoopSessionOptions, LoopTurnResult } from './loop-session';
import type { SopPromptResult, SopSession } from './sop-session';
import { REASONING_EFFORTS, type Disposable, type ReasoningEffort, type SessionEvent, type Supervisor } from './types';

export type LoopId = string & { readonly __brand: 'LoopId' };
export type CommandId = string & { readonly __brand: 'CommandId' };
export type ModeName = string;
export type Regime = 'sop' | 'loop' | 'plan';

export interface ModelRef {
  name: string;
  provider?: string;
  tags?: readonly string[];
  effort?: ReasoningEffort | null;
}

export interface ModeSpec {
  name: ModeName;
  regime: Regime;
  model?: ModelRef;
}

export interface LoopSessions {
  sop: () => SopSession;
  loop: (initialHistory: LoopSessionOptions['initialHistory']) => LoopSession;
}

export interface LoopDefinition {
  name: string;
  displayName?: string;
  model: ModelRef;
  modes: readonly ModeSpec[];
  initialMode?: ModeName;
  delegates?: readonly string[];
  createSessions(context: LoopBuildContext): LoopSessions;
}

export interface LoopBuildContext {
  loopId: LoopId;
  parentLoopId: LoopId | null;
  registrySignal: AbortSignal;
  supervisor: Supervisor;
  projectRoot: string;
  delegate?: (definition: string, text: string, signal: AbortSignal) => Promise<string>;
}

export interface LoopHandle {
  readonly id: LoopId;
  readonly mode: ModeName;
  readonly model: ModelRef;
}

export type Change =
  | { readonly kind: 'model'; readonly model: ModelRef }
  | { readonly kind: 'effort'; readonly effort: ReasoningEffort };
export const changeModel = (model: ModelRef): Change => ({ kind: 'model', model: structuredClone(model) });
export const changeEffort = (effort: ReasoningEffort): Change => ({ kind: 'effort', effort });

export interface LoopController extends LoopHandle {
  setMode(mode: ModeName, options?: { signal?: AbortSignal }): Promise<void>;
  change(changes: readonly Change[], options?: { signal?: AbortSignal }): Promise<void>;
  interrupt(options?: { signal?: AbortSignal; reason?: string }): Promise<void>;
}

export interface LoopInput {
  text: string;
  signal?: AbortSignal;
  regime?: Regime;
}

export type LoopState = 'registered' | 'running' | 'idle' | 'closing' | 'exited';
export interface LoopInfo {
  id: LoopId;
  parentId: LoopId | null;
  name: string;
  displayName: string;
  state: LoopState;
  mode: ModeName;
  model: ModelRef;
  queued: number;
}

export interface EventHeader {
  seq: number;
  eventId: string;
  sessionId: string;
  at: string;
  loopId?: LoopId;
  cause?: { commandId?: CommandId; loopId?: LoopId };
  agency?: 'user' | 'machine';
}

export type TurnOutcome =
  | { kind: 'sop'; result: SopPromptResult; fellBackToLoop?: LoopTurnResult }
  | { kind: 'loop'; result: LoopTurnResult }
  | { kind: 'interrupted'; message: string }
  | { kind: 'error'; message: string };

type EventBody =
  | { type: 'LoopStarted'; parentLoopId: LoopId | null; name: string; displayName: string; mode: ModeName; model: ModelRef }
  | { type: 'ActiveLoopChanged'; previousLoopId: LoopId | null; activeLoopId: LoopId }
  | { type: 'LoopModeChanged'; mode: ModeName; model: ModelRef }
  | { type: 'LoopInferenceChanged'; model: ModelRef }
  | { type: 'InputQueued'; commandId: CommandId }
  | { type: 'InputCancelled'; commandId: CommandId; reason: 'cancelled' | 'shutdown' }
  | { type: 'TurnStarted'; commandId: CommandId; regime: Regime }
  | { type: 'SessionProgress'; commandId: CommandId; event: SessionEvent }
  | { type: 'TurnSettled'; commandId: CommandId; outcome: TurnOutcome }
  | { type: 'LoopIdle' }
  | { type: 'LoopClosing' }
  | { type: 'LoopExited' }
  | { type: 'SessionStopped' }
  | { type: 'SessionFaulted'; message: string };

export type RegistryEvent = EventHeader & EventBody;
export type RegistryEventType = RegistryEvent['type'];

export interface EventFilter {
  loops?: ReadonlySet<LoopId>;
  types?: ReadonlySet<RegistryEventType>;
  /** SessionProgress events are delivered only when this is true. */
  includeProgress?: boolean;
}

export interface EventSubscription extends AsyncIterable<RegistryEvent> {
  close(): void;
}

export interface EventLog {
  /** Resolves with the sequence number. */
  append(event: RegistryEvent): Promise<number>;
}

/** The default event log: in memory, never fails. */
export class InMemoryEventLog implements EventLog {
  readonly events: RegistryEvent[] = [];
  async append(event: RegistryEvent): Promise<number> {
    this.events.push(event);
    return this.events.length;
  }
}

export type SupervisorFactory = (scope: { loopId: LoopId; parentLoopId: LoopId | null; definition: string }) => Supervisor;

export interface RegistryInit {
  definitions: readonly LoopDefinition[];
  roots: readonly string[];
  activeRoot: string;
  eventLog?: EventLog;
  limits?: { maxDepth?: number; maxChildren?: number };
  shutdownDrainMs?: number;
  projectRoot: string;
  /** The host's supervisor (or one per loop). Default: approve calls declared free of side effects, deny the rest. */
  supervisor?: Supervisor | SupervisorFactory;
  /** Bounded buffer of each subscription (default 10,000 events). */
  subscriptionBuffer?: number;
}

export interface SessionController {
  readonly sessionId: string;
  activeLoop(): LoopHandle | undefined;
  loop(id: LoopId): LoopHandle | undefined;
  loopController(id: LoopId): LoopController | undefined;
  setActiveLoop(id: LoopId, options?: { signal?: AbortSignal }): Promise<void>;
  submit(input: LoopInput): Promise<CommandId>;
  submitToLoop(id: LoopId, input: LoopInput): Promise<CommandId>;
  cancelQueued(id: LoopId, commandId: CommandId): Promise<boolean>;
  newLoop(definition: string, options?: { mode?: ModeName }): Promise<LoopId>;
  loops(): readonly LoopInfo[];
  interrupt(options?: { signal?: AbortSignal; reason?: string }): Promise<boolean>;
  shutdown(options?: { signal?: AbortSignal }): Promise<void>;
  dispose(): void;
  subscribe(filter?: EventFilter): EventSubscription;
  onEvent(listener: (event: RegistryEvent) => void): Disposable;
}

/** The built-in modes: always available, whatever a definition lists. */
export const BUILTIN_MODES: readonly ModeSpec[] = [
  { name: 'sop', regime: 'sop' },
  { name: 'loop', regime: 'loop' },
  { name: 'plan', regime: 'plan' },
];

/** Default supervisor: approves calls declared free of side effects and denies everything else. */
export const readOnlySupervisor: Supervisor = {
  async approve(choice) {
    return choice.sideEffects === false ? 'approve' : { decision: 'deny', reason: 'no supervisor is configured to approve calls with side effects' };
  },
};

const CONTEXT_LINE_MAX = 1000;
const CONTEXT_TURNS_MAX = 10;

/** A promise-chain mutex. */
class Mutex {
  private chain: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T> | T): Promise<T> {
    const result = this.chain.then(fn, fn);
    this.chain = result.catch(() => undefined);
    return result;
  }
}

class CommitFailed extends Error {}

/** An interrupt barrier (4.7): holds queued inputs of the marked loops until every cancelled turn settled. */
class Barrier {
  pending = new Set<LiveLoop>();
  constructor(readonly targets: readonly LiveLoop[]) {}
  settled(loop: LiveLoop): void {
    if (!this.pending.delete(loop) || this.pending.size > 0) return;
    this.release();
  }
  release(): void {
    for (const t of this.targets) t.marks.delete(this);
    for (const t of this.targets) t.kick();
  }
}

interface QueuedInput {
  commandId: CommandId;
  text: string;
  signal?: AbortSignal;
  regime?: Regime;
  agency: 'user' | 'machine';
  cause?: { commandId?: CommandId; loopId?: LoopId };
}

interface TranscriptEntry {
  user: string;
  answer: string;
}

class Subscription implements EventSubscription {
  private readonly buffer: RegistryEvent[] = [];
  private waiting: ((r: IteratorResult<RegistryEvent>) => void) | null = null;
  private closed = false;
  private error: Error | null = null;

  constructor(private readonly filter: EventFilter, private readonly limit: number, private readonly onClose: (s: Subscription) => void) {}

  accepts(event: RegistryEvent): boolean {
    if (event.type === 'SessionProgress' && !this.filter.includeProgress) return false;
    if (this.filter.types && !this.filter.types.has(event.type)) return false;
    if (this.filter.loops && (!event.loopId || !this.filter.loops.has(event.loopId))) return false;
    return true;
  }

  push(event: RegistryEvent): void {
    if (this.closed || this.error) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve({ value: event, done: false });
      return;
    }
    if (this.buffer.length >= this.limit) {
      this.error = new Error(`the event subscription overflowed its buffer of ${this.limit} events`);
      this.onClose(this);
      return;
    }
    this.buffer.push(event);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose(this);
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<RegistryEvent> {
    return {
      next: () => {
        if (this.buffer.length > 0) return Promise.resolve({ value: this.buffer.shift()!, done: false });
        if (this.error) return Promise.reject(this.error);
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise<IteratorResult<RegistryEvent>>((resolve) => {
          this.waiting = resolve;
        });
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

function newLoopId(): LoopId {
  return randomUUID() as LoopId;
}

function newCommandId(): CommandId {
  return randomUUID() as CommandId;
}

function cloneModel(model: ModelRef): ModelRef {
  return structuredClone(model);
}

function validModel(model: unknown): model is ModelRef {
  if (typeof model !== 'object' || model === null) return false;
  const m = model as ModelRef;
  if (typeof m.name !== 'string' || m.name.trim() === '') return false;
  if (m.provider !== undefined && typeof m.provider !== 'string') return false;
  if (m.tags !== undefined && (!Array.isArray(m.tags) || m.tags.some((t) => typeof t !== 'string'))) return false;
  if (m.effort !== undefined && m.effort !== null && !REASONING_EFFORTS.includes(m.effort)) return false;
  return true;
}

function outcomeAnswer(outcome: TurnOutcome): string {
  if (outcome.kind === 'interrupted' || outcome.kind === 'error') return outcome.message;
  const result = outcome.kind === 'sop' ? (outcome.fellBackToLoop ?? outcome.result) : outcome.result;
  const answer = result.answer;
  if (answer === null || answer === undefined) return '';
  return typeof answer === 'string' ? answer : JSON.stringify(answer);
}

/**
 * A live view of a loop, what its handle and its controller both are: `id`, `mode` and `model`
 * read at each access (the model a copy), then `methods`.
 */
function loopView<T extends object>(loop: LiveLoop, methods: T): LoopHandle & T {
  const view = Object.defineProperties({}, {
    id: { get: () => loop.id, enumerable: true, configurable: true },
    mode: { get: () => loop.mode, enumerable: true, configurable: true },
    model: { get: () => cloneModel(loop.model), enumerable: true, configurable: true },
  }) as LoopHandle;
  return Object.assign(view, methods);
}

/** One live loop: an actor with a control surface, an input queue and its two sessions. */
class LiveLoop {
  state: LoopState = 'registered';
  mode: ModeName;
  model: ModelRef;
  readonly queue: QueuedInput[] = [];
  current: { commandId: CommandId; controller: AbortController; done: Promise<void> } | null = null;
  readonly marks = new Set<Barrier>();
  readonly control = new Mutex();
  readonly transcript: TranscriptEntry[] = [];
  readonly seen = { sop: 0, loop: 0 };
  readonly handle: LoopHandle;
  readonly controller: LoopController;
  sessions!: LoopSessions;
  sop!: SopSession;
  loopSession: LoopSession | null = null;
  #exited: Promise<void> | null = null;
  #progressCommand: CommandId | null = null;
  /** True while the host's loop-session factory runs; a throw there is fatal for the actor. */
  #buildingLoopSession = false;

  constructor(
    readonly registry: Registry,
    readonly id: LoopId,
    readonly definition: LoopDefinition,
    readonly parent: LiveLoop | null,
    mode: ModeName,
  ) {
    this.mode = mode;
    this.model = registry.modeModel(definition, mode);
    this.handle = loopView(this, {});
    this.controller = loopView<Omit<LoopController, keyof LoopHandle>>(this, {
      setMode: (m, o) => registry.setMode(this, m, o),
      change: (c, o) => registry.change(this, c, o),
      interrupt: (o) => registry.interruptSubtree(this, o),
    });
  }

  /** Builds the sessions; the SOP session now, the loop session on first use. */
  build(context: LoopBuildContext): void {
    this.sessions = this.definition.createSessions(context);
    this.sop = this.sessions.sop();
    this.sop.onEvent((event) => this.progress(event));
  }

  get displayName(): string {
    return this.definition.displayName ?? this.definition.name;
  }

  info(): LoopInfo {
    return {
      id: this.id, parentId: this.parent?.id ?? null, name: this.definition.name, displayName: this.displayName,
      state: this.state, mode: this.mode, model: cloneModel(this.model), queued: this.queue.length,
    };
  }

  depth(): number {
    let n = 0;
    for (let p = this.parent; p; p = p.parent) n++;
    return n;
  }

  private progress(event: SessionEvent): void {
    if (!this.#progressCommand) return;
    this.registry.publishProgress(this, this.#progressCommand, event);
  }

  /** Admits an input: starts a turn when idle and unmarked, otherwise queues it. */
  async admit(input: QueuedInput): Promise<CommandId> {
    if (!this.current && this.marks.size === 0 && this.queue.length === 0) {
      await this.startTurn(input);
      return input.commandId;
    }
    this.queue.push(input);
    try {
      await this.registry.commit({ type: 'InputQueued', commandId: input.commandId }, { loopId: this.id, cause: input.cause, agency: input.agency });
    } catch (error) {
      const i = this.queue.indexOf(input);
      if (i >= 0) this.queue.splice(i, 1);
      throw error;
    }
    return input.commandId;
  }

  /** Starts the next queued input, or goes idle; nothing while a barrier holds. */
  kick(): void {
    if (this.current || this.marks.size > 0 || this.state === 'closing' || this.state === 'exited') return;
    const next = this.queue.shift();
    if (next) {
      this.startTurn(next).catch((error) => this.registry.noteInternalError(error));
      return;
    }
    if (this.state === 'running') {
      this.state = 'idle';
      this.registry.commit({ type: 'LoopIdle' }, { loopId: this.id }).catch(() => undefined);
    }
  }

  /** Commits TurnStarted and runs the turn in the background; resolves once the turn started. */
  async startTurn(input: QueuedInput): Promise<void> {
    const controller = new AbortController();
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    this.current = { commandId: input.commandId, controller, done };
    const regime = this.chooseRegime(input);
    try {
      await this.registry.commit({ type: 'TurnStarted', commandId: input.commandId, regime }, { loopId: this.id, cause: input.cause, agency: input.agency });
    } catch (error) {
      this.current = null;
      finish();
      throw error;
    }
    this.state = 'running';
    void this.runTurn(input, regime, controller).finally(finish);
  }

  /** 5.1: a pending interaction is sticky; otherwise the input's regime or the committed mode's. */
  private chooseRegime(input: QueuedInput): Regime {
    if (this.loopSession && this.loopSession.status === 'awaiting_input') return 'loop';
    if (this.sop.status === 'awaiting_input') return 'sop';
    return input.regime ?? this.registry.regimeOf(this.definition, this.mode);
  }

  private ensureLoopSession(): LoopSession {
    if (!this.loopSession) {
      this.#buildingLoopSession = true;
      const initial = this.transcript
        .filter((t) => t.user.trim() !== '' && t.answer.trim() !== '')
        .flatMap((t) => [{ role: 'user' as const, message: t.user }, { role: 'assistant' as const, message: t.answer }]);
      this.loopSession = this.sessions.loop(initial);
      this.#buildingLoopSession = false;
      this.loopSession.onEvent((event) => this.progress(event));
      this.seen.loop = this.transcript.length;
    }
    return this.loopSession;
  }

  /** Transcript pairs the session has not seen, as context lines (5.1 item 7). */
  private gapLines(which: 'sop' | 'loop'): string[] {
    const missed = this.transcript.slice(this.seen[which]).slice(-CONTEXT_TURNS_MAX);
    const cut = (t: string) => (t.length > CONTEXT_LINE_MAX ? `${t.slice(0, CONTEXT_LINE_MAX - 1)}…` : t);
    return missed.flatMap((t) => [`user: ${cut(t.user)}`, `answer: ${cut(t.answer)}`]);
  }

  private async runTurn(input: QueuedInput, regime: Regime, controller: AbortController): Promise<void> {
    const signals = [this.registry.signal, controller.signal];
    if (input.signal) signals.push(input.signal);
    const signal = AbortSignal.any(signals);
    // Settings are sampled at the turn boundary.
    const model = cloneModel(this.model);
    const perPrompt = { model: model.name, tags: model.tags ?? null, reasoningEffort: model.effort ?? null };
    this.#progressCommand = input.commandId;
    const ran = { sop: false, loop: false };
    let fatal: unknown = null;
    let outcome: TurnOutcome;
    try {
      if (regime === 'loop') {
        const loop = this.ensureLoopSession();
        ran.loop = true;
        const result = await loop.newPrompt(input.text, { ...perPrompt, signal, context: this.gapLines('loop') });
        outcome = result.kind === 'interrupted' ? { kind: 'interrupted', message: result.answer } : { kind: 'loop', result };
      } else {
        ran.sop = true;
        const result = await this.sop.newPrompt(input.text, { ...perPrompt, signal, context: this.gapLines('sop'), ...(regime === 'plan' ? { planOnly: true } : {}) });
        if (result.kind === 'interrupted') outcome = { kind: 'interrupted', message: result.answer };
        else if (regime === 'sop' && result.kind === 'failed' && (result.reason === 'no_plan' || result.reason === 'plan_invalid')) {
          const loop = this.ensureLoopSession();
          ran.loop = true;
          const fallback = await loop.newPrompt(input.text, { ...perPrompt, signal, context: this.gapLines('loop') });
          outcome = fallback.kind === 'interrupted' ? { kind: 'interrupted', message: fallback.answer } : { kind: 'sop', result, fellBackToLoop: fallback };
        } else outcome = { kind: 'sop', result };
      }
    } catch (error) {
      if (this.#buildingLoopSession) fatal = error;
      outcome = signal.aborted && !(error instanceof SessionRunError)
        ? { kind: 'interrupted', message: 'Interrupted by user' }
        : { kind: 'error', message: errorText(error) };
    }
    this.#progressCommand = null;
    this.transcript.push({ user: input.text, answer: outcomeAnswer(outcome) });
    if (ran.sop) this.seen.sop = this.transcript.length;
    if (ran.loop) this.seen.loop = this.transcript.length;
    try {
      await this.registry.commit({ type: 'TurnSettled', commandId: input.commandId, outcome }, { loopId: this.id, cause: input.cause, agency: input.agency });
    } catch {
      // The registry is faulted; the turn is over all the same.
    }
    this.current = null;
    for (const barrier of [...this.marks]) barrier.settled(this);
    if (fatal !== null) await this.exitAfterFault();
    this.kick();
  }

  /**
   * The actor cannot go on (the host's session factory failed): it exits on its own. Queued
   * inputs are cancelled; the registry keeps the entry, and selecting or submitting to it is
   * refused with loop_exited.
   */
  private async exitAfterFault(): Promise<void> {
    this.#buildingLoopSession = false;
    this.state = 'exited';
    this.#exited = Promise.resolve();
    for (const q of this.queue.splice(0)) {
      await this.registry.commit({ type: 'InputCancelled', commandId: q.commandId, reason: 'cancelled' }, { loopId: this.id, cause: q.cause, agency: q.agency }).catch(() => undefined);
    }
    await this.registry.commit({ type: 'LoopExited' }, { loopId: this.id }).catch(() => undefined);
  }

  abortTurn(reason: string): boolean {
    if (!this.current || this.current.controller.signal.aborted) return false;
    this.current.controller.abort(reason);
    return true;
  }

  /** The shutdown command (4.8): closing, abort the turn, cancel queued inputs, exit. */
  shutdown(drainMs: number): Promise<void> {
    if (this.#exited) return this.#exited;
    this.#exited = (async () => {
      if (this.state === 'exited') return;
      this.state = 'closing';
      await this.registry.commit({ type: 'LoopClosing' }, { loopId: this.id }).catch(() => undefined);
      const running = this.current;
      running?.controller.abort('shutdown');
      for (const q of this.queue.splice(0)) {
        await this.registry.commit({ type: 'InputCancelled', commandId: q.commandId, reason: 'shutdown' }, { loopId: this.id, cause: q.cause, agency: q.agency }).catch(() => undefined);
      }
      let missed = false;
      if (running) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const deadline = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), drainMs)));
        missed = await Promise.race([running.done.then(() => false), deadline]);
        clearTimeout(timer);
      }
      this.state = 'exited';
      await this.registry.commit({ type: 'LoopExited' }, { loopId: this.id }).catch(() => undefined);
      if (missed) throw new Error(`loop ${this.displayName} (${this.id}) did not settle within ${drainMs} ms`);
    })();
    return this.#exited;
  }
}

/** The registry implementation; `createSessionRegistry` builds one. */
class Registry implements SessionController {
  readonly sessionId = randomUUID();
  readonly #definitions = new Map<string, LoopDefinition>();
  readonly #loops = new Map<LoopId, LiveLoop>();
  readonly #log: EventLog;
  readonly #observers = new Set<(event: RegistryEvent) => void>();
  readonly #subscriptions = new Set<Subscription>();
  readonly #selection = new Mutex();
  readonly #registrySignal = new AbortController();
  readonly #maxDepth: number;
  readonly #maxChildren: number;
  readonly #drainMs: number;
  readonly #bufferLimit: number;
  readonly #supervisor: Supervisor | SupervisorFactory;
  readonly #projectRoot: string;
  #commitChain: Promise<unknown> = Promise.resolve();
  #seq = 0;
  #active: LoopId | null = null;
  #closing = false;
  #faulted: { cause: unknown } | null = null;
  #spawned = 0;
  #shutdown: Promise<void> | null = null;
  #shutdownSettled = false;
  #disposed = false;

  constructor(init: RegistryInit) {
    for (const d of init.definitions) {
      if (!d || typeof d.name !== 'string' || d.name === '') throw new TypeError('every loop definition needs a name');
      if (this.#definitions.has(d.name)) throw new TypeError(`duplicate loop definition ${d.name}`);
      if (!validModel(d.model)) throw new TypeError(`loop definition ${d.name}: model must have a name`);
      this.#definitions.set(d.name, d);
    }
    this.#log = init.eventLog ?? new InMemoryEventLog();
    this.#maxDepth = Math.max(1, Math.floor(init.limits?.maxDepth ?? 4));
    this.#maxChildren = Math.max(0, Math.floor(init.limits?.maxChildren ?? 32));
    this.#drainMs = Math.max(0, init.shutdownDrainMs ?? 10_000);
    this.#bufferLimit = Math.max(1, Math.floor(init.subscriptionBuffer ?? 10_000));
    this.#supervisor = init.supervisor ?? readOnlySupervisor;
    this.#projectRoot = init.projectRoot;
  }

  get signal(): AbortSignal {
    return this.#registrySignal.signal;
  }

  // ---------------------------------------------------------------- events

  /** Appends an event to the log (serialised, in order) and delivers it; a failed append faults the registry. */
  commit(body: EventBody, header: Partial<EventHeader> = {}): Promise<RegistryEvent> {
    const run = async () => {
      const event = {
        ...body, seq: ++this.#seq, eventId: randomUUID(), sessionId: this.sessionId, at: new Date().toISOString(),
        ...(header.loopId ? { loopId: header.loopId } : {}), ...(header.cause ? { cause: header.cause } : {}), ...(header.agency ? { agency: header.agency } : {}),
      } as RegistryEvent;
      try {
        await this.#log.append(event);
      } catch (error) {
        this.fault(error);
        throw new CommitFailed(`the event log failed: ${errorText(error)}`);
      }
      this.#deliver(event);
      return event;
    };
    const result = this.#commitChain.then(run, run);
    this.#commitChain = result.catch(() => undefined);
    return result;
  }

  publishProgress(loop: LiveLoop, commandId: CommandId, event: SessionEvent): void {
    this.#deliver({ type: 'SessionProgress', commandId, event, seq: this.#seq, eventId: randomUUID(), sessionId: this.sessionId, at: new Date().toISOString(), loopId: loop.id, cause: { commandId } });
  }

  #deliver(event: RegistryEvent): void {
    for (const observer of [...this.#observers]) {
      try {
        observer(event);
      } catch {
        // Observers cannot break the registry.
      }
    }
    for (const s of [...this.#subscriptions]) if (s.accepts(event)) s.push(event);
  }

  fault(cause: unknown): void {
    if (this.#faulted) return;
    this.#faulted = { cause };
    this.#deliver({ type: 'SessionFaulted', message: errorText(cause), seq: this.#seq, eventId: randomUUID(), sessionId: this.sessionId, at: new Date().toISOString() });
  }

  noteInternalError(error: unknown): void {
    if (!(error instanceof CommitFailed)) this.fault(error);
  }

  subscribe(filter: EventFilter = {}): EventSubscription {
    const s = new Subscription(filter, this.#bufferLimit, (sub) => this.#subscriptions.delete(sub));
    this.#subscriptions.add(s);
    return s;
  }

  onEvent(listener: (event: RegistryEvent) => void): Disposable {
    this.#observers.add(listener);
    return { dispose: () => void this.#observers.delete(listener) };
  }

  // ---------------------------------------------------------------- views

  activeLoop(): LoopHandle | undefined {
    return this.#active ? this.#loops.get(this.#active)?.handle : undefined;
  }

  loop(id: LoopId): LoopHandle | undefined {
    return this.#loops.get(id)?.handle;
  }

  loopController(id: LoopId): LoopController | undefined {
    return this.#loops.get(id)?.controller;
  }

  loops(): readonly LoopInfo[] {
    return [...this.#loops.values()].map((l) => l.info());
  }

  /** The sessions of a loop (host code and tests; the webview never gets them). */
  sessionsOf(id: LoopId): { sop: SopSession; loop: LoopSession | null } | undefined {
    const l = this.#loops.get(id);
    return l ? { sop: l.sop, loop: l.loopSession } : undefined;
  }

  // ---------------------------------------------------------------- modes and models

  modeSpec(definition: LoopDefinition, mode: ModeName): ModeSpec | undefined {
    return definition.modes.find((m) => m.name === mode) ?? BUILTIN_MODES.find((m) => m.name === mode);
  }

  modeModel(definition: LoopDefinition, mode: ModeName): ModelRef {
    return cloneModel(this.modeSpec(definition, mode)?.model ?? definition.model);
  }

  regimeOf(definition: LoopDefinition, mode: ModeName): Regime {
    return this.modeSpec(definition, mode)?.regime ?? 'sop';
  }

  #checkLoopChange(loop: LiveLoop, signal?: AbortSignal): void {
    if (this.#faulted) throw new SessionError('faulted', 'the session registry is faulted');
    if (loop.state === 'exited') throw new ChangeError('loop_exited');
    if (loop.state === 'closing' || this.#closing) throw new ChangeError('loop_shutting_down');
    if (signal?.aborted) throw new ChangeError('aborted');
  }

  setMode(loop: LiveLoop, mode: ModeName, options: { signal?: AbortSignal } = {}): Promise<void> {
    return loop.control.run(async () => {
      this.#checkLoopChange(loop, options.signal);
      if (typeof mode !== 'string' || !this.modeSpec(loop.definition, mode)) throw new ChangeError('invalid_mode', `unknown mode ${String(mode)}`, String(mode));
      const model = this.modeModel(loop.definition, mode);
      try {
        await this.commit({ type: 'LoopModeChanged', mode, model: cloneModel(model) }, { loopId: loop.id });
      } catch {
        throw new ChangeError('commit_failed');
      }
      loop.mode = mode;
      loop.model = model;
    });
  }

  change(loop: LiveLoop, changes: readonly Change[], options: { signal?: AbortSignal } = {}): Promise<void> {
    if (!Array.isArray(changes) || changes.length === 0) return Promise.reject(new ChangeError('no_changes'));
    const batch = [...changes];
    return loop.control.run(async () => {
      this.#checkLoopChange(loop, options.signal);
      let model: ModelRef | null = null;
      let effort: ReasoningEffort | null | undefined;
      for (const c of batch) {
        if (c && c.kind === 'model') model = c.model;
        else if (c && c.kind === 'effort') effort = c.effort;
        else throw new ChangeError('invalid_model', 'unknown change kind');
      }
      if (model !== null && !validModel(model)) throw new ChangeError('invalid_model');
      if (effort !== undefined && (effort === null || !REASONING_EFFORTS.includes(effort))) throw new ChangeError('invalid_effort');
      const next: ModelRef = cloneModel(model ?? loop.model);
      if (effort !== undefined) next.effort = effort;
      if (options.signal?.aborted) throw new ChangeError('aborted');
      try {
        await this.commit({ type: 'LoopInferenceChanged', model: cloneModel(next) }, { loopId: loop.id });
      } catch {
        throw new ChangeError('commit_failed');
      }
      loop.model = next;
    });
  }

  // ---------------------------------------------------------------- active selection (4.4)

  setActiveLoop(id: LoopId, options: { signal?: AbortSignal } = {}): Promise<void> {
    return this.#selection.run(async () => {
      if (this.#faulted) throw new SessionError('faulted');
      const loop = this.#loops.get(id);
      if (!loop) throw new SessionError('loop_not_found', `no loop ${String(id)}`);
      if (this.#closing) throw new SessionError('closing');
      if (loop.state === 'exited') throw new SessionError('loop_exited');
      if (this.#active === id) return;
      if (options.signal?.aborted) throw new SessionError('aborted');
      try {
        await this.commit({ type: 'ActiveLoopChanged', previousLoopId: this.#active, activeLoopId: id });
      } catch {
        throw new SessionError('faulted', 'the ActiveLoopChanged event could not be committed');
      }
      this.#active = id;
    });
  }

  // ---------------------------------------------------------------- input (4.5)

  submit(input: LoopInput): Promise<CommandId> {
    const id = this.#active;
    if (!id) return Promise.reject(new SessionError('loop_not_found', 'there is no active loop'));
    return this.submitToLoop(id, input);
  }

  async submitToLoop(id: LoopId, input: LoopInput): Promise<CommandId> {
    return this.#admit(id, input, 'user');
  }

  async #admit(id: LoopId, input: LoopInput, agency: 'user' | 'machine', cause?: { commandId?: CommandId; loopId?: LoopId }): Promise<CommandId> {
    if (this.#faulted) throw new SessionError('faulted');
    const loop = this.#loops.get(id);
    if (!loop) throw new SessionError('loop_not_found', `no loop ${String(id)}`);
    if (this.#closing || loop.state === 'closing') throw new SessionError('closing');
    if (loop.state === 'exited') throw new SessionError('loop_exited');
    if (!input || typeof input.text !== 'string' || input.text.trim() === '') throw new TypeError('input.text must be a non-empty string');
    const queued: QueuedInput = { commandId: newCommandId(), text: input.text, agency };
    if (input.signal) queued.signal = input.signal;
    if (input.regime) queued.regime = input.regime;
    if (cause) queued.cause = cause;
    try {
      return await loop.admit(queued);
    } catch (error) {
      if (error instanceof CommitFailed) throw new SessionError('faulted', error.message);
      throw error;
    }
  }

  async cancelQueued(id: LoopId, commandId: CommandId): Promise<boolean> {
    const loop = this.#loops.get(id);
    if (!loop) return false;
    const i = loop.queue.findIndex((q) => q.commandId === commandId);
    if (i < 0) return false;
    const [q] = loop.queue.splice(i, 1);
    await this.commit({ type: 'InputCancelled', commandId, reason: 'cancelled' }, { loopId: id, cause: q!.cause, agency: q!.agency }).catch(() => undefined);
    return true;
  }

  // ---------------------------------------------------------------- structure (4.9)

  #supervisorFor(loopId: LoopId, parent: LiveLoop | null, definition: string): Supervisor {
    const s = this.#supervisor;
    return typeof s === 'function' ? s({ loopId, parentLoopId: parent?.id ?? null, definition }) : s;
  }

  /** Registers a loop under the selection lock, so no loop is registered after shutdown's snapshot. */
  registerLoop(definitionName: string, parent: LiveLoop | null, options: { mode?: ModeName; cause?: { commandId?: CommandId; loopId?: LoopId } } = {}): Promise<LiveLoop> {
    return this.#selection.run(async () => {
      if (this.#faulted) throw new SessionError('faulted');
      if (this.#closing) throw new SessionError('closing');
      const definition = this.#definitions.get(definitionName);
      if (!definition) throw new SessionError('loop_not_found', `no loop definition ${definitionName}`);
      const mode = options.mode ?? definition.initialMode ?? 'sop';
      if (!this.modeSpec(definition, mode)) throw new ChangeError('invalid_mode', `unknown mode ${mode}`, mode);
      const id = newLoopId();
      const loop = new LiveLoop(this, id, definition, parent, mode);
      const context: LoopBuildContext = {
        loopId: id,
        parentLoopId: parent?.id ?? null,
        registrySignal: this.signal,
        supervisor: this.#supervisorFor(id, parent, definition.name),
        projectRoot: this.#projectRoot,
      };
      if (definition.delegates && definition.delegates.length > 0) {
        context.delegate = (name, text, signal) => this.runDelegate(loop, name, text, signal);
      }
      loop.build(context);
      this.#loops.set(id, loop);
      try {
        await this.commit(
          { type: 'LoopStarted', parentLoopId: parent?.id ?? null, name: definition.name, displayName: loop.displayName, mode, model: cloneModel(loop.model) },
          { loopId: id, ...(options.cause ? { cause: options.cause } : {}) },
        );
      } catch (error) {
        this.#loops.delete(id);
        throw error instanceof CommitFailed ? new SessionError('faulted', error.message) : error;
      }
      return loop;
    });
  }

  async newLoop(definition: string, options: { mode?: ModeName } = {}): Promise<LoopId> {
    const loop = await this.registerLoop(definition, null, options);
    return loop.id;
  }

  /** Runs work in a new child loop and returns its answer (4.9). */
  async runDelegate(parent: LiveLoop, definitionName: string, text: string, signal: AbortSignal): Promise<string> {
    if (this.#faulted) throw new SessionError('faulted');
    if (this.#closing) throw new SessionError('closing');
    if (parent.marks.size > 0) throw new SessionError('delegation_blocked', 'the parent loop is being interrupted');
    if (!(parent.definition.delegates ?? []).includes(definitionName)) throw new SessionError('loop_not_found', `${parent.definition.name} may not delegate to ${definitionName}`);
    if (parent.depth() + 1 >= this.#maxDepth) throw new SessionError('depth_exceeded', `delegation depth would reach ${this.#maxDepth}`);
    if (this.#spawned >= this.#maxChildren) throw new SessionError('quota_exceeded', `${this.#maxChildren} child loops were already spawned`);
    this.#spawned++;
    const parentCommand = parent.current?.commandId;
    let child: LiveLoop;
    try {
      child = await this.registerLoop(definitionName, parent, { cause: { loopId: parent.id, ...(parentCommand ? { commandId: parentCommand } : {}) } });
    } catch (error) {
      this.#spawned--;
      throw error;
    }
    const subscription = this.subscribe({ loops: new Set([child.id]), types: new Set(['TurnSettled']) });
    const onAbort = () => void this.interruptSubtree(child, { reason: interruptReason(signal.reason) });
    try {
      const commandId = await this.#admit(child.id, { text }, 'machine', { loopId: parent.id, ...(parentCommand ? { commandId: parentCommand } : {}) });
      signal.addEventListener('abort', onAbort, { once: true });
      if (signal.aborted) onAbort();
      for await (const event of subscription) {
        if (event.type !== 'TurnSettled' || event.commandId !== commandId) continue;
        const outcome = event.outcome;
        if (outcome.kind === 'interrupted') throw new DelegationError('interrupted', outcome.message);
        if (outcome.kind === 'error') throw new DelegationError('error', outcome.message);
        const result = outcome.kind === 'sop' ? (outcome.fellBackToLoop ?? outcome.result) : outcome.result;
        if (result.kind === CANNOT_COMPLETE) throw new DelegationError(CANNOT_COMPLETE, outcomeAnswer(outcome));
        if (result.kind === 'failed' || result.kind === 'limit' || result.kind === 'tool_failure') throw new DelegationError('failed', outcomeAnswer(outcome));
        return outcomeAnswer(outcome);
      }
      throw new DelegationError('error', 'the child loop closed before its turn settled');
    } finally {
      signal.removeEventListener('abort', onAbort);
      subscription.close();
    }
  }

  // ---------------------------------------------------------------- interruption (4.7)

  /** Marks every target, then interrupts them concurrently; true when a running turn was cancelled. */
  async #interruptLoops(targets: LiveLoop[], reason: string): Promise<boolean> {
    const barrier = new Barrier(targets);
    for (const t of targets) t.marks.add(barrier);
    const results = await Promise.all(targets.map(async (t) => t.abortTurn(reason)));
    const cancelled = targets.filter((_t, i) => results[i]);
    if (cancelled.length === 0) {
      for (const t of targets) t.marks.delete(barrier);
      return false;
    }
    barrier.pending = new Set(cancelled);
    return true;
  }

  async interruptSubtree(root: LiveLoop, options: { signal?: AbortSignal; reason?: string } = {}): Promise<void> {
    const targets: LiveLoop[] = [];
    const queue = [root];
    while (queue.length > 0) {
      const l = queue.shift()!;
      if (l.state !== 'exited') targets.push(l);
      for (const c of this.#loops.values()) if (c.parent === l) queue.push(c);
    }
    await this.#interruptLoops(targets, options.reason ?? 'user');
  }

  async interrupt(options: { signal?: AbortSignal; reason?: string } = {}): Promise<boolean> {
    const targets = [...this.#loops.values()].filter((l) => l.state !== 'exited');
    return this.#interruptLoops(targets, options.reason ?? 'user');
  }

  // ---------------------------------------------------------------- shutdown (4.10)

  shutdown(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (!this.#shutdown) this.#shutdown = this.#teardown().finally(() => (this.#shutdownSettled = true));
    const mine = this.#shutdown;
    return mine.then(() => {
      if (options.signal?.aborted) throw new SessionError('aborted', 'shutdown finished after the caller gave up');
    });
  }

  async #teardown(): Promise<void> {
    const snapshot = await this.#selection.run(() => {
      this.#closing = true;
      return [...this.#loops.values()];
    });
    const causes: unknown[] = [];
    const results = await Promise.allSettled(snapshot.filter((l) => l.state !== 'exited').map((l) => l.shutdown(this.#drainMs)));
    for (const r of results) if (r.status === 'rejected') causes.push(r.reason);
    try {
      await this.commit({ type: 'SessionStopped' });
    } catch (error) {
      causes.push(error);
    }
    this.#registrySignal.abort('shutdown');
    if (causes.length > 0) throw new ShutdownError(causes);
  }

  dispose(): void {
    if (!this.#shutdownSettled) throw new Error('dispose() is allowed only after shutdown() settled');
    if (this.#disposed) return;
    this.#disposed = true;
    this.#loops.clear();
    this.#active = null;
    for (const s of [...this.#subscriptions]) s.close();
    this.#observers.clear();
  }

  // ---------------------------------------------------------------- construction

  async start(init: RegistryInit, signal?: AbortSignal): Promise<void> {
    if (!init.roots.includes(init.activeRoot)) throw new TypeError(`activeRoot ${init.activeRoot} is not one of the roots`);
    let active: LoopId | null = null;
    try {
      for (const name of init.roots) {
        if (signal?.aborted) throw new SessionError('aborted');
        const loop = await this.registerLoop(name, null);
        if (name === init.activeRoot && active === null) active = loop.id;
      }
      if (signal?.aborted) throw new SessionError('aborted');
    } catch (error) {
      await this.shutdown().catch(() => undefined);
      throw error;
    }
    this.#active = active;
  }
}

function interruptReason(reason: unknown): string {
  return typeof reason === 'string' && reason.trim() !== '' ? reason : 'user';
}

/** Builds a registry: one LoopStarted per root, then the active root selected (no event for it). */
export async function createSessionRegistry(init: RegistryInit, options: { signal?: AbortSignal } = {}): Promise<SessionController & { sessionsOf(id: LoopId): { sop: SopSession; loop: LoopSession | null } | undefined }> {
  const registry = new Registry(init);
  await registry.start(init, options.signal);
  return registry;
}
