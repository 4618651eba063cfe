/**
 * The SOP session (sessions.md section 2): a request becomes a LightSOPLang plan, the plan is
 * validated (commands and topology) before anything runs, executed through a wrapped registry
 * that asks the supervisor before every non-reserved command, and replanned within a fixed
 * attempt budget. A command may pause for the user; the next prompt can resume it. The session
 * never talks to a provider directly and never runs a plan that failed validation.
 */
import { ASSIGN, CommandSurface, builtinCommand, isFinalCommand, parsePlan, type ReservedName } from '@lightsop/core';
import type { CommandPayload, CommandRegistry, Responder } from '@lightsop/runtime';
import {
  PromptControl, PromptInterrupted, appendInterruption, checkSignal, errorText, interruptionMessage, jsonSafe, unwrapFence,
} from './control';
import { ReservedNameError, SessionRunError } from './errors';
import { createPlanRuntime, type ExecutionReport, type PlanRuntime } from './plan-runtime';
import {
  CANNOT_COMPLETE, CLARIFY_CONTEXT, FINAL_ANSWER, answerClarifyContext, assertNoReservedNames, normalizeFinalText,
} from './reserved';
import { SessionBase, checkSessionInit, type PromptCallOptions } from './session-base';
import { markSupervised, writeProgress } from './supervisor';
import type {
  SessionChatMessage as ChatMessage, ConversationSnapshot, PendingTool, PlanFailure, ReasoningEffort, SessionAgent, SessionCommandPayload, SessionEvent,
  SessionLogger, SessionStatus, Supervisor, VariableState,
} from './types';

export interface SopPreparation {
  /** Preparation instructions; blank disables preparation. */
  text: string;
  skillsDescription?: Readonly<Record<string, string>>;
  commandsRegistry?: CommandRegistry;
  parentContext?: ConversationSnapshot | Record<string, unknown> | null;
  /** Default 1, so at most two plan attempts inside the preparation session. */
  retries?: number;
}

export interface SopSessionOptions {
  model?: string | null;
  tags?: readonly string[] | null;
  reasoningEffort?: ReasoningEffort | null;
  /** Default 3; a non-finite value uses the default; values below 1 behave as 1. */
  maxPlanAttempts?: number;
  planOnly?: boolean;
  generatePlanOnly?: boolean;
  supervisor?: Supervisor | null;
  preparation?: SopPreparation | null;
  systemPrompt?: string;
  runtime?: PlanRuntime;
  /** Receives problems that are reported and ignored (listener and writer failures). */
  logger?: SessionLogger;
  preparationSession?: boolean;
  enableClarifyContextCommand?: boolean;
  parentContext?: ConversationSnapshot | Record<string, unknown> | null;
}

export interface SopSessionInit {
  agent: SessionAgent;
  skillsDescription: Readonly<Record<string, string>>;
  commandsRegistry?: CommandRegistry | null;
  options?: SopSessionOptions;
}

export type SopHistoryEntry =
  | { type: 'plan'; prompt: string; plan: string; attempt: number; route?: 'pending_resume'; tool?: string }
  | { type: 'execution'; attempt: number; outcome: 'success' | 'fail' | 'rejected' | 'awaiting_input' | typeof CANNOT_COMPLETE; failures: PlanFailure[] }
  | { type: 'awaiting_input'; tool: string; variable: string; answer: string }
  | { type: 'answer'; prompt: string; answer: string }
  | { type: 'system'; event: 'interrupted'; by: 'user'; reason: string; message: string; at: string }
  | { type: 'system'; event: 'tools_refreshed'; added: string[]; updated: string[]; removed: string[]; at: string }
  | { type: 'system'; event: 'pending_abandoned'; tool: string; at: string }
  | { type: 'system'; event: 'run_error'; phase: string; message: string; at: string };

export type SopPromptResult =
  | { kind: 'answered'; plan: string; answer: unknown; variables: Record<string, unknown> }
  | { kind: 'awaiting_input'; plan: string; answer: string; pendingTool: PendingTool }
  | { kind: 'plan_only'; plan: string; answer: null }
  | { kind: typeof CANNOT_COMPLETE; plan: string; answer: string }
  | { kind: 'failed'; plan: string; answer: unknown | null; reason: 'no_plan' | 'plan_invalid' | 'plan_rejected' | 'execution_failed'; failures: PlanFailure[]; attempts: number }
  | { kind: 'interrupted'; plan: string; answer: string };

export interface SopPromptOptions extends PromptCallOptions {
  /** This prompt only. */
  planOnly?: boolean;
  /** This prompt only: extra context lines shown to the planner. */
  context?: readonly string[];
}

export interface LastExecution {
  variables: Record<string, unknown>;
  lastAnswer: unknown;
}

/** The executable surface a prompt runs with; replaceSkillSurface() swaps it for later prompts. */
interface Surface {
  readonly userSkills: Readonly<Record<string, string>>;
  readonly skillsDescription: Readonly<Record<string, string>>;
  readonly inner: CommandRegistry | null;
  readonly wrapped: CommandRegistry | null;
  readonly plan: CommandRegistry;
  /** The inner registry's commands (reserved names left out), read when the surface was built. */
  readonly commands: CommandSurface;
  readonly clarify: boolean;
}

