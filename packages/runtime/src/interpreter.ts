/**
 * The plan interpreter (sections 6 to 8): a variable table kept across updates, updates applied
 * all-or-nothing after validation, the invalidation pass and propagation rules that decide what
 * re-runs, a dataflow scheduler, and the english generate-run-revise loop. It never starts a plan
 * that has errors, and it never imports anything from an editor.
 */
import { types } from 'node:util';
import {
  ASSIGN, CANNOT_COMPLETE, CommandSurface, FINAL_ANSWER, analyzePlan, isEnglishSource, isFinalCommand, parsePlan, signatureOf, type Analysis, type Argument, type Declaration,
} from '@lightsop/core';
import { cancelHeuristic as builtinHeuristic } from './cancel-heuristic';
import { buildGenerationPrompt, finalCommandsAvailable, stripFences, type GenerationRequest } from './english/prompt';
import { ConfigurationError, PlanGenerationError, PlanValidationError } from './errors';
import { isLlmAgent, type LlmAgent, type PromptOptions } from './llm/agent';
import { TokenBudgetExceededError } from './llm/budget';
import { ensureMonitor, type ExecutionMonitor } from './monitor';
import { CommandResponder } from './responder';
import { RankQueue, rankOrder } from './scheduler';
import { type CancelHeuristic, type CommandPayload, type CommandRegistry, type Responder } from './skills/registry';
import {
  createValue, errorText, failValue, normalizeStatus, propagatedCanceledValue, publicForm, rootCanceledValue, textOf, undefinedValue,
  type RootCause, type Status, type Value,
} from './values';

export interface Failure {
  variable: string;
  reason: unknown;
}

export interface PlanGeneratedEvent {
  code: string;
  previousCode: string | null;
  reason: 'initial' | 'failure';
  attempt: number;
}

/** Progress events for editors and the CLI (6.12). */
export type RunEvent =
  | { type: 'run-started' }
  | {
      type: 'command-started'; variable: string; command: string; raw: string; lineNumber: number;
      /** The payload's arguments, the declaration's dependencies and comment (run records). */
      args: readonly unknown[]; dependencies: readonly string[]; comment: string;
    }
  | {
      type: 'variable-settled'; variable: string; status: Status; value: string; lineNumber: number;
      /** The value record's data and, for a cancellation, its root cause (run records). */
      data: unknown; rootCause: RootCause | null;
    }
  | { type: 'run-finished'; aborted: boolean; halted: boolean }
  | { type: 'plan-generated'; code: string; reason: 'initial' | 'failure'; attempt: number };

export interface InterpreterOptions {
  /** contract.md form (a); `toCommandRegistry` adapts a skills map. */
  registry: CommandRegistry;
  /** Creates the implicit variable `input` (6.11); `undefined` means no input. */
  input?: unknown;
  onFail?: (failures: Failure[]) => void;
  executionMonitor?: ExecutionMonitor;
  autoCancel?: boolean;
  cancelHeuristic?: CancelHeuristic;
  llmAgent?: LlmAgent | null;
  maxLlmaRounds?: number;
  generateOnly?: boolean;
  onPlanGenerated?: (event: PlanGeneratedEvent) => void;
  model?: string;
  tags?: string[];
  reasoningEffort?: string;
  llmInvocationContext?: { userPrompt: string; history?: unknown[] };
  /** Aborts every run of this interpreter (6.12). */
  signal?: AbortSignal;
  /** Most commands running at once; unbounded by default. */
  concurrency?: number;
  onEvent?: (event: RunEvent) => void;
  /**
   * Checked before each command starts: while it returns true, no further command starts and the
   * run ends once the commands in flight have settled (a session pauses on a command that waits
   * for the user, sessions.md 2.5). Commands that never started keep their `undefined` reasons.
   */
  holdNewCommands?: () => boolean;
  /**
   * Awaited just before a ready declaration starts (a debugger pauses here at breakpoints and
   * between steps). The declaration counts as running meanwhile; when the run is aborted during
   * the wait, it does not start and keeps its `undefined` value.
   */
  beforeCommand?: (step: { variable: string; command: string; lineNumber: number }, signal: AbortSignal | null) => Promise<void> | void;
}

export interface UpdateOptions {
  /** Run only these declarations and their ancestors ("run up to here"). */
  targets?: readonly string[];
  /** Aborts this update. */
  signal?: AbortSignal;
  /**
   * The host's own `analyzePlan` of this very source, so that it is not parsed and validated a
   * second time. Used only when it is of the same string and was made as the interpreter would
   * make it (`inputDeclared` is whether this interpreter has an input, no command surface); any
   * other analysis is ignored and the source analysed again. Its errors reject the update as usual.
   */
  analysis?: Analysis;
}

export interface UpdateResult {
  /** True when a signal stopped the run; values settled so far are kept. */
  aborted: boolean;
  /** `raw` of every command started by this update, replans included, in start order. */
  commands: string[];
  /** Variables whose status is `fail`, in table order, with their public form. */
  failures: Failure[];
}

export interface VariableSnapshot {
  name: string;
  status: Status;
  /** Public form (5.3). */
  value: unknown;
  raw: string;
  data: unknown;
  /** 0 for the implicit input. */
  lineNumber: number;
}

/** Synchronous scheduling rounds before the scheduler yields to the event loop. */
const YIELD_EVERY = 256;

/** The value of an entry that `apply` has not yet given one. */
const UNSET: Value = undefinedValue('', 'internal');

/** What `callCommand` returns when the monitor halted the run before the command was called. */
const NOT_STARTED: unique symbol = Symbol('not started');

/** The arrays of an entry that `apply` and `rebuildGraph` have not yet filled (never written to). */
const NONE: never[] = Object.freeze([]) as unknown as never[];

/**
 * One row of the variable table. The fields a run reads for every command come first, so that
 * they share the object's first cache lines (V8 lays fields out in the order they are defined).
 */
class Entry {
  readonly name: string;
  /** Replaced before anything reads it: every new entry is reset (or, for `input`, forced). */
  value: Value = UNSET;
  command = '';
  /**
   * The id of this entry's execution in flight, 0 when none. Ids grow with each start, so the
   * entries in flight ordered by id are the run's executions in start order (`abandonRunning`).
   * Once abandoned, the entry's id is no longer that execution's, and whatever the command
   * delivers later is ignored: the entry already holds the value the host gave it.
   */
  flight = 0;
  /**
   * Position in start order: level, then name (`rankOrder`); the scheduler's arrays are indexed
   * by it.
   */
  rank = 0;
  lineNumber = 0;
  comment = '';
  /** `commentLines.length`, read when the command starts (an empty list is not touched). */
  commentCount = 0;
  commentLines: readonly string[] = NONE;
  dependents: Entry[] = NONE;
  decl: Declaration | null = null;
  args: readonly Argument[] = NONE;
  dependencies: readonly string[] = NONE;
  signature: string | null = null;
  deps: Entry[] = NONE;
  level = 0;
  /** The level `rank` was computed for (-1: never ranked). */
  rankedLevel = -1;
  /** Scratch counter for the topological pass. */
  pending = 0;
  /** The `Interpreter.applies` stamp of the last version that declared it. */
  applied = 0;
  constructor(name: string) {
    this.name = name;
  }
}

/** What one update is doing: its signal, targets and log. */
interface RunContext {
  readonly signal: AbortSignal | null;
  readonly allowed: Set<Entry> | null;
  readonly commands: string[];
  halt: Error | null;
  aborted: boolean;
  /**
   * Whether a canceled value may exist. During execution, undefined-propagation can only change
   * canceled entries: after the invalidation pass every descendant of a non-success entry is
   * undefined or canceled, and nothing below a running command has run. Without any canceled
   * value the walk is a no-op and is skipped, which keeps a chain linear instead of quadratic.
   */
  canceledSeen: boolean;
  /** A host replaced a value (`setValue`) during this run: readiness counters may be off. */
  hostChanged: boolean;
}

/** The state of one execution phase (`Interpreter.execute`): what the scheduler's methods share. */
class Execution {
  running = 0;
  flushPending = false;
  /** The pending `setImmediate` of `flushNow`, cleared when the run ends (it holds the whole run). */
  immediate: NodeJS.Immediate | null = null;
  /** Flushes done at once in a row, without yielding to the event loop. */
  syncRounds = 0;
  done = false;
  resolve: () => void = () => undefined;
  /** `flush` of this execution, for `setImmediate`. */
  flushNow: () => void = () => undefined;
  onAbort: (() => void) | null = null;
  constructor(
    readonly ctx: RunContext,
    readonly queue: RankQueue<Entry>,
    /** By rank: how many dependencies are not yet successes. */
    readonly waiting: Int32Array,
    readonly allowedMask: Uint8Array | null,
    readonly limit: number,
    /** Whether `assign` is the built-in (the registry does not list it). */
    readonly builtinAssign: boolean,
    readonly hold: (() => boolean) | undefined,
    /**
     * By rank: the data of each entry that is a success (set when the run starts and when
     * a command succeeds), what a dependent's arguments read. Exact until a host replaces a value
     * (`RunContext.hostChanged`); from then on arguments are read from the entries.
     */
    readonly dataOf: unknown[],
  ) {}
}

function anySignal(signals: (AbortSignal | undefined | null)[]): AbortSignal | null {
  const list = signals.filter((s): s is AbortSignal => Boolean(s));
  if (list.length === 0) return null;
  if (list.length === 1) return list[0]!;
  return AbortSignal.any(list);
}

/** The error itself when it is one, else an Error carrying its text; never throws. */
function asError(error: unknown): Error {
  try {
    if (error instanceof Error) return error;
  } catch {
    // `instanceof` on a hostile Proxy throws: treat it as any other non-Error value.
  }
  return new Error(errorText(error));
}

export class Interpreter {
  private readonly table = new Map<string, Entry>();
  private readonly registry: CommandRegistry;
  private readonly monitor: ExecutionMonitor;
  private readonly options: InterpreterOptions;
  private autoCancel: boolean;
  private heuristic: CancelHeuristic;
  private queue: Promise<unknown> = Promise.resolve();
  private source = '';
  private lastRunState: { aborted: boolean; halted: boolean } | null = null;
  /** The run executing now and its scheduler's completion callback (updates are serialised). */
  private active: Execution | null = null;
  /** Settles when every queued update, replans included, has settled. */
  ready: Promise<unknown> = Promise.resolve();
  /** The entries in start order (index = rank), rebuilt with the graph. */
  private byRank: Entry[] = [];
  /** By rank: where each entry's dependents begin in `dependentList` (n + 1 items). */
  private dependentStart = new Int32Array(1);
  /** The ranks of every entry's dependents, entry after entry in rank order. */
  private dependentList = new Int32Array(0);
  /** By rank: where each entry's arguments begin in `argDep` and `argLiteral` (n + 1 items). */
  private argStart = new Int32Array(1);
  /** Per argument: the rank of the entry a reference names, -1 for a literal. */
  private argDep = new Int32Array(0);
  /** Per argument: a literal's value (undefined for a reference). */
  private argLiteral: unknown[] = [];
  /** Ids of command executions (`Entry.flight`). */
  private flights = 0;
  /** Versions applied (`Entry.applied`). */
  private applies = 0;

  constructor(options: InterpreterOptions) {
    const registry = options.registry as Partial<CommandRegistry> | null | undefined;
    if (!registry || typeof registry !== 'object') throw new TypeError('commandsRegistry must be an object');
    if (typeof registry.executeCommand !== 'function') throw new TypeError('commandsRegistry.executeCommand must be a function');
    if (typeof registry.listCommands !== 'function') throw new TypeError('commandsRegistry.listCommands must be a function');
    if (options.llmAgent !== undefined && options.llmAgent !== null && !isLlmAgent(options.llmAgent)) {
      throw new TypeError('LLMAgent must provide executePrompt(promptText)');
    }
    this.registry = options.registry;
    this.options = options;
    this.monitor = ensureMonitor(options.executionMonitor);
    this.autoCancel = options.autoCancel ?? this.registry.autoCancel === true;
    this.heuristic = options.cancelHeuristic ?? (typeof this.registry.cancelHeuristic === 'function' ? this.registry.cancelHeuristic : builtinHeuristic);
  }

  /** The source of the plan that was last applied (for english scripts: the generated plan). */
  get currentSourceCode(): string {
    return this.source;
  }

  /** Whether the last run was aborted or halted, or null before the first run. */
  get lastRun(): { aborted: boolean; halted: boolean } | null {
    return this.lastRunState;
  }

  get executionMonitor(): ExecutionMonitor {
    return this.monitor;
  }

  /** Turns automatic cancellation on or off, optionally with another heuristic (6.8). */
  enableAutoCancel(flag = true, heuristic?: CancelHeuristic | null): void {
    this.autoCancel = Boolean(flag);
    if (typeof heuristic === 'function') this.heuristic = heuristic;
  }

  /** The public form of a variable's value, or `undefined` for an unknown name (5.3). */
  getVarValue(name: string): unknown {
    const entry = this.table.get(name);
    return entry ? publicForm(entry.value) : undefined;
  }

  /** The value record of a variable (a copy). */
  getValue(name: string): Value | undefined {
    const entry = this.table.get(name);
    return entry ? { ...entry.value } : undefined;
  }

  /** Every variable in table order, the implicit input included. */
  snapshot(): VariableSnapshot[] {
    return [...this.table.values()].map((e) => ({
      name: e.name,
      status: e.value.status,
      value: publicForm(e.value),
      raw: e.value.raw,
      data: e.value.data,
      lineNumber: e.lineNumber,
    }));
  }