/** The state of one plan execution, shared with the wrapped registry. */
interface ExecState {
  readonly signal: AbortSignal;
  readonly attempt: number;
  explicitFinal: string | null;
  cannotComplete: boolean;
  paused: PendingTool | null;
  readonly denied: Set<string>;
  readonly resume: PendingTool | null;
}

/** Everything a prompt collects while it runs, read when it settles. */
interface PromptState {
  lastPlan: string | null;
  abortedVariables: Record<string, unknown> | null;
}

class PlanRejected {
  constructor(readonly reason: string) {}
}

const DEFAULT_MAX_PLAN_ATTEMPTS = 3;
/** What a variable shows when its command's result arrived after the prompt was interrupted. */
const LATE_RESULT = 'canceled: interrupted; the result arrived after the interrupt and was not used';

const PREPARATION_SYSTEM_PROMPT = 'Your job in this session is to plan and run commands that gather context for a later step. You do not perform the user request itself.';

function assertRegistry(registry: unknown): asserts registry is CommandRegistry {
  const r = registry as Partial<CommandRegistry> | null;
  if (typeof r !== 'object' || r === null || typeof r.listCommands !== 'function' || typeof r.executeCommand !== 'function') {
    throw new TypeError('commandsRegistry must provide listCommands() and executeCommand()');
  }
}

function assertDescriptions(descriptions: unknown): asserts descriptions is Record<string, string> {
  if (typeof descriptions !== 'object' || descriptions === null || Array.isArray(descriptions)) {
    throw new TypeError('skillsDescription must be an object mapping command names to descriptions');
  }
}

function cleanNames(list: unknown): string[] {
  return Array.isArray(list) ? list.filter((n): n is string => typeof n === 'string' && n.trim() !== '') : [];
}

/** Quotes a reply as one LightSOPLang literal that the command receives exactly. */
export function quoteLiteral(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;
}