  /** Names in table order, with the declaration fields of each entry. */
  entries(): { name: string; command: string; arguments: readonly Argument[]; dependencies: readonly string[]; dependents: string[]; comment: string; commentLines: readonly string[]; lineNumber: number; declaration: Declaration | null; value: Value }[] {
    return [...this.table.values()].map((e) => ({
      name: e.name, command: e.command, arguments: e.args, dependencies: e.dependencies, dependents: e.dependents.map((d) => d.name),
      comment: e.comment, commentLines: e.commentLines, lineNumber: e.lineNumber, declaration: e.decl, value: e.value,
    }));
  }

  /**
   * Applies a new version of the plan and runs it (6.2). Updates are serialised; a rejected
   * update changes nothing and does not block later ones.
   */
  updateCode(source: string, options: UpdateOptions = {}): Promise<UpdateResult> {
    if (typeof source !== 'string') return Promise.reject(new TypeError('LightSOPLang code must be a string'));
    const task = () => this.applyUpdate(source, options);
    const result = this.queue.then(task, task);
    this.queue = result.catch(() => undefined);
    this.ready = result;
    return result;
  }

  /**
   * Runs the current plan again without applying an update (a run, 6.3): declarations whose
   * dependencies a host replaced with `setValue` are stale and run, and so do their dependents.
   * Nothing is reset (6.2 step 3 belongs to updates). Queued like an update.
   */
  runAgain(options: UpdateOptions = {}): Promise<UpdateResult> {
    const task = () => this.runAndSettle(this.newContext(options), options, null);
    const result = this.queue.then(task, task);
    this.queue = result.catch(() => undefined);
    this.ready = result;
    return result;
  }

  /**
   * Replaces a variable's value from outside (a host): a status and data get a fresh timestamp;
   * a whole value record is kept as given (its status normalised, a missing timestamp stamped).
   */
  setValue(name: string, status: Status | Value, data?: unknown): void {
    const entry = this.table.get(name);
    if (!entry) throw new Error(`No variable ${name}`);
    if (this.active) this.active.ctx.hostChanged = true;
    if (typeof status === 'object' && status !== null) {
      const normalized = normalizeStatus(status.status);
      if (!normalized) throw new TypeError(`Unsupported status: ${textOf(status.status)}`);
      const value = { ...status, status: normalized };
      if (!Number.isFinite(value.timestamp)) value.timestamp = createValue(normalized, '', 'host').timestamp;
      entry.value = value;
      return;
    }
    entry.value = createValue(status, data, 'host');
  }

  /**
   * Stops waiting for the commands of the current run that are still in flight. Each one's
   * variable gets `status` with `reason` now (`fail`: the reason itself, reported to the monitor;
   * `canceled`: a root cancellation `command C canceled (reason)`), its dependents propagate as
   * usual, and whatever the command delivers later is ignored, so a late result never becomes a
   * success. The run then goes on as if those commands had answered: when it was aborted nothing
   * new starts and the update settles. Hosts call this when commands ignore the abort signal past
   * a grace period, or when nothing is left in the process that could ever settle them. Returns
   * the variables abandoned, in start order; nothing when no run is executing.
   */
  abandonRunning(status: 'fail' | 'canceled', reason: string): string[] {
    const active = this.active;
    if (!active) return [];
    const ctx = active.ctx;
    // A copy, in start order: settling one flight may start new commands, and those are not
    // abandoned. Every execution in flight belongs to the active run (updates are serialised).
    const flights: Entry[] = [];
    for (const e of this.table.values()) if (e.flight !== 0) flights.push(e);
    flights.sort((a, b) => a.flight - b.flight);
    const names: string[] = [];
    for (const e of flights) {
      if (e.flight === 0) continue;
      e.flight = 0;
      names.push(e.name);
      if (status === 'fail') {
        e.value = failValue(reason, 'host');
        this.settled(e);
        if (this.report(e, reason, ctx)) this.propagateUndefined([e], ctx);
      } else {
        e.value = rootCanceledValue(e.name, reason, 'host', { command: e.command });
        ctx.canceledSeen = true;
        this.settled(e);
        this.propagateCanceled([e], ctx);
      }
      this.settle(active, e);
    }
    return names;
  }

  // ---------------------------------------------------------------- updates

  private newContext(options: UpdateOptions): RunContext {
    return {
      signal: anySignal([this.options.signal, options.signal]),
      allowed: null,
      commands: [],
      halt: null,
      aborted: false,
      canceledSeen: true,
      hostChanged: false,
    };
  }

  private async applyUpdate(source: string, options: UpdateOptions): Promise<UpdateResult> {
    const ctx = this.newContext(options);
    if (isEnglishSource(source)) return this.englishUpdate(source, ctx, options);
    this.validateAndApply(source, undefined, options.analysis);
    return this.runAndSettle(ctx, options, null);
  }

  private inputSupplied(): boolean {
    return this.options.input !== undefined;
  }

  /**
   * Validates a plan (sections 3 and 4) and applies it to the table, or throws and changes nothing.
   * With `commands`, a command outside them is an `unknown-command` error (4.4).
   */
  private validateAndApply(source: string, commands?: CommandSurface, handed?: Analysis): void {
    const inputDeclared = this.inputSupplied();
    const analysis = commands === undefined && this.sameAnalysis(handed, source, inputDeclared) ? handed! : analyzePlan(source, { inputDeclared, commands });
    const errors = analysis.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) throw new PlanValidationError(errors, source);
    this.apply(analysis.plan.declarations);
    this.source = source;
  }

  /**
   * Whether a host's analysis is the one `validateAndApply` would make: of this same source, with
   * the same `inputDeclared` and without a command surface (whose diagnostics differ).
   */
  private sameAnalysis(handed: Analysis | undefined, source: string, inputDeclared: boolean): boolean {
    return typeof handed === 'object' && handed !== null && handed.source === source && handed.inputDeclared === inputDeclared && handed.commandsChecked === false;
  }

  /** Steps 3 to 8 of 6.2. */
  private apply(declarations: readonly Declaration[]): void {
    const table = this.table;
    // Entries declared by this version carry its stamp (one lookup per declaration, no set of names).
    const stamp = ++this.applies;
    let declared = 0;
    const reset: Entry[] = [];
    for (const d of declarations) {
      let entry = table.get(d.name);
      if (!entry) {
        entry = new Entry(d.name);
        table.set(d.name, entry);
      } else if (entry.applied === stamp) {
        continue;
      }
      entry.applied = stamp;
      declared++;
      const signature = signatureOf(d);
      if (entry.signature !== signature || isFinalCommand(d.command!.name) || d.name === 'lastAnswer') reset.push(entry);
      entry.signature = signature;
      entry.decl = d;
      entry.command = d.command!.name;
      entry.args = d.arguments;
      entry.dependencies = d.dependencies;
      entry.lineNumber = d.lineNumber;
      entry.comment = d.comment;
      entry.commentLines = d.commentLines;
      entry.commentCount = d.commentLines.length;
    }
    const input = this.inputSupplied();
    if (table.size > declared) {
      const gone: string[] = [];
      for (const [name, entry] of table) {
        if (entry.applied !== stamp && !(name === 'input' && input)) gone.push(name);
      }
      for (const name of gone) table.delete(name);
    }
    const inputDeclared = table.get('input')?.applied === stamp;
    if (input && !inputDeclared) {
      let entry = table.get('input');
      if (!entry) {
        entry = new Entry('input');
        entry.commentLines = [];
        entry.commentCount = 0;
        table.set('input', entry);
      }
      entry.decl = null;
      entry.signature = null;
      entry.command = '';
      entry.args = [];
      entry.dependencies = [];
      entry.lineNumber = 0;
      this.forceInput(entry);
    }
    this.rebuildGraph();
    for (const entry of reset) entry.value = undefinedValue('definition changed', 'definition');
    if (input && inputDeclared) this.forceInput(table.get('input')!);
  }

  private forceInput(entry: Entry): void {
    const input = this.options.input;
    if (entry.value.status !== 'success' || entry.value.data !== input) entry.value = createValue('success', input, 'input');
  }

  /** Dependents in table order, and levels (longest dependency path), without recursion. */
  private rebuildGraph(): void {
    // New arrays each time (an update re-links every entry), filled by push so that they stay
    // packed; the old ones are garbage.
    for (const e of this.table.values()) {
      e.dependents = [];
      e.level = 0;
    }
    for (const e of this.table.values()) {
      const names = e.dependencies;
      const deps: Entry[] = [];
      for (let i = 0; i < names.length; i++) {
        const dep = this.table.get(names[i]!)!;
        deps.push(dep);
        dep.dependents.push(e);
      }
      e.deps = deps;
    }
    const order: Entry[] = [];
    for (const e of this.table.values()) {
      e.pending = e.deps.length;
      if (e.pending === 0) order.push(e);
    }
    for (let i = 0; i < order.length; i++) {
      const e = order[i]!;
      for (const d of e.dependents) {
        if (d.level < e.level + 1) d.level = e.level + 1;
        if (--d.pending === 0) order.push(d);
      }
    }
    for (const e of this.table.values()) {
      // Only a cycle would leave an entry out of the order, and plans with cycles are never applied.
      if (e.pending > 0) order.push(e);
    }
    // The start order is sorted again only when an entry came, went or changed level.
    let stale = this.byRank.length !== order.length;
    for (let i = 0; !stale && i < order.length; i++) {
      const e = order[i]!;
      stale = this.byRank[e.rank] !== e || e.rankedLevel !== e.level;
    }
    if (stale) {
      this.byRank = rankOrder(order);
      for (const e of order) e.rankedLevel = e.level;
    }
    // What the scheduler reads when a command starts or settles, in arrays by rank (entries start
    // in rank order, so a run walks these arrays mostly forward) rather than in the entries: each
    // entry's dependents (one list, `dependentStart[r]` to `dependentStart[r + 1]`, by rank), and
    // each entry's arguments, found once here so that starting a command reads no syntax node and
    // looks nothing up: for argument k (from `argStart[r]` to `argStart[r + 1]`), the rank of the
    // entry a reference names (`argDep[k]`), or -1 and the literal's value (`argLiteral[k]`).
    const byRank = this.byRank;
    const n = byRank.length;
    const dependentStart = new Int32Array(n + 1);
    const argStart = new Int32Array(n + 1);
    let dependentCount = 0;
    let argCount = 0;
    for (let r = 0; r < n; r++) {
      const e = byRank[r]!;
      dependentStart[r] = dependentCount;
      argStart[r] = argCount;
      dependentCount += e.dependents.length;
      argCount += e.args.length;
    }
    dependentStart[n] = dependentCount;
    argStart[n] = argCount;
    const dependentList = new Int32Array(dependentCount);
    const argDep = new Int32Array(argCount);
    const argLiteral: unknown[] = [];
    let d = 0;
    for (let r = 0; r < n; r++) {
      const e = byRank[r]!;
      for (const dependent of e.dependents) dependentList[d++] = dependent.rank;
      const names = e.dependencies;
      let k = argStart[r]!;
      for (const a of e.args) {
        let dep = -1;
        if (a.kind !== 'literal') {
          // A reference names one of the (few) dependencies.
          for (let j = 0; j < names.length; j++) {
            if (names[j] === a.name) {
              dep = e.deps[j]!.rank;
              break;
            }
          }
          if (dep < 0) dep = this.table.get(a.name)!.rank;
        }
        argDep[k++] = dep;
        argLiteral.push(a.kind === 'literal' ? a.value : undefined);
      }
    }
    this.dependentStart = dependentStart;
    this.dependentList = dependentList;
    this.argStart = argStart;
    this.argDep = argDep;
    this.argLiteral = argLiteral;
  }

  // ---------------------------------------------------------------- runs

  private async runAndSettle(ctx: RunContext, options: UpdateOptions, english: EnglishState | null): Promise<UpdateResult> {
    await this.run(ctx, options);
    if (ctx.halt) throw ctx.halt;
    if (!ctx.aborted && english && (await this.revise(ctx, options, english))) {
      return this.runAndSettle(ctx, options, english);
    }
    const failures = this.failures();
    if (!ctx.aborted && failures.length > 0 && this.options.onFail) {
      try {
        this.options.onFail(failures);
      } catch {
        // An exception thrown by onFail is swallowed (6.10).
      }
    }
    return { aborted: ctx.aborted, commands: ctx.commands, failures };
  }

  private failures(): Failure[] {
    const out: Failure[] = [];
    for (const e of this.table.values()) if (e.value.status === 'fail') out.push({ variable: e.name, reason: publicForm(e.value) });
    return out;
  }

  /** One run (6.3): the invalidation pass, then execution. */
  private async run(ctx: RunContext, options: UpdateOptions): Promise<void> {
    if (this.table.size === 0) return;
    (ctx as { allowed: Set<Entry> | null }).allowed = this.allowedEntries(options.targets);
    if (this.options.onEvent) this.emit({ type: 'run-started' });
    this.invalidate();
    await this.execute(ctx);
    this.lastRunState = { aborted: ctx.aborted, halted: ctx.halt !== null };
    this.emit({ type: 'run-finished', aborted: ctx.aborted, halted: ctx.halt !== null });
  }

  private allowedEntries(targets: readonly string[] | undefined): Set<Entry> | null {
    if (!targets) return null;
    const allowed = new Set<Entry>();
    const stack: Entry[] = [];
    for (const t of targets) {
      const e = this.table.get(t);
      if (e) stack.push(e);
    }
    while (stack.length > 0) {
      const e = stack.pop()!;
      if (allowed.has(e)) continue;
      allowed.add(e);
      for (const d of e.deps) stack.push(d);
    }
    return allowed;
  }

  /** The invalidation pass (6.3 step 2), in table order, then propagation from its seeds. */
  private invalidate(): void {
    const undefinedSeeds: Entry[] = [];
    const cancelSeeds: Entry[] = [];
    for (const v of this.table.values()) {
      let canceled: Entry | undefined;
      for (const d of v.deps) {
        if (d.value.status === 'canceled') {
          canceled = d;
          break;
        }
      }
      if (canceled) {
        v.value = propagatedCanceledValue(rootCauseOf(canceled), canceled.name);
        cancelSeeds.push(v);
        continue;
      }
      if (v.value.status === 'canceled') {
        v.value = undefinedValue('cancellation cleared', 'recovery');
        undefinedSeeds.push(v);
        continue;
      }
      let reason: string | null = null;
      let newest = -Infinity;
      for (const d of v.deps) {
        const status = d.value.status;
        if (status === 'undefined') {
          reason = `waiting for ${d.name}`;
          break;
        }
        if (status === 'fail') {
          reason = `dependency failure ${d.name}`;
          break;
        }
        if (d.value.timestamp > newest) newest = d.value.timestamp;
      }
      if (reason === null && v.deps.length > 0 && !(v.value.timestamp >= newest)) reason = 'stale dependency';
      if (reason !== null && !(v.value.status === 'undefined' && v.value.data === reason)) {
        v.value = undefinedValue(reason, 'dependency');
        undefinedSeeds.push(v);
      }
    }
    this.propagateUndefined(undefinedSeeds);
    this.propagateCanceled(cancelSeeds);
  }

  /** Breadth-first over dependents; every dependent that is not undefined becomes `upstream P` (6.5). */
  private propagateUndefined(seeds: readonly Entry[], ctx?: RunContext): void {
    if ((ctx && !ctx.canceledSeen) || seeds.length === 0) return;
    const visited = new Set<Entry>(seeds);
    const queue = [...seeds];
    for (let i = 0; i < queue.length; i++) {
      const p = queue[i]!;
      for (const d of p.dependents) {
        if (d.value.status !== 'undefined') {
          d.value = undefinedValue(`upstream ${p.name}`, 'propagation');
          if (ctx) this.settled(d);
        }
        if (!visited.has(d)) {
          visited.add(d);
          queue.push(d);
        }
      }
    }
  }

  /** Breadth-first over dependents; each becomes the propagated cancellation of P's root cause via P (6.5). */
  private propagateCanceled(seeds: readonly Entry[], ctx?: RunContext): void {
    if (seeds.length === 0) return;
    const visited = new Set<Entry>(seeds);
    const queue = [...seeds];
    for (let i = 0; i < queue.length; i++) {
      const p = queue[i]!;
      const root = rootCauseOf(p);
      for (const d of p.dependents) {
        d.value = propagatedCanceledValue(root, p.name);
        if (ctx) this.settled(d);
        if (!visited.has(d)) {
          visited.add(d);
          queue.push(d);
        }
      }
    }
  }

  private isReady(e: Entry): boolean {
    if (e.value.status !== 'undefined') return false;
    for (const d of e.deps) if (d.value.status !== 'success') return false;
    return true;
  }

  /**
   * The dataflow scheduler (7.2). Resolves when nothing runs and nothing (allowed) is ready.
   *
   * Per declaration it keeps a counter of the dependencies that are not yet successes, in a typed
   * array: a success decrements its dependents' counters, and a dependent whose counter reaches 0
   * is queued (by rank, `RankQueue`). Whether a queued declaration is still ready is checked again
   * right before it starts. A host that replaces a value during the run (`setValue`) can make a
   * counter wrong; from then on dependents are checked one by one instead, as a counter would.
   *
   * The run's state is one `Execution` object and its steps are methods (`flush`, `settle`,
   * `finish`), not closures made per run: their optimised code is kept from run to run.
   */
  private execute(ctx: RunContext): Promise<void> {
    const allowed = ctx.allowed;
    const x = new Execution(
      ctx,
      new RankQueue<Entry>(this.byRank),
      new Int32Array(this.table.size),
      // Targets: by rank, 1 for the entries this run may start.
      allowed ? new Uint8Array(this.table.size) : null,
      this.options.concurrency && this.options.concurrency > 0 ? this.options.concurrency : Infinity,
      !CommandSurface.fromRegistry(this.registry).has(ASSIGN),
      this.options.holdNewCommands,
      [],
    );
    const { queue, waiting, allowedMask, dataOf } = x;
    let canceled = false;
    for (const e of this.byRank) {
      const value = e.value;
      const status = value.status;
      dataOf.push(status === 'success' ? value.data : undefined);
      if (status === 'canceled') canceled = true;
      if (allowed && !allowed.has(e)) continue;
      if (allowedMask) allowedMask[e.rank] = 1;
      // Counted for every entry: a canceled one may become undefined during the run (6.5).
      let count = 0;
      for (const d of e.deps) if (d.value.status !== 'success') count++;
      waiting[e.rank] = count;
      if (count === 0 && status === 'undefined') queue.push(e);
    }
    ctx.canceledSeen = canceled;
    return new Promise<void>((resolve) => {
      x.resolve = resolve;
      x.flushNow = () => this.flush(x);
      if (ctx.signal) {
        x.onAbort = () => {
          ctx.aborted = true;
          if (x.running === 0) this.finish(x);
        };
        ctx.signal.addEventListener('abort', x.onAbort, { once: true });
      }
      this.active = x;
      this.flush(x);
    });
  }

  private stopped(x: Execution): boolean {
    const ctx = x.ctx;
    if (ctx.halt !== null || ctx.aborted) return true;
    const hold = x.hold;
    return hold !== undefined && hold() === true;
  }

  private finish(x: Execution): void {
    if (x.done) return;
    x.done = true;
    if (x.immediate !== null) {
      clearImmediate(x.immediate);
      x.immediate = null;
    }
    if (this.active === x) this.active = null;
    x.queue.clear();
    if (x.onAbort) x.ctx.signal?.removeEventListener('abort', x.onAbort);
    x.resolve();
  }

  /** Starts every ready declaration, in rank order, while nothing stops it. */
  private flush(x: Execution): void {
    x.flushPending = false;
    // Called at once while a flush is pending: this one does its work, so the pending one (which
    // would hold the run until it fires) goes.
    if (x.immediate !== null) {
      clearImmediate(x.immediate);
      x.immediate = null;
    }
    const { ctx, queue, waiting } = x;
    if (ctx.signal?.aborted) ctx.aborted = true;
    while (!this.stopped(x) && x.running < x.limit && queue.size > 0) {
      const e = queue.pop()!;
      // Exact counters say it without visiting the dependencies again (a host's setValue makes
      // them inexact: then each dependency is checked).
      if (e.flight !== 0 || (ctx.hostChanged ? !this.isReady(e) : waiting[e.rank] !== 0 || e.value.status !== 'undefined')) continue;
      x.running++;
      this.startEntry(e, x);
    }
    if (x.running === 0) this.finish(x);
  }

  /** A command of the run has settled (or was abandoned): count down its dependents, go on. */
  private settle(x: Execution, e: Entry): void {
    x.running--;
    if (e.value.status === 'success') {
      // Counters go down even while nothing may start, so that they stay exact. A dependent
      // whose counter reaches 0 is queued without reading its entry: whether it is still
      // undefined is checked when it is popped, as every start is.
      const push = !this.stopped(x);
      const { queue, allowedMask } = x;
      if (x.ctx.hostChanged) {
        for (const d of e.dependents) {
          if (allowedMask && allowedMask[d.rank] === 0) continue;
          if (push && this.isReady(d)) queue.push(d);
        }
      } else {
        const { waiting } = x;
        const { dependentStart, dependentList } = this;
        const end = dependentStart[e.rank + 1]!;
        for (let k = dependentStart[e.rank]!; k < end; k++) {
          const d = dependentList[k]!;
          if (allowedMask && allowedMask[d] === 0) continue;
          if (--waiting[d]! === 0 && push) queue.pushRank(d);
        }
      }
    }
    if (x.running === 0 && x.syncRounds < YIELD_EVERY) {
      // Nothing else is in flight, so no other completion can be waiting: go on at once.
      x.syncRounds++;
      this.flush(x);
    } else if (!x.flushPending) {
      x.flushPending = true;
      x.syncRounds = 0;
      x.immediate = setImmediate(x.flushNow);
    }
  }

  /**
   * Starts one declaration's command (6.4); its outcome is stored and propagated, then the
   * execution `x` hears of it (`settle`). Whatever the command throws or returns becomes that declaration's value: nothing a
   * command hands back may escape from here, since an escape would end the whole process. When
   * `abandonRunning` has settled the declaration meanwhile, the command's outcome is dropped.
   *
   * This is the scheduler's hot path, so it allocates only what the command receives (payload,
   * arguments, `raw`, responder) and, for a command that returns a native promise, two reactions
   * on it: no async function, no per-command scheduler object. The outcome is processed exactly
   * when `await` would process it (a native promise: in its reaction job; anything else goes
   * through `await` itself), and a synchronous throw at once, as before.
   */
  private startEntry(e: Entry, x: Execution): void {
    if (this.options.beforeCommand) {
      void this.executeEntry(e, x);
      return;
    }
    const flight = ++this.flights;
    e.flight = flight;
    const responder = new CommandResponder(e.name, e.command, this.autoCancel, this.heuristic);
    let returned: unknown;
    try {
      returned = this.callCommand(e, x, flight, responder);
    } catch (error) {
      this.commandThrew(e, x, flight, error);
      return;
    }
    if (returned === NOT_STARTED) return;
    if (isPlainPromise(returned)) {
      void promiseThen.call(
        returned,
        (value: unknown) => this.commandReturned(e, x, flight, responder, value),
        (error: unknown) => this.commandThrew(e, x, flight, error),
      );
    } else {
      void this.awaitCommand(e, x, flight, responder, returned);
    }
  }

  /** `await` on whatever else a command returned (a value, a thenable, a promise of another kind). */
  private async awaitCommand(e: Entry, x: Execution, flight: number, responder: CommandResponder, returned: unknown): Promise<void> {
    let value: unknown;
    try {
      value = await returned;
    } catch (error) {
      this.commandThrew(e, x, flight, error);
      return;
    }
    this.commandReturned(e, x, flight, responder, value);
  }

  /**
   * The slow path of `startEntry`, for hosts with a `beforeCommand` hook: awaits the hook first
   * (a debugger pauses there), then runs the command the same way.
   */
  private async executeEntry(e: Entry, x: Execution): Promise<void> {
    const ctx = x.ctx;
    const flight = ++this.flights;
    e.flight = flight;
    try {
      await this.options.beforeCommand!({ variable: e.name, command: e.command, lineNumber: e.lineNumber }, ctx.signal);
    } catch {
      // A failing hook must not fail the run; the declaration runs as usual.
    }
    if (e.flight !== flight) return;
    if (ctx.signal?.aborted) {
      ctx.aborted = true;
      this.endFlight(e, x, flight);
      return;
    }
    const responder = new CommandResponder(e.name, e.command, this.autoCancel, this.heuristic);
    let value: unknown;
    try {
      const returned = this.callCommand(e, x, flight, responder);
      if (returned === NOT_STARTED) return;
      // Always awaited, the built-in too: a settlement is processed after the current
      // scheduling round, never inside it.
      value = await returned;
    } catch (error) {
      this.commandThrew(e, x, flight, error);
      return;
    }
    this.commandReturned(e, x, flight, responder, value);
  }

  /**
   * The part of 6.4 both ways of starting share: the payload, then the command's call (the
   * built-in `assign` or the registry's). What the command returned, or `NOT_STARTED` when the
   * monitor halted the run (the flight is then over). A command's synchronous throw goes to the
   * caller.
   */
  private callCommand(e: Entry, x: Execution, flight: number, responder: CommandResponder): unknown {
    const payload = this.commandPayload(e, x);
    if (payload === null) {
      this.endFlight(e, x, flight);
      return NOT_STARTED;
    }
    return e.command === ASSIGN && x.builtinAssign ? builtinAssignCommand(payload, responder.api) : this.registry.executeCommand(payload, responder.api);
  }

  /**
   * Steps 1 to 3 of 6.4: the arguments, `raw` and the monitor's consent, then the payload (the run
   * logs `raw` and says the command started). Null when the monitor halts the run.
   */
  private commandPayload(e: Entry, x: Execution): CommandPayload | null {
    const ctx = x.ctx;
    const { argStart, argDep, argLiteral } = this;
    // A dependency's data from the execution's copy, unless a host replaced a value meanwhile.
    const dataOf = ctx.hostChanged ? null : x.dataOf;
    const from = argStart[e.rank]!;
    const n = argStart[e.rank + 1]! - from;
    const args: unknown[] = new Array(n);
    let raw = e.command;
    for (let i = 0; i < n; i++) {
      const dep = argDep[from + i]!;
      const value = dep < 0 ? argLiteral[from + i] : dataOf !== null ? dataOf[dep] : this.byRank[dep]!.value.data;
      args[i] = value;
      raw = appendToRaw(raw, value === null || value === undefined ? '' : textOf(value));
    }
    raw = compactText(raw);
    try {
      this.monitor.beforeExecuteCommand(e.command, raw);
    } catch (error) {
      ctx.halt = asError(error);
      return null;
    }
    ctx.commands.push(raw);
    if (this.options.onEvent) this.emit({ type: 'command-started', variable: e.name, command: e.command, raw, lineNumber: e.lineNumber, args, dependencies: e.dependencies, comment: e.comment });
    return {
      command: e.command,
      args,
      raw,
      variable: e.name,
      lineNumber: e.lineNumber,
      comment: e.comment,
      commentLines: e.commentCount === 0 ? [] : e.commentLines.slice(),
      signal: ctx.signal ?? undefined,
    };
  }

  /** A command's outcome: what it returned (or its responder's last value), stored and propagated. */
  private commandReturned(e: Entry, x: Execution, flight: number, responder: CommandResponder, returned: unknown): void {
    try {
      if (e.flight !== flight) return;
      this.store(e, returned ?? responder.last(), x.ctx);
      const value = e.value;
      if (value.status === 'success') x.dataOf[e.rank] = value.data;
    } finally {
      this.endFlight(e, x, flight);
    }
  }

  /** A command threw (or its promise rejected): the variable fails with the reason (6.4). */
  private commandThrew(e: Entry, x: Execution, flight: number, error: unknown): void {
    try {
      if (e.flight !== flight) return;
      const reason = errorText(error);
      e.value = failValue(reason, 'exception');
      this.settled(e);
      if (this.report(e, reason, x.ctx)) this.propagateUndefined([e], x.ctx);
    } finally {
      this.endFlight(e, x, flight);
    }
  }

  /** The execution `flight` of `e` is over: unless it was abandoned, the scheduler hears of it. */
  private endFlight(e: Entry, x: Execution, flight: number): void {
    if (e.flight === flight) {
      e.flight = 0;
      this.settle(x, e);
    }
  }

  /** Classifies a command's outcome (the table of 6.4) and propagates it. */
  private store(e: Entry, result: unknown, ctx: RunContext): void {
    if (!result) {
      e.value = undefinedValue('command returned no response', 'command');
      this.settled(e);
      this.propagateUndefined([e], ctx);
      return;
    }
    let value: Value | null;
    let problem = '';
    try {
      value = acceptResult(e.name, result);
    } catch (error) {
      // A getter or a Proxy trap of the result threw while it was read: the result is unusable.
      value = null;
      problem = ` (reading it threw: ${errorText(error)})`;
    }
    if (!value) {
      const reason = `invalid result from executeCommand${problem}`;
      e.value = failValue(reason, 'validation');
      this.settled(e);
      if (this.report(e, reason, ctx)) this.propagateUndefined([e], ctx);
      return;
    }
    const status = value.status;
    if (status === 'canceled') ctx.canceledSeen = true;
    e.value = value;
    this.settled(e);
    if (status === 'fail') {
      if (this.report(e, value.data, ctx)) this.propagateUndefined([e], ctx);
    } else if (status === 'undefined') this.propagateUndefined([e], ctx);
    else if (status === 'canceled') this.propagateCanceled([e], ctx);
    else this.propagateUndefined(e.dependents, ctx);
  }

  /** Reports a failure to the monitor; false (and the run halts) when the monitor throws. */
  private report(e: Entry, reason: unknown, ctx: RunContext): boolean {
    try {
      this.monitor.reportCommandFailure(e.command, reason);
      return true;
    } catch (error) {
      ctx.halt = asError(error);
      return false;
    }
  }

  private settled(e: Entry): void {
    if (!this.options.onEvent) return;
    this.emit({
      type: 'variable-settled', variable: e.name, status: e.value.status, value: textOf(publicForm(e.value)), lineNumber: e.lineNumber,
      data: e.value.data, rootCause: e.value.status === 'canceled' ? rootCauseOf(e) : null,
    });
  }

  private emit(event: RunEvent): void {
    const listener = this.options.onEvent;
    if (!listener) return;
    try {
      listener(event);
    } catch {
      // A listener's failure must not break the run.
    }
  }

  // ---------------------------------------------------------------- english scripts (section 8)

  private async englishUpdate(source: string, ctx: RunContext, options: UpdateOptions): Promise<UpdateResult> {
    const agent = this.options.llmAgent;
    if (!agent) throw new ConfigurationError('LLMAgent is required to process #!english scripts');
    const rounds = this.options.maxLlmaRounds ?? 5;
    if (!(rounds > 0)) throw new ConfigurationError(`maxLlmaRounds must be at least 1 (got ${String(rounds)})`);
    const english: EnglishState = { instructions: parsePlan(source).plan.english!.instructions, attempt: 0, rounds, history: [] };
    let failures: Failure[] = [];
    let lastError: Error | null = null;
    // The initial plan: every failed generation is a failed round while rounds remain (Q11).
    while (english.attempt < english.rounds) {
      const reason = english.attempt === 0 ? 'initial' : 'failure';
      try {
        const code = await this.generate(english, reason, failures, ctx);
        if (this.options.generateOnly) {
          this.source = code;
          return { aborted: false, commands: [], failures: [] };
        }
        this.checkGenerated(code);
        this.validateAndApply(code, this.generatedPlanCommands());
      } catch (error) {
        if (ctx.aborted) return { aborted: true, commands: ctx.commands, failures: this.failures() };
        // A spent token budget ends generation: no further round would be allowed a request.
        if (error instanceof TokenBudgetExceededError) throw error;
        if (!(error instanceof PlanGenerationError || error instanceof PlanValidationError)) throw error;
        lastError = error;
        failures = [{ variable: '__plan__', reason: `plan-error:${error.message}` }];
        continue;
      }
      return this.runAndSettle(ctx, options, english);
    }
    throw lastError ?? new PlanGenerationError('no plan was generated', english.attempt);
  }

  /** Asks the model for a plan; a blank answer or a model error is a PlanGenerationError. */
  private async generate(english: EnglishState, reason: 'initial' | 'failure', failures: Failure[], ctx: RunContext): Promise<string> {
    const commands = CommandSurface.fromRegistry(this.registry).commands.map((c) => (
      c.sideEffects === undefined ? { name: c.name, description: c.description } : { name: c.name, description: c.description, sideEffects: c.sideEffects }
    ));
    const request: GenerationRequest = {
      instructions: english.instructions,
      attempt: english.attempt,
      reason,
      failures,
      variables: reason === 'initial' ? [] : this.snapshot().map((v) => ({ name: v.name, status: v.status, value: v.value, raw: v.raw })),
      previousCode: reason === 'initial' ? null : this.source || null,
      history: english.history.map((h) => ({ ...h })),
      commands,
    };
    const prompt = buildGenerationPrompt(request, { supplied: this.inputSupplied(), value: this.options.input });
    this.monitor.beforeRegenerateScript({ prompt, request });
    const previousCode = request.previousCode;
    english.attempt++;
    let answer: unknown;
    try {
      const base: PromptOptions = { model: this.options.model, tags: this.options.tags, reasoningEffort: this.options.reasoningEffort, signal: ctx.signal ?? undefined };
      const invocation = this.options.llmInvocationContext;
      answer = invocation && typeof invocation.userPrompt === 'string'
        ? await this.options.llmAgent!.executePrompt(invocation.userPrompt, { ...base, history: [{ role: 'system', content: prompt }, ...(invocation.history ?? [])] })
        : await this.options.llmAgent!.executePrompt(prompt, base);
    } catch (error) {
      if (ctx.signal?.aborted) {
        // An abort ends the update without an error, like an aborted run (6.12).
        ctx.aborted = true;
        throw error;
      }
      if (error instanceof TokenBudgetExceededError) throw error;
      throw new PlanGenerationError(`the language model failed: ${errorText(error)}`, english.attempt);
    }
    if (typeof answer !== 'string' || answer.trim() === '') throw new PlanGenerationError('LLMAgent returned empty code', english.attempt);
    const code = stripFences(answer);
    english.history.push({ attempt: english.attempt, reason, prompt, code });
    this.emit({ type: 'plan-generated', code, reason, attempt: english.attempt - 1 });
    if (this.options.onPlanGenerated) {
      try {
        this.options.onPlanGenerated({ code, previousCode, reason, attempt: english.attempt - 1 });
      } catch {
        // The host's callback must not break generation.
      }
    }
    return code;
  }

  /**
   * The commands a generated plan may call: the registry's list (plus `assign` and the final
   * commands, which the validator always knows, 4.4). The model was shown only these, so a plan
   * that calls anything else is invalid and never reaches `executeCommand`, as in sessions.
   */
  private generatedPlanCommands(): CommandSurface {
    return CommandSurface.fromRegistry(this.registry);
  }

  /** A generated plan must contain a final declaration when final commands are available (8.4). */
  private checkGenerated(code: string): void {
    if (!finalCommandsAvailable(CommandSurface.fromRegistry(this.registry).commands)) return;
    const { plan } = parsePlan(code);
    if (!plan.declarations.some((d) => d.command && isFinalCommand(d.command.name))) {
      throw new PlanGenerationError(`LightSOPLang plans generated from #!english must include at least one "${FINAL_ANSWER}" or "${CANNOT_COMPLETE}" declaration (for example "@lastAnswer ${FINAL_ANSWER} <final text>").`, 0);
    }
  }

  /**
   * After a run of an english script: while rounds remain and variables failed or canceled, ask
   * for a revision and apply it (8.5). Returns true when a revised plan was applied.
   */
  private async revise(ctx: RunContext, _options: UpdateOptions, english: EnglishState): Promise<boolean> {
    let failures: Failure[] = [];
    for (const e of this.table.values()) if (e.value.status === 'fail' || e.value.status === 'canceled') failures.push({ variable: e.name, reason: publicForm(e.value) });
    if (failures.length === 0) return false;
    while (english.attempt < english.rounds) {
      try {
        const code = await this.generate(english, 'failure', failures, ctx);
        this.checkGenerated(code);
        this.validateAndApply(code, this.generatedPlanCommands());
        return true;
      } catch (error) {
        if (ctx.aborted) return false;
        // A spent token budget ends revision: the results so far stand (the host says why).
        if (error instanceof TokenBudgetExceededError) return false;
        if (!(error instanceof PlanGenerationError || error instanceof PlanValidationError)) throw error;
        failures = [{ variable: '__plan__', reason: `plan-error:${error.message}` }];
      }
    }
    return false;
  }
}