/** Reads a pause for input from a command's response data (2.5 step 4). */
function pauseOf(value: unknown): { message: string; step?: string } | null {
  let data = value;
  if (typeof data === 'string') {
    const trimmed = data.trim();
    if (!trimmed.startsWith('{')) return null;
    try {
      data = JSON.parse(trimmed);
    } catch {
      return null;
    }
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  const d = data as { requiresInput?: unknown; requiresConfirmation?: unknown; message?: unknown; step?: unknown };
  if (!d.requiresInput && !d.requiresConfirmation) return null;
  const message = typeof d.message === 'string' ? d.message : JSON.stringify(data);
  const out: { message: string; step?: string } = { message };
  if (d.step !== undefined && d.step !== null) out.step = String(d.step);
  return out;
}

/** The derived final answer of an execution (2.8). */
function deriveAnswer(explicit: string | null, variables: Record<string, unknown>): unknown {
  if (explicit !== null) return explicit;
  const present = (name: string) => Object.prototype.hasOwnProperty.call(variables, name) && variables[name] !== null && variables[name] !== undefined;
  if (present('lastAnswer')) return variables.lastAnswer;
  for (const name of ['result', 'final', 'answer', 'domain']) if (present(name)) return variables[name];
  const names = Object.keys(variables);
  if (names.length === 1) return variables[names[0]!] ?? null;
  return null;
}

function answerText(answer: unknown): string {
  if (answer === null || answer === undefined) return '';
  return typeof answer === 'string' ? answer : JSON.stringify(answer);
}

/** Coerces a preparation answer to text: strings as is, objects by `text`/`output`/`result`, else JSON. */
function preparationText(answer: unknown): string {
  if (typeof answer === 'string') return answer;
  if (typeof answer === 'object' && answer !== null) {
    for (const key of ['text', 'output', 'result']) {
      const v = (answer as Record<string, unknown>)[key];
      if (typeof v === 'string') return v;
    }
  }
  return answer === null || answer === undefined ? '' : JSON.stringify(answer);
}

export const AUTHORING_RULES = [
  'LightSOPLang rules:',
  '- One declaration per line: @name command arg1 arg2 ... The command is the second token, right after the name.',
  '- Arguments are separated by spaces: no parentheses, commas, JSON call syntax or prose outside comments.',
  '- Quote literal text that contains spaces or #, with double quotes; inside quotes use \\" for a quote and \\n for a line break.',
  '- Pass earlier results as separate $name arguments. Never put $name inside quotes: there is no interpolation.',
  '- Long text may go on the lines after a declaration; those lines become one argument. None of them may start with @, and the last one must not start with #.',
  '- Use the built-in assign command to create local text: @note assign "some text".',
  '- Put a short # comment directly above each user-visible step, saying what it does; no comment above assign, final_answer or cannot_complete.',
  '- End with exactly one final line: @lastAnswer final_answer VALUE (one literal or one $reference), or, when the task is impossible, @lastAnswer cannot_complete REASON.',
  '- No markdown fences.',
].join('\n');

export class SopSession extends SessionBase {
  readonly agent: SessionAgent;
  readonly options: SopSessionOptions & { model: string | null; tags: readonly string[] | null; reasoningEffort: ReasoningEffort | null };
  readonly maxPlanAttempts: number;
  readonly baseSystemPrompt: string;
  systemPrompt: string;
  currentPlan = '';
  lastExecution: LastExecution | null = null;
  lastRunFailures: PlanFailure[] = [];
  preparationContextText = '';
  preparationContextLines: string[] = [];

  readonly #history: SopHistoryEntry[] = [];
  readonly #runtime: PlanRuntime;
  readonly #preparationSession: boolean;
  readonly #parentContext: ConversationSnapshot | Record<string, unknown> | null;
  readonly #exchanges: { prompt: string; plan: string }[] = [];
  #surface: Surface;
  #pendingTool: PendingTool | null = null;
  #lastFinalAnswer: string | null = null;
  #exec: ExecState | null = null;

  constructor(init: SopSessionInit) {
    checkSessionInit(init, 'SopSession', 'agent, skillsDescription', 'executePrompt');
    assertDescriptions(init.skillsDescription);
    if (init.commandsRegistry !== undefined && init.commandsRegistry !== null) assertRegistry(init.commandsRegistry);
    assertNoReservedNames(Object.keys(init.skillsDescription));
    const options = init.options ?? {};
    super(options.logger);
    this.agent = init.agent;
    this.#runtime = options.runtime ?? createPlanRuntime();
    this.#preparationSession = options.preparationSession === true;
    this.#parentContext = options.parentContext ?? null;
    const attempts = Number.isFinite(options.maxPlanAttempts) ? Math.floor(options.maxPlanAttempts!) : DEFAULT_MAX_PLAN_ATTEMPTS;
    this.maxPlanAttempts = Math.max(1, attempts);
    this.options = { ...options, model: options.model ?? null, tags: options.tags ?? null, reasoningEffort: options.reasoningEffort ?? null };
    this.baseSystemPrompt = options.systemPrompt ?? '';
    this.systemPrompt = this.baseSystemPrompt;
    this.#surface = this.#buildSurface(init.skillsDescription, init.commandsRegistry ?? null);
  }

  // ---------------------------------------------------------------- public surface

  get history(): readonly SopHistoryEntry[] {
    return this.#history;
  }

  get pendingTool(): PendingTool | null {
    return this.#pendingTool ? { ...this.#pendingTool } : null;
  }

  get skillsDescription(): Readonly<Record<string, string>> {
    return this.#surface.skillsDescription;
  }

  get commandsRegistry(): CommandRegistry | null {
    return this.#surface.wrapped;
  }

  get planCommandsRegistry(): CommandRegistry {
    return this.#surface.plan;
  }

  getPlan(): string {
    return this.currentPlan;
  }

  getLastResult(): unknown | null {
    return this.lastExecution?.lastAnswer ?? null;
  }

  async getVariables(): Promise<{ lastPlan: string; lastAnswer: unknown | null; variables: Record<string, unknown>; status: SessionStatus }> {
    return { lastPlan: this.currentPlan, lastAnswer: this.getLastResult(), variables: { ...(this.lastExecution?.variables ?? {}) }, status: this.status };
  }

  getConversationSnapshot(): ConversationSnapshot {
    return { type: 'sop', status: this.status, lastAnswer: jsonSafe(this.getLastResult() ?? null), history: jsonSafe<unknown[]>(this.#history) };
  }

  replaceSkillSurface(
    surface: { skillsDescription: Readonly<Record<string, string>>; commandsRegistry?: CommandRegistry | null },
    change: { added?: string[]; updated?: string[]; removed?: string[] } = {},
  ): { skillsDescription: Readonly<Record<string, string>>; commandsRegistry: CommandRegistry | null } {
    if (!surface || typeof surface !== 'object') throw new TypeError('replaceSkillSurface needs { skillsDescription, commandsRegistry }');
    assertDescriptions(surface.skillsDescription);
    assertNoReservedNames(Object.keys(surface.skillsDescription));
    if (surface.commandsRegistry !== undefined && surface.commandsRegistry !== null) assertRegistry(surface.commandsRegistry);
    const next = this.#buildSurface(surface.skillsDescription, surface.commandsRegistry ?? null);
    this.#surface = next;
    if (this.#pendingTool && !(next.wrapped && CommandSurface.fromRegistry(next.wrapped).has(this.#pendingTool.command))) this.#pendingTool = null;
    this.#history.push({
      type: 'system', event: 'tools_refreshed', added: cleanNames(change.added), updated: cleanNames(change.updated), removed: cleanNames(change.removed),
      at: new Date().toISOString(),
    });
    return { skillsDescription: next.skillsDescription, commandsRegistry: next.wrapped };
  }

  // ---------------------------------------------------------------- prompts

  async newPrompt(prompt: string, options: SopPromptOptions = {}): Promise<SopPromptResult> {
    if (typeof prompt !== 'string' || prompt.trim() === '') throw new TypeError('prompt must be a non-empty string');
    this.claimPrompt(options);
    this.systemPrompt = this.baseSystemPrompt;
    const control = this.startPrompt(options.signal);
    const state: PromptState = { lastPlan: null, abortedVariables: null };
    const surface = this.#surface;
    let result: SopPromptResult;
    try {
      checkSignal(control.signal);
      result = await this.#run(prompt, options, control.signal, surface, state);
    } catch (error) {
      if (error instanceof PromptInterrupted || control.signal.aborted) {
        result = this.#interrupted(control, state);
      } else {
        const runError = error instanceof SessionRunError ? error : new SessionRunError('planning', error);
        this.setStatus('failed');
        this.#history.push({ type: 'system', event: 'run_error', phase: runError.phase, message: errorText(runError.cause), at: new Date().toISOString() });
        this.#settle(control, state, prompt);
        throw runError;
      }
    }
    this.#settle(control, state, prompt);
    return result;
  }

  #settle(control: PromptControl, state: PromptState, prompt: string): void {
    if (state.lastPlan !== null) this.#exchanges.push({ prompt, plan: state.lastPlan });
    this.#exec = null;
    this.endPrompt(control);
  }

  #interrupted(control: PromptControl, state: PromptState): SopPromptResult {
    const reason = control.reason;
    const message = interruptionMessage(reason);
    this.#pendingTool = null;
    this.lastExecution = { variables: state.abortedVariables ?? {}, lastAnswer: message };
    appendInterruption(this.#history, reason, message);
    this.setStatus('interrupted');
    return { kind: 'interrupted', plan: this.currentPlan, answer: message };
  }

  async #run(prompt: string, options: SopPromptOptions, signal: AbortSignal, surface: Surface, state: PromptState): Promise<SopPromptResult> {
    // Step 5: a paused command may be resumed by this reply (2.6).
    if (this.#pendingTool) {
      const pending = this.#pendingTool;
      if (await this.repliesToPending(prompt, pending.command, Object.keys(surface.userSkills), signal)) return this.#resume(prompt, pending, surface, signal, state);
      this.#history.push({ type: 'system', event: 'pending_abandoned', tool: pending.command, at: new Date().toISOString() });
      this.#pendingTool = null;
    }
    // Step 6: optional preparation.
    this.preparationContextText = '';
    this.preparationContextLines = [];
    const preparation = this.options.preparation;
    if (preparation && typeof preparation.text === 'string' && preparation.text.trim() !== '') {
      const text = await this.#prepare(prompt, preparation, surface, signal);
      checkSignal(signal);
      this.preparationContextText = text;
      this.preparationContextLines = text === '' ? [] : text.split(/\r?\n/);
    }
    const planOnly = this.options.planOnly === true || this.options.generatePlanOnly === true || options.planOnly === true || surface.wrapped === null;
    let feedback: { failures: PlanFailure[]; variables: Record<string, unknown> } | null = null;
    let executedAny = false;
    let lastReason: 'no_plan' | 'plan_invalid' | 'execution_failed' = 'no_plan';
    let failures: PlanFailure[] = [];
    for (let attempt = 1; attempt <= this.maxPlanAttempts; attempt++) {
      // Step 7: generate.
      checkSignal(signal);
      const history = this.#plannerHistory(options, surface, attempt, feedback);
      const reply: unknown = await this.callAgent('planning', signal, () => this.agent.executePrompt(prompt, {
        history, ...this.callOptions(signal), context: { intent: 'sop.plan', attempt },
      }));
      const plan = unwrapFence(typeof reply === 'string' ? reply : '');
      const previousPlan = this.currentPlan;
      this.currentPlan = plan;
      this.lastExecution = null;
      const entry: SopHistoryEntry = { type: 'plan', prompt, plan, attempt };
      this.#history.push(entry);
      state.lastPlan = plan;
      this.emit({ type: 'plan_generated', attempt, plan, previousPlan });
      if (plan === '') {
        failures = [{ variable: '__plan__', code: 'empty-plan', reason: 'plan-error:empty plan' }];
        lastReason = 'no_plan';
        this.#attemptFailed(attempt, 'rejected', failures);
        feedback = { failures, variables: {} };
        continue;
      }
      // Step 8: plan-only.
      if (planOnly) {
        this.lastRunFailures = [];
        this.setStatus('active');
        return { kind: 'plan_only', plan, answer: null };
      }
      // Step 9: validate, then the optional review.
      let rejected: PlanFailure[] = this.#validate(plan, surface);
      if (rejected.length === 0 && this.options.supervisor && typeof this.options.supervisor.reviewPlan === 'function') {
        try {
          rejected = await this.#review(prompt, attempt, previousPlan, entry, surface, signal);
        } catch (error) {
          if (!(error instanceof PlanRejected)) throw error;
          failures = [{ variable: '__plan__', code: 'plan-rejected', reason: error.reason }];
          this.lastRunFailures = failures;
          this.lastExecution = null;
          this.#history.push({ type: 'execution', attempt, outcome: 'rejected', failures });
          this.setStatus('failed');
          return { kind: 'failed', plan: this.currentPlan, answer: null, reason: 'plan_rejected', failures, attempts: attempt };
        }
      }
      if (rejected.length > 0) {
        this.lastExecution = { variables: {}, lastAnswer: null };
        this.emit({ type: 'plan_rejected', attempt, failures: rejected });
        failures = rejected;
        lastReason = 'plan_invalid';
        this.#attemptFailed(attempt, 'rejected', failures);
        feedback = { failures, variables: {} };
        continue;
      }
      // Step 10: execute.
      executedAny = true;
      const outcome = await this.#executePlan(prompt, this.currentPlan, surface, attempt, signal, null, state);
      if (outcome.kind !== 'failures') return outcome.result;
      failures = outcome.failures;
      lastReason = 'execution_failed';
      this.#attemptFailed(attempt, 'fail', failures, false);
      feedback = { failures, variables: (this.lastExecution as LastExecution | null)?.variables ?? {} };
    }
    // Step 11: the budget is spent.
    this.lastRunFailures = failures;
    this.setStatus('failed');
    const reason = executedAny ? 'execution_failed' : lastReason;
    return { kind: 'failed', plan: this.currentPlan, answer: this.getLastResult(), reason, failures, attempts: this.maxPlanAttempts };
  }

  #attemptFailed(attempt: number, outcome: 'rejected' | 'fail', failures: PlanFailure[], record = true): void {
    this.lastRunFailures = failures;
    if (record) this.#history.push({ type: 'execution', attempt, outcome, failures });
  }

  /** Runs the plan review loop (2.4 step 9a); returns validation failures of an edited plan. */
  async #review(prompt: string, attempt: number, previousPlan: string, entry: SopHistoryEntry & { type: 'plan' }, surface: Surface, signal: AbortSignal): Promise<PlanFailure[]> {
    const supervisor = this.options.supervisor!;
    for (;;) {
      let decision: unknown;
      try {
        decision = await supervisor.reviewPlan!({ plan: this.currentPlan, previousPlan, attempt, prompt }, { signal });
      } catch (error) {
        checkSignal(signal);
        throw new PlanRejected(`plan-rejected:the plan review failed: ${errorText(error)}`);
      }
      checkSignal(signal);
      const d = typeof decision === 'string' ? { decision } : (decision as { decision?: unknown; plan?: unknown; reason?: unknown } | null);
      if (d && d.decision === 'approve') return [];
      if (d && d.decision === 'edit' && typeof d.plan === 'string') {
        const plan = unwrapFence(d.plan);
        this.currentPlan = plan;
        entry.plan = plan;
        this.emit({ type: 'plan_generated', attempt, plan, previousPlan });
        const failures = plan === '' ? [{ variable: '__plan__', code: 'empty-plan', reason: 'plan-error:empty plan' }] : this.#validate(plan, surface);
        if (failures.length > 0) return failures;
        continue;
      }
      const reason = d && typeof d.reason === 'string' && d.reason.trim() !== '' ? d.reason : 'the plan was rejected by the reviewer';
      throw new PlanRejected(reason);
    }
  }

  /** Validation before anything executes (2.4.1). */
  #validate(plan: string, surface: Surface): PlanFailure[] {
    const allowed = new Set<string>([ASSIGN]);
    if (surface.wrapped) for (const name of CommandSurface.fromRegistry(surface.wrapped).names) allowed.add(name);
    const failures: PlanFailure[] = [];
    for (const d of this.#runtime.validate(plan, { commands: allowed })) {
      if (d.severity !== 'error') continue;
      if (d.code === 'unknown-command') {
        const command = /'([^']*)'/.exec(d.message)?.[1] ?? d.message;
        failures.push({ variable: d.variable ?? '__plan__', code: 'unknown-command', reason: `command-not-allowed:${command}`, line: d.line });
      } else {
        failures.push({ variable: d.variable ?? '__plan__', code: d.code, reason: `plan-error:${d.message}`, line: d.line });
      }
    }
    if (!parsePlan(plan).plan.declarations.some((d) => d.command !== null && isFinalCommand(d.command.name))) {
      failures.push({ variable: '__plan__', code: 'missing-final-answer', reason: 'plan-error:the plan must end with a final_answer or cannot_complete declaration' });
    }
    return failures;
  }

  /** Executes a validated plan through the wrapped registry (2.4 step 10). */
  async #executePlan(
    prompt: string, plan: string, surface: Surface, attempt: number, signal: AbortSignal, resume: PendingTool | null, state: PromptState,
  ): Promise<{ kind: 'settled'; result: SopPromptResult } | { kind: 'failures'; failures: PlanFailure[] }> {
    const exec: ExecState = { signal, attempt, explicitFinal: null, cannotComplete: false, paused: null, denied: new Set(), resume };
    this.#exec = exec;
    this.#lastFinalAnswer = null;
    let report: ExecutionReport;
    // Variables whose result arrived after the interrupt: it never counts as a success (3.15 rule 7).
    const late = new Set<string>();
    try {
      report = await this.#runtime.execute(plan, surface.wrapped!, {
        signal,
        holdNewCommands: () => exec.paused !== null,
        onVariable: (u) => {
          if (signal.aborted && u.state !== 'running') {
            late.add(u.variable);
            this.emit({ type: 'variable_status', attempt, variable: u.variable, command: u.command, state: 'canceled', value: LATE_RESULT });
            return;
          }
          const state: VariableState = exec.paused && exec.paused.variable === u.variable && (u.state === 'success' || u.state === 'fail') ? 'awaiting_input' : u.state;
          const event: SessionEvent = { type: 'variable_status', attempt, variable: u.variable, command: u.command, state };
          if (u.value !== undefined) (event as { value?: unknown }).value = u.value;
          this.emit(event);
        },
      });
    } finally {
      this.#exec = null;
    }
    const variables: Record<string, unknown> = {};
    for (const [name, v] of Object.entries(report.variables)) if (!late.has(name)) variables[name] = v.value;
    if (report.aborted || signal.aborted) {
      // Only the variables settled before the abort (2.4 step 13).
      state.abortedVariables = variables;
      throw new PromptInterrupted();
    }
    const explicit = exec.explicitFinal;
    this.#lastFinalAnswer = null;
    const failures: PlanFailure[] = report.failures.map((f) => (exec.denied.has(f.variable) ? { variable: f.variable, reason: f.reason, code: 'denied' } : { variable: f.variable, reason: f.reason }));
    if (exec.paused) {
      this.lastExecution = { variables, lastAnswer: exec.paused.message };
      this.lastRunFailures = failures;
      this.#history.push({ type: 'execution', attempt, outcome: 'awaiting_input', failures });
      this.setStatus('awaiting_input');
      return { kind: 'settled', result: { kind: 'awaiting_input', plan: this.currentPlan, answer: exec.paused.message, pendingTool: { ...exec.paused } } };
    }
    if (exec.cannotComplete) {
      const reason = explicit ?? '';
      this.lastExecution = { variables, lastAnswer: reason };
      this.lastRunFailures = failures;
      this.#history.push({ type: 'execution', attempt, outcome: CANNOT_COMPLETE, failures });
      this.setStatus('failed');
      return { kind: 'settled', result: { kind: CANNOT_COMPLETE, plan: this.currentPlan, answer: reason } };
    }
    this.lastExecution = { variables, lastAnswer: deriveAnswer(explicit, variables) };
    this.lastRunFailures = failures;
    if (failures.length > 0) {
      this.#history.push({ type: 'execution', attempt, outcome: 'fail', failures });
      return { kind: 'failures', failures };
    }
    this.#history.push({ type: 'execution', attempt, outcome: 'success', failures: [] });
    const answer = this.lastExecution.lastAnswer;
    this.#history.push({ type: 'answer', prompt, answer: answerText(answer) });
    this.setStatus('active');
    return { kind: 'settled', result: { kind: 'answered', plan: this.currentPlan, answer, variables: { ...variables } } };
  }

  // ---------------------------------------------------------------- pending commands (2.6)

  async #resume(prompt: string, pending: PendingTool, surface: Surface, signal: AbortSignal, state: PromptState): Promise<SopPromptResult> {
    const resultName = pending.variable === 'lastAnswer' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(pending.variable) ? 'resumed' : pending.variable;
    const command = /^[^\s"'#$@]+$/.test(pending.command) ? pending.command : quoteLiteral(pending.command);
    const plan = `@${resultName} ${command} ${quoteLiteral(prompt)}\n@lastAnswer final_answer $${resultName}`;
    const previousPlan = this.currentPlan;
    this.currentPlan = plan;
    this.lastExecution = null;
    this.#history.push({ type: 'plan', prompt, plan, attempt: 1, route: 'pending_resume', tool: pending.command });
    state.lastPlan = plan;
    this.emit({ type: 'plan_generated', attempt: 1, plan, previousPlan });
    const rejected = surface.wrapped ? this.#validate(plan, surface) : [{ variable: '__plan__', reason: 'plan-error:no commands registry' }];
    if (rejected.length > 0 || !surface.wrapped) {
      this.lastExecution = { variables: {}, lastAnswer: null };
      this.emit({ type: 'plan_rejected', attempt: 1, failures: rejected });
      this.#attemptFailed(1, 'rejected', rejected);
      this.#pendingTool = null;
      this.setStatus('failed');
      return { kind: 'failed', plan, answer: null, reason: 'execution_failed', failures: rejected, attempts: 1 };
    }
    const outcome = await this.#executePlan(prompt, plan, surface, 1, signal, pending, state);
    if (outcome.kind === 'settled') return outcome.result;
    this.setStatus('failed');
    return { kind: 'failed', plan, answer: this.getLastResult(), reason: 'execution_failed', failures: outcome.failures, attempts: 1 };
  }

  // ---------------------------------------------------------------- preparation (2.10)

  async #prepare(prompt: string, preparation: SopPreparation, surface: Surface, signal: AbortSignal): Promise<string> {
    const retries = Number.isFinite(preparation.retries) ? Math.max(0, Math.floor(preparation.retries!)) : 1;
    let child: SopSession;
    try {
      child = new SopSession({
        agent: this.agent,
        skillsDescription: preparation.skillsDescription ?? surface.userSkills,
        commandsRegistry: preparation.commandsRegistry ?? surface.inner,
        options: {
          model: this.options.model, tags: this.options.tags, reasoningEffort: this.options.reasoningEffort,
          supervisor: this.options.supervisor ?? null, runtime: this.#runtime, logger: this.log,
          preparationSession: true, enableClarifyContextCommand: true, parentContext: preparation.parentContext ?? null,
          planOnly: false, systemPrompt: PREPARATION_SYSTEM_PROMPT, maxPlanAttempts: retries + 1,
        },
      });
    } catch (error) {
      throw new SessionRunError('setup', error);
    }
    const childPrompt = [
      preparation.text.trim(),
      '',
      'User request (context only; do not perform it):',
      prompt,
      '',
      'Rules:',
      '- Do not perform the user request.',
      '- Produce a plan that gathers the missing context with the available commands.',
      '- Do not invent facts.',
      '- Only the final answer value is carried into the main step.',
      '- When conversation context is needed and the instructions do not already answer it, use clarify_context with specific questions.',
      '- Never finish with a placeholder such as "awaiting clarification".',
      '- Finish with one final answer value.',
    ].join('\n');
    let result: SopPromptResult;
    try {
      result = await child.newPrompt(childPrompt, { signal });
    } catch (error) {
      if (signal.aborted) throw new PromptInterrupted();
      throw new SessionRunError('setup', error instanceof SessionRunError ? error.cause : error);
    }
    if (result.kind === 'interrupted' || signal.aborted) throw new PromptInterrupted();
    if (result.kind !== 'answered') throw new SessionRunError('setup', new Error(`preparation ended with ${result.kind}${result.kind === 'failed' ? ` (${result.reason})` : ''}`));
    return preparationText(result.answer);
  }

  // ---------------------------------------------------------------- the planner request (2.7)

  #plannerHistory(options: SopPromptOptions, surface: Surface, attempt: number, feedback: { failures: PlanFailure[]; variables: Record<string, unknown> } | null): ChatMessage[] {
    const parts: string[] = [];
    const carried = this.#exchanges.some((e) => e.plan === this.currentPlan);
    if (this.currentPlan === '' && this.#exchanges.length === 0) {
      parts.push('You write a new LightSOPLang plan that fulfils the user request.');
    } else {
      parts.push([
        'You update the existing LightSOPLang plan so that it fulfils the new user request.',
        'Update rules: satisfy both the earlier and the current requirements; keep existing variables where possible; add new variables for new behaviour;',
        'redeclare a step whose behaviour changes; avoid deleting steps that are still needed.',
      ].join('\n'));
    }
    if (this.systemPrompt.trim() !== '') parts.push(this.systemPrompt.trim());
    const context = (options.context ?? []).filter((l) => typeof l === 'string');
    if (context.length > 0) parts.push(['Earlier conversation:', ...context].join('\n'));
    if (this.preparationContextLines.length > 0) parts.push(['Context gathered before planning:', ...this.preparationContextLines].join('\n'));
    const interruptions = this.#history.filter((e): e is SopHistoryEntry & { type: 'system'; event: 'interrupted' } => e.type === 'system' && e.event === 'interrupted').slice(-5);
    if (interruptions.length > 0) parts.push(['Earlier prompts were interrupted:', ...interruptions.map((e) => `- interrupted by user: ${e.reason}`)].join('\n'));
    if (this.currentPlan !== '' && !carried) parts.push(['Current plan:', this.currentPlan].join('\n'));
    parts.push(AUTHORING_RULES);
    parts.push([
      'Commands (the only executable surface of this session; use no other command except assign):',
      ...CommandSurface.fromRegistry(surface.plan).commands.map((c) => `- ${c.name}: ${c.description.replace(/\s+/g, ' ').trim()}`),
    ].join('\n'));
    if (attempt > 1 && feedback) parts.push(feedbackBlock(feedback));
    parts.push('Reply with the LightSOPLang plan source only: no fences, no prose.');
    const history: ChatMessage[] = [{ role: 'system', message: parts.join('\n\n') }];
    for (const e of this.#exchanges) {
      history.push({ role: 'user', message: e.prompt }, { role: 'assistant', message: e.plan });
    }
    return history;
  }

  // ---------------------------------------------------------------- the wrapped registry (2.5)

  #buildSurface(descriptions: Readonly<Record<string, string>>, registry: CommandRegistry | null): Surface {
    const userSkills: Record<string, string> = {};
    for (const [name, description] of Object.entries(descriptions)) userSkills[name] = typeof description === 'string' ? description : String(description ?? '');
    const clarify = this.#preparationSession && this.options.enableClarifyContextCommand !== false;
    const names: ReservedName[] = clarify ? [FINAL_ANSWER, CANNOT_COMPLETE, CLARIFY_CONTEXT] : [FINAL_ANSWER, CANNOT_COMPLETE];
    const reserved = names.map((name) => builtinCommand(name));
    const skillsDescription: Record<string, string> = { ...userSkills };
    for (const c of reserved) skillsDescription[c.name] = c.description;
    const commands = registry ? CommandSurface.fromRegistry(registry).withoutReserved() : CommandSurface.EMPTY;
    const plan: CommandRegistry = {
      listCommands: () => Object.entries(skillsDescription).map(([name, description]) => ({ name, description })),
      executeCommand: () => {
        throw new Error('the planning registry only describes commands; it does not execute them');
      },
    };
    let wrapped: CommandRegistry | null = null;
    const surface: Surface = { userSkills, skillsDescription, inner: registry, wrapped: null, plan, commands, clarify };
    if (registry) {
      wrapped = {
        listCommands: () => new CommandSurface([CommandSurface.fromRegistry(registry).withoutReserved().commands, reserved]).commands,
        executeCommand: (payload: CommandPayload, responder: Responder) => this.#executeWrapped(surface, payload, responder),
      };
      (surface as { wrapped: CommandRegistry | null }).wrapped = wrapped;
    }
    return surface;
  }

  async #executeWrapped(surface: Surface, payload: CommandPayload, responder: Responder): Promise<unknown> {
    const exec = this.#exec ?? { signal: new AbortController().signal, attempt: 0, explicitFinal: null, cannotComplete: false, paused: null, denied: new Set<string>(), resume: null };
    const { command, args, variable } = payload;
    const finalText = () => (args.length > 1 ? args.map((a) => (a === null || a === undefined ? '' : typeof a === 'string' ? a : normalizeFinalText(a) || JSON.stringify(a))).join(' ') : normalizeFinalText(args[0]));
    if (command === FINAL_ANSWER) {
      const text = finalText();
      exec.explicitFinal = text;
      this.#lastFinalAnswer = text;
      return responder.success(text);
    }
    if (command === CANNOT_COMPLETE) {
      const reason = finalText();
      exec.explicitFinal = reason;
      exec.cannotComplete = true;
      this.#lastFinalAnswer = reason;
      return responder.success(reason);
    }
    if (command === CLARIFY_CONTEXT && surface.clarify) {
      const text = await answerClarifyContext(args.length > 1 ? args : args[0], this.#parentContext, this.agent, this.callOptions(exec.signal));
      return responder.success(text);
    }
    const inner = surface.inner;
    if (!inner) throw new Error(`Unknown command ${command}`);
    const signal = exec.signal;
    const supervisor = this.options.supervisor ?? null;
    // 1. The plan comment is the stated reason of the step.
    if (payload.comment && payload.comment.trim() !== '' && command !== ASSIGN) {
      const item = { type: 'tool_reason' as const, tool: command, reason: payload.comment, stepIndex: payload.lineNumber };
      this.emit(item);
      await writeProgress(supervisor, item, this.log);
      if (signal.aborted) throw abortError(signal);
    }
    // 2. Approval.
    let approval: unknown = null;
    if (supervisor) {
      const info = surface.commands.get(command);
      const choice = { toolName: command, params: { args: [...args], raw: payload.raw }, origin: 'sop' as const, variable, reason: payload.comment || undefined, sideEffects: info?.sideEffects, destructive: info?.destructive };
      if (choice.reason === undefined) delete choice.reason;
      if (choice.sideEffects === undefined) delete choice.sideEffects;
      if (choice.destructive !== true) delete choice.destructive;
      let gate;
      try {
        gate = await this.gate.request(supervisor, choice, signal);
      } catch (error) {
        if (error instanceof PromptInterrupted) throw abortError(signal);
        throw error;
      }
      if (!gate.approved) {
        exec.denied.add(variable);
        this.emit({ type: 'tool_settled', tool: command, outcome: 'denied' });
        return responder.fail(gate.text);
      }
      approval = gate.approval;
    }
    // 3. Run the command.
    const started = { type: 'tool_started' as const, tool: command };
    this.emit({ type: 'tool_started', tool: command, input: { args: [...args], raw: payload.raw } });
    await writeProgress(supervisor, started, this.log);
    if (signal.aborted) throw abortError(signal);
    const resume = exec.resume && exec.resume.command === command ? exec.resume : null;
    const extended: SessionCommandPayload = { ...payload, signal, session: this, approval, ...(resume ? { resume: { ...resume } } : {}) };
    if (supervisor) {
      markSupervised(extended, (request) => this.gate.request(supervisor, {
        toolName: request.toolName, params: { args: [...request.args], raw: [request.toolName, ...request.args].join(' ') }, origin: 'sop', variable, reason: request.reason, sideEffects: true,
      }, signal));
    }
    let outcome: 'ok' | 'error' | 'needs_input' = 'ok';
    const inspect = (value: unknown) => {
      const pause = pauseOf(value);
      if (pause) {
        const pending: PendingTool = { command, variable, message: pause.message };
        if (pause.step !== undefined) pending.step = pause.step;
        exec.paused = pending;
        this.#pendingTool = pending;
        this.#history.push({ type: 'awaiting_input', tool: command, variable, answer: pause.message });
        outcome = 'needs_input';
      } else if (this.#pendingTool && (!exec.paused || exec.paused.variable === variable)) {
        this.#pendingTool = null;
        if (exec.paused && exec.paused.variable === variable) exec.paused = null;
      }
    };
    const wrapping: Responder = {
      success: (data?: unknown) => {
        inspect(data);
        return responder.success(data);
      },
      fail: (reason?: unknown) => {
        inspect(reason);
        if (outcome !== 'needs_input') outcome = 'error';
        return responder.fail(reason);
      },
      cancel: (reason?: unknown) => {
        inspect(undefined);
        return responder.cancel(reason);
      },
    };
    try {
      const returned = await inner.executeCommand(extended, wrapping);
      // A result after the interrupt is not an `ok`: the prompt is interrupted and the value unused.
      this.emit({ type: 'tool_settled', tool: command, outcome: signal.aborted ? 'error' : outcome });
      return returned;
    } catch (error) {
      this.emit({ type: 'tool_settled', tool: command, outcome: 'error' });
      throw error;
    }
  }

}

function abortError(signal: AbortSignal): Error {
  const error = new Error(`aborted: ${String(signal.reason ?? '')}`);
  error.name = 'AbortError';
  return error;
}

/** The feedback block of attempt n > 1 (2.7). */
export function feedbackBlock(feedback: { failures: readonly PlanFailure[]; variables: Record<string, unknown> }): string {
  const lines = ['----', 'Execution feedback from the previous plan:'];
  lines.push('Failed variables:');
  if (feedback.failures.length === 0) lines.push('No variable failed, but the result was not accepted.');
  for (const f of feedback.failures) lines.push(`- ${f.variable}: ${f.reason}`);
  const names = Object.keys(feedback.variables);
  if (names.length > 0) {
    lines.push('Variable snapshot:');
    for (const name of names) {
      const v = feedback.variables[name];
      lines.push(`- ${name}: ${typeof v === 'string' ? v : v === null || v === undefined ? String(v) : typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
    }
  }
  lines.push('Change only the plan source. Failing commands may be retried with adjusted arguments or supplemented with new steps. The final line rule still applies.');
  return lines.join('\n');
}

export { ReservedNameError };