interface EnglishState {
  instructions: string;
  attempt: number;
  rounds: number;
  history: { attempt: number; reason: string; prompt: string; code: string }[];
}

/**
 * Reads a command's result R (the table of 6.4) into a value record of our own, or null when R is
 * not a value (no truthy `raw` or `status`, or an unknown status). Everything is read here, once:
 * a getter that throws makes this throw, and the caller treats R as invalid; later reads of the
 * stored record (its status, raw text, timestamp, root cause) are of plain data.
 */
function acceptResult(variable: string, result: unknown): Value | null {
  if (typeof result !== 'object' || result === null) return null;
  const r = result as Partial<Value>;
  const status = r.raw && r.status ? normalizeStatus(r.status) : null;
  if (!status) return null;
  const value = { ...(result as Value), status } as Value;
  value.raw = textOf(value.raw);
  if (!Number.isFinite(value.timestamp)) value.timestamp = createValue(status, '', 'command').timestamp;
  if (status !== 'canceled') value.rootCause = null;
  if (status === 'fail' && !value.data) value.data = 'unknown failure';
  if (status === 'canceled') {
    const cause = value.rootCause;
    // A root cause given as an object is copied, so that its getters run here and only here.
    if (!cause) value.rootCause = { name: variable, reason: value.data };
    else if (typeof cause === 'object') value.rootCause = { ...cause };
  }
  return value;
}

/** How much of an argument `raw` keeps when the whole text would be too long for one string. */
const RAW_KEPT_WHEN_CUT = 1 << 20;

/**
 * `raw` plus one argument. When the text would be longer than V8's longest string (arguments of
 * hundreds of millions of characters), the argument is cut with a marker instead of the run
 * crashing with "Invalid string length"; the command still receives every argument whole.
 */
function appendToRaw(raw: string, text: string): string {
  try {
    return raw + ' ' + text;
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    const marker = `… [cut by lightsop: ${text.length} characters; the whole command text is too long for one string]`;
    for (const kept of [RAW_KEPT_WHEN_CUT, 0]) {
      try {
        return raw + ' ' + text.slice(0, kept) + marker;
      } catch {
        // raw itself is nearly as long as a string can be: keep less, or nothing more.
      }
    }
    return raw;
  }
}

const promiseThen = Promise.prototype.then;

/**
 * A promise `await` would use as it is: a native promise whose constructor is Promise (the test
 * of PromiseResolve, which reads `constructor` only of a real promise, never of a Proxy). A
 * reaction attached to it runs exactly when `await`'s would; `await` on anything else is left to
 * `await`.
 */
function isPlainPromise(x: unknown): x is Promise<unknown> {
  if (!types.isPromise(x)) return false;
  try {
    return (x as Promise<unknown>).constructor === Promise;
  } catch {
    // A `constructor` getter that throws: left to `await`, which rejects with that error.
    return false;
  }
}

/** Below this length a text built by concatenation is flattened (see `compactText`). */
const COMPACT_TEXT_LIMIT = 256;

/**
 * A short text built piece by piece is a tree of V8 cons strings, several times the size of its
 * characters; `raw` is kept for the whole update (the run's command list), so a short one is
 * flattened once here (reading a character flattens it), which keeps the run's memory and the
 * garbage collector's copying small. Long texts stay as they are (flattening copies them).
 */
function compactText(text: string): string {
  if (text.length <= COMPACT_TEXT_LIMIT && text.length > 0) text.charCodeAt(0);
  return text;
}

function rootCauseOf(e: Entry): RootCause {
  return e.value.rootCause ?? { name: e.name, reason: e.value.data };
}

/** The built-in `assign` (6.7): arguments as text joined by single spaces. */
function builtinAssignCommand(payload: CommandPayload, responder: Responder): unknown {
  return responder.success(payload.args.map((a) => (a === null || a === undefined ? '' : textOf(a))).join(' '));
}
