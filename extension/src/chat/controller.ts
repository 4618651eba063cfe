/**
 * The host side of the chat panel (sessions.md section 5): one session registry per window, its
 * live loops as tabs, the supervisor that turns approvals and plan reviews into cards, the
 * per-message abort controllers, and the conversations saved for the next window. It imports
 * nothing from `vscode`: the editor comes in through a `ChatEnvironment` (provider, skills,
 * settings, storage, editors) and the page through a `ChatView`, so tests drive it with a fake
 * page and a scripted model server.
 *
 * The page never sees a session object, a handle or a controller: it gets JSON-safe panel events
 * (model.ts) and sends intents (protocol.ts), which are checked before anything happens. API keys
 * stay inside the provider the environment returns; they are never part of the state, the events
 * or the saved conversations.
 */
import { randomUUID } from 'node:crypto';
import { BUILTIN_COMMANDS, CANNOT_COMPLETE, CommandSurface, analyzePlan } from '@lightsop/core';
import type { CommandRegistry, LlmAgent } from '@lightsop/runtime';
import {
  ChangeError, SessionError, changeEffort, changeModel, combineRegistries, createSessionAgent, createSessionRegistry, createStandardSkills,
  defineAgentLoop, historyFromInitial, sessionCommands, stableStringify, toolsFromRegistry, type ApprovalDecision, type Change,
  type CommandId, type LoopDefinition, type LoopId, type LoopSession, type LoopTurnResult, type PlanReview, type PlanReviewDecision,
  type RegistryEvent, type SessionController, type SessionEvent, type SopSession, type Supervisor, type ToolChoice, type TurnOutcome,
} from '@lightsop/sessions';
import {
  BUILTIN_MODES, DEFAULT_MODEL, applyPanelEvent, emptyState, newTab, offersLoop, offersRetry, type ApprovalState, type ChatState, type Effort,
  type FailureView, type ModelOption, type OutcomeView, type PanelEvent, type PlanStep, type ProgressView, type ProviderView, type Regime,
  type RegistryEventView, type RestoredTurn, type ReviewState, type TabView,
} from './model';
import { parseFromChatWebview, type FromChatWebview, type ToChatWebview } from './protocol';

// ------------------------------------------------------------------ the environment

export type ProviderResolution =
  | {
      readonly ok: true;
      readonly agent: LlmAgent;
      /** What answers, for the panel ("qwen2.5:7b at http://…"); never contains a key. */
      readonly label: string;
      /** The model used when the picker says "default", for its label. */
      readonly defaultModel?: string;
      /** Models the picker offers besides the default. */
      readonly models: readonly ModelOption[];
    }
  | { readonly ok: false; readonly message: string };

export interface ChatSkills {
  /** The workspace's skills registry, or null (none configured, or not loaded: see `note`). */
  readonly registry: CommandRegistry | null;
  /** Shown in the panel when some skills are unavailable (e.g. an untrusted workspace). */
  readonly note: string | null;
  /** Changes when the skills file or its version changes. */
  readonly stamp: string;
}

export interface ChatSettings {
  readonly reviewPlans: 'off' | 'sideEffects' | 'always';
  readonly autoApproveReadOnly: boolean;
  readonly standardSkills: boolean;
}

export interface ChatStorage {
  get(key: string): unknown;
  update(key: string, value: unknown): PromiseLike<void>;
}

export interface ChatEnvironment {
  /** The workspace root: the standard file skills never leave it; null without a folder. */
  readonly projectRoot: string | null;
  /** The provider to use now (settings, secret storage, VS Code's language models). */
  resolveProvider(): Promise<ProviderResolution>;
  /** The workspace's skills, loaded under the trust rule of Run Plan. */
  loadSkills(): Promise<ChatSkills>;
  settings(): ChatSettings;
  /** Where conversations are kept across reloads (workspaceState). */
  readonly storage: ChatStorage;
  /** Opens a plan in an untitled LightSOPLang editor. */
  openPlan(plan: string): Promise<void>;
  /** Lets the user edit a plan under review; resolves with the saved text, or null when given up. */
  editPlan(plan: string, signal: AbortSignal): Promise<string | null>;
  configure(what: 'settings' | 'apiKey'): Promise<void>;
  /** Called when some loop starts or stops running (the Stop All keybinding's context). */
  onRunningChanged?(running: boolean): void;
  /** Called when a card waits for the user (approval, plan review), e.g. to notify when the panel is hidden. */
  onAttention?(text: string): void;
  log(line: string): void;
}

export interface ChatView {
  postMessage(message: ToChatWebview): unknown;
}

// ------------------------------------------------------------------ saved conversations (5.6)

export const STORAGE_KEY = 'lightsop.chat.conversations';
const MAX_SAVED_CONVERSATIONS = 20;
const MAX_SAVED_TURNS = 100;
const MAX_SAVED_TEXT = 20_000;

export interface SavedConversation {
  readonly mode: string;
  readonly model: string;
  readonly turns: readonly RestoredTurn[];
}

interface SavedChat {
  readonly version: 1;
  readonly conversations: readonly SavedConversation[];
}

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Reads saved conversations, dropping anything malformed. */
export function readSaved(raw: unknown): SavedConversation[] {
  if (typeof raw !== 'object' || raw === null || (raw as SavedChat).version !== 1 || !Array.isArray((raw as SavedChat).conversations)) return [];
  const out: SavedConversation[] = [];
  for (const c of (raw as SavedChat).conversations) {
    if (typeof c !== 'object' || c === null || !Array.isArray(c.turns)) continue;
    const turns: RestoredTurn[] = [];
    for (const t of c.turns) {
      if (typeof t !== 'object' || t === null || typeof t.user !== 'string' || typeof t.answer !== 'string') continue;
      turns.push({ user: cut(t.user, MAX_SAVED_TEXT), answer: cut(t.answer, MAX_SAVED_TEXT), kind: typeof t.kind === 'string' ? t.kind : 'answered' });
    }
    if (turns.length === 0) continue;
    out.push({
      mode: typeof c.mode === 'string' && BUILTIN_MODES.includes(c.mode) ? c.mode : 'sop',
      model: typeof c.model === 'string' && c.model.trim() !== '' ? c.model : DEFAULT_MODEL,
      turns: turns.slice(-MAX_SAVED_TURNS),
    });
    if (out.length >= MAX_SAVED_CONVERSATIONS) break;
  }
  return out;
}

/** The loop session's validated `initialHistory` for restored turns: pairs with blank texts are skipped (3.12). */
export function restoredHistory(turns: readonly RestoredTurn[]): { role: 'user' | 'assistant'; message: string }[] {
  const items = turns
    .filter((t) => t.user.trim() !== '' && t.answer.trim() !== '')
    .flatMap((t) => [{ role: 'user' as const, message: t.user }, { role: 'assistant' as const, message: t.answer }]);
  historyFromInitial(items);
  return items;
}

function restoredPrompt(turns: readonly RestoredTurn[]): string {
  const lines = turns.slice(-10).flatMap((t) => [`user: ${cut(t.user.replace(/\s+/g, ' '), 1000)}`, `answer: ${cut(t.answer.replace(/\s+/g, ' '), 1000)}`]);
  return [
    'Earlier conversation, restored from a previous VS Code window (its plans and tools did not run in this window and their results are not available):',
    ...lines,
  ].join('\n');
}

// ------------------------------------------------------------------ events for the page

const MAX_VALUE = 4_000;
const MAX_ANSWER = 100_000;
const MAX_FAILURES = 50;

/** A value as a preview text: strings as they are, anything else as pretty JSON; shortened. */
export function previewText(value: unknown, max = MAX_VALUE): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (value === undefined) text = '';
  else {
    try {
      text = JSON.stringify(value, null, 2) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return cut(text, max);
}

/** The declarations of a plan (name, command, dependencies, source text), from core's parser. */
export function planSteps(plan: string): PlanStep[] {
  if (!plan.trim()) return [];
  try {
    const analysis = analyzePlan(plan);
    return analysis.plan.declarations.filter((d) => d.name !== '').map((d) => ({
      name: d.name,
      command: d.command?.name ?? '',
      deps: [...d.dependencies],
      text: plan.slice(d.range.start, d.range.end),
      line: d.lineNumber,
      comment: d.comment,
    }));
  } catch {
    return [];
  }
}

function failuresView(failures: readonly { variable: string; reason: string; code?: string; line?: number }[]): FailureView[] {
  return failures.slice(0, MAX_FAILURES).map((f) => ({
    variable: String(f.variable), reason: cut(String(f.reason), 2000),
    ...(typeof f.code === 'string' ? { code: f.code } : {}), ...(typeof f.line === 'number' ? { line: f.line } : {}),
  }));
}

function loopOutcome(r: LoopTurnResult): OutcomeView {
  const text = cut(r.answer ?? '', MAX_ANSWER);
  switch (r.kind) {
    case 'answer':
      return { kind: 'answered', text, regime: 'loop' };
    case 'tool_failure':
      return { kind: 'failed', text, regime: 'loop', reason: 'tool_failure' };
    case 'limit':
      return { kind: 'failed', text, regime: 'loop', reason: `limit:${r.limit}` };
    case 'awaiting_input':
    case CANNOT_COMPLETE:
    case 'interrupted':
      return { kind: r.kind, text, regime: 'loop' };
    default:
      return { kind: 'error', text, regime: 'loop' };
  }
}

/** The registry's turn outcome as the panel shows it. */
export function outcomeView(o: TurnOutcome): OutcomeView {
  if (o.kind === 'interrupted') return { kind: 'interrupted', text: o.message, regime: null };
  if (o.kind === 'error') return { kind: 'error', text: o.message, regime: null };
  if (o.kind === 'loop') return loopOutcome(o.result);
  const sop = o.result;
  const plan = cut(sop.plan ?? '', MAX_ANSWER);
  if (o.fellBackToLoop) return { ...loopOutcome(o.fellBackToLoop), fellBack: { sopReason: sop.kind === 'failed' ? sop.reason : sop.kind }, plan };
  const text = sop.answer === null || sop.answer === undefined ? '' : previewText(sop.answer, MAX_ANSWER);
  switch (sop.kind) {
    case 'failed':
      return { kind: 'failed', text, regime: 'sop', reason: sop.reason, failures: failuresView(sop.failures), plan };
    default:
      return { kind: sop.kind, text, regime: 'sop', plan };
  }
}

/** A plan step's arguments (`{ args, raw }`), each whole, for the approval card. */
function argsOf(params: unknown): { args?: string[] } {
  const args = (params as { args?: unknown } | null)?.args;
  if (typeof params !== 'object' || params === null || !Array.isArray(args)) return {};
  return { args: args.map((a) => (typeof a === 'string' ? a : previewText(a, Number.POSITIVE_INFINITY))) };
}

function inputText(params: unknown): string {
  if (typeof params === 'string') return params;
  try {
    return JSON.stringify(JSON.parse(stableStringify(params)), null, 2);
  } catch {
    return String(params);
  }
}

function progressView(e: SessionEvent, loop: LoopSession | null): ProgressView | null {
  switch (e.type) {
    case 'prompt_started':
      return { type: 'prompt_started', promptIndex: e.promptIndex };
    case 'prompt_settled':
      return { type: 'prompt_settled', status: e.status };
    case 'tool_reason':
      return { type: 'tool_reason', tool: e.tool, reason: cut(e.reason, 2000), stepIndex: e.stepIndex };
    case 'approval_requested':
      return { type: 'approval_requested', tool: e.choice.toolName, origin: e.choice.origin, input: cut(inputText(e.choice.params), MAX_VALUE), ...(e.choice.variable ? { variable: e.choice.variable } : {}) };
    case 'approval_resolved':
      return {
        type: 'approval_resolved', tool: e.choice.toolName, origin: e.choice.origin, input: cut(inputText(e.choice.params), MAX_VALUE), verdict: e.verdict,
        ...(e.choice.variable ? { variable: e.choice.variable } : {}),
      };
    case 'tool_started':
      return { type: 'tool_started', tool: e.tool, origin: typeof e.input === 'string' ? 'loop' : 'sop', input: cut(inputText(e.input), MAX_VALUE) };
    case 'tool_settled': {
      const value = e.resultRef && loop ? loop.toolVars.get(e.resultRef) : undefined;
      return { type: 'tool_settled', tool: e.tool, outcome: e.outcome, ...(e.resultRef ? { resultRef: e.resultRef } : {}), ...(value !== undefined ? { preview: previewText(value, 1000) } : {}) };
    }
    case 'plan_generated':
      return { type: 'plan_generated', attempt: e.attempt, plan: cut(e.plan, MAX_ANSWER), previousPlan: cut(e.previousPlan, MAX_ANSWER), steps: planSteps(e.plan) };
    case 'plan_rejected':
      return { type: 'plan_rejected', attempt: e.attempt, failures: failuresView(e.failures) };
    case 'variable_status':
      return {
        type: 'variable_status', attempt: e.attempt, variable: e.variable, command: e.command, state: e.state,
        ...(e.value !== undefined ? { value: previewText(e.value) } : {}),
      };
    case 'history_compressed':
      return { type: 'history_compressed', compressedFromCount: e.compressedFromCount };
    default:
      return null;
  }
}

function modelView(m: { name: string; effort?: string | null }): { name: string; effort?: Effort | null } {
  return { name: m.name, ...(m.effort !== undefined ? { effort: m.effort as Effort | null } : {}) };
}

type Sessions = { sop: SopSession; loop: LoopSession | null };
type ChatRegistry = SessionController & { sessionsOf(id: LoopId): Sessions | undefined };

/** A registry event as the page receives it, or null for events the panel does not show. */
export function eventView(e: RegistryEvent, sessionsOf: (id: LoopId) => Sessions | undefined): RegistryEventView | null {
  const head = { seq: e.seq, ...(e.loopId ? { loopId: e.loopId as string } : {}) };
  switch (e.type) {
    case 'LoopStarted':
      return { ...head, type: e.type, parentLoopId: e.parentLoopId, name: e.name, displayName: e.displayName, mode: e.mode, model: modelView(e.model) };
    case 'ActiveLoopChanged':
      return { ...head, type: e.type, previousLoopId: e.previousLoopId, activeLoopId: e.activeLoopId };
    case 'LoopModeChanged':
      return { ...head, type: e.type, mode: e.mode, model: modelView(e.model) };
    case 'LoopInferenceChanged':
      return { ...head, type: e.type, model: modelView(e.model) };
    case 'InputQueued':
      return { ...head, type: e.type, commandId: e.commandId };
    case 'InputCancelled':
      return { ...head, type: e.type, commandId: e.commandId, reason: e.reason };
    case 'TurnStarted':
      return { ...head, type: e.type, commandId: e.commandId, regime: e.regime };
    case 'SessionProgress': {
      const view = progressView(e.event, e.loopId ? (sessionsOf(e.loopId)?.loop ?? null) : null);
      return view ? { ...head, type: e.type, commandId: e.commandId, event: view } : null;
    }
    case 'TurnSettled':
      return { ...head, type: e.type, commandId: e.commandId, outcome: outcomeView(e.outcome) };
    case 'LoopIdle':
    case 'LoopClosing':
    case 'LoopExited':
    case 'SessionStopped':
      return { ...head, type: e.type };
    case 'SessionFaulted':
      return { ...head, type: e.type, message: e.message };
    default:
      return null;
  }
}

function errorMessage(error: unknown): string {
  if (error instanceof ChangeError || error instanceof SessionError) return error.kind;
  return error instanceof Error ? error.message : String(error);
}

/** A registry whose commands can be swapped when the workspace's skills change. */
class SwitchableRegistry implements CommandRegistry {
  constructor(public current: CommandRegistry) {}
  listCommands() {
    return this.current.listCommands();
  }
  executeCommand(payload: Parameters<CommandRegistry['executeCommand']>[0], responder: Parameters<CommandRegistry['executeCommand']>[1]) {
    return this.current.executeCommand(payload, responder);
  }
}

interface PendingApproval {
  readonly loopId: string;
  answer(verdict: 'approve' | 'alwaysApprove' | 'deny', reason?: string): void;
}

interface PendingReview {
  readonly loopId: string;
  answer(decision: 'run' | 'edit' | 'cancelEdit' | 'reject', reason?: string): void;
}

/** The request a "Continue in loop mode" input carries: the request, the failed plan and its failures (5.1). */
export function continueInLoopText(request: string, outcome: OutcomeView): string {
  const failures = (outcome.failures ?? []).map((f) => `- ${f.variable}: ${f.reason}`);
  return [
    'Continue this request in loop mode, one tool at a time. A plan for it ran and failed; some of its commands may already have had effects, so check before repeating any of them.',
    '',
    `Request: ${request}`,
    '',
    'Failed plan:',
    outcome.plan || '(none)',
    '',
    'Failures:',
    ...(failures.length > 0 ? failures : ['(none reported)']),
  ].join('\n');
}

export interface ChatControllerOptions {
  /** How long shutdown waits for each loop to settle (default 3000 ms: deactivation is short). */
  readonly shutdownDrainMs?: number;
  /** Delay before conversations are saved after a turn (default 250 ms). */
  readonly saveDelayMs?: number;
}

export class ChatController {
  #state: ChatState = emptyState();
  #registry: ChatRegistry | null = null;
  #starting: Promise<ChatRegistry> | null = null;
  #view: ChatView | null = null;
  #viewReady = false;
  #outbox: PanelEvent[] = [];
  #flushScheduled = false;
  readonly #messages = new Map<string, AbortController>();
  readonly #approvals = new Map<string, PendingApproval>();
  readonly #reviews = new Map<string, PendingReview>();
  readonly #running = new Map<string, string>();
  #restoreQueue: SavedConversation[] = [];
  /** The tokens used by this panel's model requests so far. */
  #usage = { inputTokens: 0, outputTokens: 0 };
  readonly #skills = new SwitchableRegistry(combineRegistries());
  #skillsStamp: string | null = null;
  /** The commands the sessions offer (reserved names left out), read when the skills last changed. */
  #commands = CommandSurface.EMPTY;
  #saveTimer: ReturnType<typeof setTimeout> | null = null;
  #closed = false;
  #wasRunning = false;

  constructor(private readonly env: ChatEnvironment, private readonly options: ChatControllerOptions = {}) {}

  /** The host's copy of the view model (what a reloaded page gets). */
  get state(): ChatState {
    return this.#state;
  }

  /** The registry, once started (tests and the Stop All command). */
  get registry(): ChatRegistry | null {
    return this.#registry;
  }

  // ---------------------------------------------------------------- lifetime

  /** Builds the registry (once), restoring saved conversations. */
  start(): Promise<ChatRegistry> {
    if (!this.#starting) {
      this.#starting = this.#start().catch((error: unknown) => {
        this.#starting = null;
        throw error;
      });
    }
    return this.#starting;
  }

  async #start(): Promise<ChatRegistry> {
    await this.#syncSkills();
    const saved = readSaved(this.env.storage.get(STORAGE_KEY));
    this.#restoreQueue = saved.slice();
    const provider: LlmAgent = {
      executePrompt: async (prompt, options = {}) => {
        const resolved = await this.env.resolveProvider();
        if (!resolved.ok) throw new Error(resolved.message);
        const rest = { ...options };
        if (!rest.model || rest.model === DEFAULT_MODEL) delete rest.model;
        // Usage, where the provider reports it (the OpenAI-compatible one does): the panel's usage line.
        const callers = rest.onUsage;
        rest.onUsage = (usage) => {
          this.#usage = { inputTokens: this.#usage.inputTokens + usage.inputTokens, outputTokens: this.#usage.outputTokens + usage.outputTokens };
          this.#emit({ type: 'usage', usage: this.#usage });
          callers?.(usage);
        };
        return resolved.agent.executePrompt(prompt, rest);
      },
    };
    const agent = createSessionAgent(provider);
    const definition: LoopDefinition = {
      name: 'chat',
      displayName: 'Chat',
      model: { name: DEFAULT_MODEL },
      modes: [],
      initialMode: 'sop',
      createSessions: (context) => {
        const restored = this.#restoreQueue.shift() ?? null;
        let history: { role: 'user' | 'assistant'; message: string }[] = [];
        if (restored) {
          try {
            history = restoredHistory(restored.turns);
          } catch (error) {
            this.env.log(`restored conversation skipped: ${errorMessage(error)}`);
          }
        }
        const sessions = defineAgentLoop({
          name: 'chat', agent, model: { name: DEFAULT_MODEL }, registry: this.#skills,
          systemPrompt: history.length > 0 && restored ? restoredPrompt(restored.turns) : '',
          logger: (line) => this.env.log(line),
        }).createSessions(context);
        return { sop: sessions.sop, loop: (initial) => sessions.loop([...history, ...(initial ?? [])]) };
      },
    };
    const registry = await createSessionRegistry({
      definitions: [definition], roots: ['chat'], activeRoot: 'chat', projectRoot: this.env.projectRoot ?? process.cwd(),
      shutdownDrainMs: this.options.shutdownDrainMs ?? 3000,
      supervisor: ({ loopId }) => this.#supervisor(loopId),
    });
    this.#registry = registry;
    const restoredIds: { id: LoopId; conversation: SavedConversation }[] = [];
    const first = registry.activeLoop()!.id;
    if (saved[0]) restoredIds.push({ id: first, conversation: saved[0] });
    for (const conversation of saved.slice(1)) {
      try {
        restoredIds.push({ id: await registry.newLoop('chat'), conversation });
      } catch (error) {
        this.env.log(`a saved conversation was not restored: ${errorMessage(error)}`);
      }
    }
    this.#restoreQueue = [];
    for (const { id, conversation } of restoredIds) {
      if (conversation.mode !== 'sop') await registry.loopController(id)?.setMode(conversation.mode).catch(() => undefined);
    }
    this.#state = {
      ...this.#state,
      activeLoopId: registry.activeLoop()?.id ?? null,
      tabs: registry.loops().map((l) => newTab({ id: l.id, parentId: l.parentId, displayName: l.displayName, state: l.state, mode: l.mode, model: modelView(l.model) })),
    };
    registry.onEvent((event) => this.#onRegistryEvent(event));
    this.#resync();
    for (const { id, conversation } of restoredIds) this.#emit({ type: 'restored', loopId: id, turns: conversation.turns });
    await this.refreshConfig();
    for (const { id, conversation } of restoredIds) {
      if (conversation.model !== DEFAULT_MODEL && this.#state.models.some((m) => m.name === conversation.model)) {
        await registry.loopController(id)?.change([changeModel({ name: conversation.model })]).catch(() => undefined);
      }
    }
    return registry;
  }

  /** Window closing or deactivation: shut every loop down (bounded by the drain deadline), then release the registry. */
  async shutdown(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const registry = this.#starting ? await this.#starting.catch(() => null) : null;
    if (registry) {
      try {
        await registry.shutdown();
      } catch (error) {
        this.env.log(`chat shutdown: ${errorMessage(error)}`);
      }
      await this.#save();
      try {
        registry.dispose();
      } catch (error) {
        this.env.log(`chat dispose: ${errorMessage(error)}`);
      }
    }
    if (this.#saveTimer) clearTimeout(this.#saveTimer);
  }

  /** Connects a page; it gets the whole state when it says ready. Disposing the page stops nothing. */
  attach(view: ChatView): { dispose(): void } {
    this.#view = view;
    this.#viewReady = false;
    this.#outbox = [];
    return {
      dispose: () => {
        if (this.#view === view) {
          this.#view = null;
          this.#viewReady = false;
          this.#outbox = [];
        }
      },
    };
  }

  /** Re-reads the provider and settings for the header and the pickers. */
  async refreshConfig(): Promise<void> {
    const resolved = await this.env.resolveProvider().catch((error: unknown): { ok: false; message: string } => ({ ok: false, message: errorMessage(error) }));
    const provider: ProviderView = resolved.ok ? { ready: true, label: resolved.label, message: null } : { ready: false, label: '', message: resolved.message };
    const models: ModelOption[] = [{ name: DEFAULT_MODEL, label: resolved.ok ? `Default (${resolved.defaultModel ?? resolved.label})` : 'Default model' }];
    if (resolved.ok) for (const m of resolved.models) if (m.name !== DEFAULT_MODEL && !models.some((x) => x.name === m.name)) models.push(m);
    const skills = await this.env.loadSkills().catch((error: unknown) => ({ note: errorMessage(error) }));
    this.#emit({ type: 'config', provider, skillsNote: skills.note, models, reviewPlans: this.env.settings().reviewPlans });
  }

  /** Reloads the workspace's skills when they changed, and refreshes every loop's surface. */
  async reloadSkills(): Promise<void> {
    const changed = await this.#syncSkills();
    if (changed) await this.refreshConfig();
  }

  async #syncSkills(): Promise<boolean> {
    const skills = await this.env.loadSkills().catch((error: unknown): ChatSkills => ({ registry: null, note: errorMessage(error), stamp: `error:${errorMessage(error)}` }));
    const settings = this.env.settings();
    const stdlib = settings.standardSkills && this.env.projectRoot ? createStandardSkills({ root: this.env.projectRoot }) : null;
    const stamp = `${skills.stamp}|${stdlib ? 'stdlib' : 'none'}`;
    if (stamp === this.#skillsStamp) return false;
    const before = this.#commands;
    this.#skills.current = combineRegistries(skills.registry, stdlib);
    this.#skillsStamp = stamp;
    const after = sessionCommands(this.#skills);
    this.#commands = after;
    const change = {
      added: after.names.filter((n) => !before.has(n)),
      removed: before.names.filter((n) => !after.has(n)),
      updated: after.names.filter((n) => before.has(n) && before.get(n)!.description !== after.get(n)!.description),
    };
    const registry = this.#registry;
    if (registry) {
      for (const info of registry.loops()) {
        const sessions = registry.sessionsOf(info.id);
        if (!sessions) continue;
        try {
          sessions.sop.replaceSkillSurface({ skillsDescription: after.describe(), commandsRegistry: this.#skills }, change);
          sessions.loop?.replaceTools(toolsFromRegistry(this.#skills), change);
        } catch (error) {
          this.env.log(`skills not refreshed for a conversation: ${errorMessage(error)}`);
        }
      }
      this.env.log(`skills refreshed: +${change.added.length} ~${change.updated.length} -${change.removed.length}`);
    }
    return true;
  }

  // ---------------------------------------------------------------- the supervisor (5.5, 5.4)

  #supervisor(loopId: LoopId): Supervisor {
    return {
      approve: (choice, { signal }) => this.#approve(loopId, choice, signal),
      reviewPlan: (review, { signal }) => this.#review(loopId, review, signal),
    };
  }

  #approve(loopId: string, choice: ToolChoice, signal: AbortSignal): Promise<ApprovalDecision> {
    if (choice.sideEffects === false && this.env.settings().autoApproveReadOnly) return Promise.resolve('approve');
    if (signal.aborted) return Promise.resolve({ decision: 'deny', reason: 'Cancelled' });
    const id = randomUUID();
    return new Promise<ApprovalDecision>((resolve) => {
      const finish = (decision: ApprovalDecision, state: Exclude<ApprovalState, 'open'>, reason?: string) => {
        if (!this.#approvals.delete(id)) return;
        signal.removeEventListener('abort', onAbort);
        this.#emit({ type: 'approval_closed', loopId, id, state, ...(reason ? { reason } : {}) });
        resolve(decision);
      };
      // The card is bound to the prompt signal: an interrupted turn closes it as a denial.
      const onAbort = () => finish({ decision: 'deny', reason: 'Cancelled' }, 'cancelled');
      this.#approvals.set(id, {
        loopId,
        answer: (verdict, reason) => {
          if (verdict === 'approve') finish('approve', 'approved');
          // A destructive tool is asked about every time: an "always" (which its card never offers) is not an answer.
          else if (verdict === 'alwaysApprove') {
            if (choice.destructive !== true) finish('alwaysApprove', 'always');
          }
          else {
            const why = reason?.trim() ?? '';
            finish({ decision: 'deny', reason: why || 'denied by the user' }, 'denied', why || undefined);
          }
        },
      });
      signal.addEventListener('abort', onAbort, { once: true });
      this.env.onAttention?.(`${choice.toolName} is waiting for your approval in the chat.`);
      this.#emit({
        type: 'approval_opened', loopId, commandId: this.#running.get(loopId) ?? null,
        approval: {
          // The input is whole: a card that cut it would ask approval for text nobody saw.
          id, tool: choice.toolName, origin: choice.origin, input: inputText(choice.params), ...argsOf(choice.params),
          key: cut(`${choice.toolName} ${stableStringify(choice.params)}`, MAX_VALUE),
          sideEffects: typeof choice.sideEffects === 'boolean' ? choice.sideEffects : null,
          ...(choice.destructive === true ? { destructive: true } : {}),
          ...(choice.variable ? { variable: choice.variable } : {}), ...(choice.reason ? { reason: cut(choice.reason, 2000) } : {}),
        },
      });
    });
  }

  /** True when a plan uses a command that is not declared free of side effects. */
  #usesSideEffects(steps: readonly PlanStep[]): boolean {
    return steps.some((s) => !BUILTIN_COMMANDS.includes(s.command) && this.#commands.get(s.command)?.sideEffects !== false);
  }

  #review(loopId: string, review: PlanReview, signal: AbortSignal): Promise<PlanReviewDecision> {
    const mode = this.env.settings().reviewPlans;
    if (mode === 'off') return Promise.resolve('approve');
    const steps = planSteps(review.plan);
    if (mode === 'sideEffects' && !this.#usesSideEffects(steps)) return Promise.resolve('approve');
    if (signal.aborted) return Promise.resolve({ decision: 'reject', reason: 'Cancelled' });
    const id = randomUUID();
    return new Promise<PlanReviewDecision>((resolve) => {
      let edit: AbortController | null = null;
      const state = (s: ReviewState, reason?: string) => this.#emit({ type: 'review_state', loopId, id, state: s, ...(reason ? { reason } : {}) });
      const finish = (decision: PlanReviewDecision, s: ReviewState, reason?: string) => {
        if (!this.#reviews.delete(id)) return;
        signal.removeEventListener('abort', onAbort);
        edit?.abort();
        state(s, reason);
        resolve(decision);
      };
      const onAbort = () => finish({ decision: 'reject', reason: 'Cancelled' }, 'cancelled');
      this.#reviews.set(id, {
        loopId,
        answer: (decision, reason) => {
          if (decision === 'run') finish('approve', 'run');
          else if (decision === 'reject') finish({ decision: 'reject', ...(reason?.trim() ? { reason: reason.trim() } : {}) }, 'rejected', reason?.trim() || undefined);
          else if (decision === 'cancelEdit') edit?.abort();
          else if (!edit) {
            const controller = new AbortController();
            edit = controller;
            state('editing');
            const editSignal = AbortSignal.any([signal, controller.signal]);
            this.env.editPlan(review.plan, editSignal).then(
              (text) => {
                if (edit === controller) edit = null;
                if (text !== null && text.trim() !== '' && !signal.aborted) finish({ decision: 'edit', plan: text }, 'edited');
                else if (this.#reviews.has(id)) state('open');
              },
              (error: unknown) => {
                if (edit === controller) edit = null;
                this.#emit({ type: 'notice', loopId, level: 'error', text: `The plan could not be opened for editing: ${errorMessage(error)}` });
                if (this.#reviews.has(id)) state('open');
              },
            );
          }
        },
      });
      signal.addEventListener('abort', onAbort, { once: true });
      this.env.onAttention?.(`A plan is waiting for your review in the chat.`);
      this.#emit({
        type: 'review_opened', loopId, commandId: this.#running.get(loopId) ?? null,
        review: { id, attempt: review.attempt, plan: review.plan, previousPlan: review.previousPlan, steps, previousSteps: planSteps(review.previousPlan) },
      });
    });
  }

  // ---------------------------------------------------------------- events

  #onRegistryEvent(event: RegistryEvent): void {
    const registry = this.#registry;
    if (!registry) return;
    if (event.type === 'TurnStarted' && event.loopId) this.#running.set(event.loopId, event.commandId);
    const view = eventView(event, (id) => registry.sessionsOf(id));
    if (view) this.#emit({ type: 'registry', event: view });
    if (event.type === 'TurnSettled' || event.type === 'InputCancelled') {
      this.#messages.delete(event.commandId);
      if (event.loopId && this.#running.get(event.loopId) === event.commandId) this.#running.delete(event.loopId);
      if (event.type === 'TurnSettled') this.#scheduleSave();
    }
    if (event.type === 'LoopExited' && event.loopId) this.#running.delete(event.loopId);
    const running = this.#running.size > 0;
    if (running !== this.#wasRunning) {
      this.#wasRunning = running;
      this.env.onRunningChanged?.(running);
    }
  }

  #emit(event: PanelEvent): void {
    this.#state = applyPanelEvent(this.#state, event);
    if (!this.#view || !this.#viewReady) return;
    this.#outbox.push(event);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      const events = this.#outbox;
      this.#outbox = [];
      if (events.length > 0 && this.#view && this.#viewReady) this.#post({ type: 'events', events });
    });
  }

  /** Sends the whole state to a page that is already showing an older one. */
  #resync(): void {
    if (!this.#view || !this.#viewReady) return;
    this.#outbox = [];
    this.#post({ type: 'state', state: this.#state });
  }

  #post(message: ToChatWebview): void {
    try {
      const r = this.#view?.postMessage(message) as { then?: unknown } | undefined;
      if (r && typeof r.then === 'function') (r as PromiseLike<unknown>).then(undefined, () => undefined);
    } catch (error) {
      this.env.log(`chat: could not post to the page: ${errorMessage(error)}`);
    }
  }

  #tab(loopId: string): TabView | undefined {
    return this.#state.tabs.find((t) => t.id === loopId);
  }

  // ---------------------------------------------------------------- persistence

  #scheduleSave(): void {
    if (this.#saveTimer) clearTimeout(this.#saveTimer);
    this.#saveTimer = setTimeout(() => {
      this.#saveTimer = null;
      void this.#save();
    }, this.options.saveDelayMs ?? 250);
  }

  /** What is saved: per visible conversation, its mode, model and (user, answer) pairs. No secrets, no session state. */
  savedConversations(): SavedConversation[] {
    const out: SavedConversation[] = [];
    for (const tab of this.#state.tabs) {
      if (tab.hidden || tab.parentId !== null) continue;
      const turns: RestoredTurn[] = [...tab.restored];
      for (const turn of tab.turns) {
        if (turn.status !== 'settled' || turn.text === null || !turn.outcome) continue;
        turns.push({ user: cut(turn.text, MAX_SAVED_TEXT), answer: cut(turn.outcome.text, MAX_SAVED_TEXT), kind: turn.outcome.kind });
      }
      if (turns.length === 0) continue;
      out.push({ mode: tab.mode, model: tab.model.name, turns: turns.slice(-MAX_SAVED_TURNS) });
    }
    return out.slice(-MAX_SAVED_CONVERSATIONS);
  }

  async #save(): Promise<void> {
    if (this.#saveTimer) {
      clearTimeout(this.#saveTimer);
      this.#saveTimer = null;
    }
    const value: SavedChat = { version: 1, conversations: this.savedConversations() };
    try {
      await this.env.storage.update(STORAGE_KEY, value);
    } catch (error) {
      this.env.log(`chat: conversations not saved: ${errorMessage(error)}`);
    }
  }

  // ---------------------------------------------------------------- intents

  /** Handles one message from the page (checked first; anything malformed is ignored). */
  async handleMessage(raw: unknown): Promise<void> {
    const message = parseFromChatWebview(raw);
    if (!message) {
      this.env.log('chat: ignored a malformed message from the page');
      return;
    }
    try {
      await this.#handle(message);
    } catch (error) {
      const loopId = 'loopId' in message ? message.loopId : null;
      this.#emit({ type: 'notice', loopId: loopId && this.#tab(loopId) ? loopId : null, level: 'error', text: errorMessage(error) });
    }
  }

  async #handle(m: FromChatWebview): Promise<void> {
    if (m.type === 'ready') {
      this.#viewReady = true;
      this.#outbox = [];
      this.#post({ type: 'state', state: this.#state });
      return;
    }
    if (m.type === 'configure') {
      await this.env.configure(m.what);
      return;
    }
    if (m.type === 'approval') {
      this.#approvals.get(m.id)?.answer(m.decision, m.reason);
      return;
    }
    if (m.type === 'review') {
      this.#reviews.get(m.id)?.answer(m.decision, m.reason);
      return;
    }
    if (this.#closed) {
      this.#emit({ type: 'notice', loopId: null, level: 'error', text: 'The chat is shutting down.' });
      return;
    }
    const registry = await this.start();
    if (m.type === 'stopAll') {
      await this.stopAll();
      return;
    }
    if (m.type === 'newConversation') {
      const id = await registry.newLoop('chat');
      await registry.setActiveLoop(id);
      return;
    }
    const loopId = m.loopId as LoopId;
    const tab = this.#tab(loopId);
    if (!tab || !registry.loop(loopId)) {
      this.#emit({ type: 'notice', loopId: null, level: 'error', text: 'That conversation does not exist in this window.' });
      return;
    }
    switch (m.type) {
      case 'send':
        await this.#send(registry, loopId, m.text);
        return;
      case 'cancelQueued': {
        const removed = await registry.cancelQueued(loopId, m.commandId as CommandId);
        // Already started: the message's own signal stops it.
        if (!removed) this.#messages.get(m.commandId)?.abort('user');
        return;
      }
      case 'stop': {
        const ids = this.#subtree(loopId).filter((id) => this.#tab(id)?.runningCommandId);
        if (ids.length > 0) this.#emit({ type: 'stopping', loopIds: ids });
        await registry.loopController(loopId)?.interrupt({ reason: 'user' });
        return;
      }
      case 'selectTab':
        try {
          await registry.setActiveLoop(loopId);
        } catch (error) {
          // The highlight stays where it was: it follows ActiveLoopChanged only.
          this.#emit({ type: 'notice', loopId: this.#state.activeLoopId ?? loopId, level: 'error', text: `Cannot switch to that conversation: ${errorMessage(error)}` });
        }
        return;
      case 'closeTab': {
        this.#emit({ type: 'tab_hidden', loopId, hidden: true });
        if (this.#state.activeLoopId === loopId) {
          const next = this.#state.tabs.find((t) => !t.hidden && t.id !== loopId && t.state !== 'exited');
          if (next) await registry.setActiveLoop(next.id as LoopId).catch(() => undefined);
        }
        this.#scheduleSave();
        return;
      }
      case 'setMode': {
        const controller = registry.loopController(loopId)!;
        this.#emit({ type: 'picker', loopId, pending: { what: 'mode', value: m.mode }, error: null });
        try {
          await controller.setMode(m.mode);
          this.#emit({ type: 'picker', loopId, pending: null, error: null });
        } catch (error) {
          this.#emit({ type: 'picker', loopId, pending: null, error: `mode not changed: ${errorMessage(error)}` });
        }
        return;
      }
      case 'setInference': {
        const controller = registry.loopController(loopId)!;
        const changes: Change[] = [];
        if (m.model !== undefined) changes.push(changeModel({ name: m.model }));
        if (m.effort !== undefined) changes.push(changeEffort(m.effort));
        this.#emit({ type: 'picker', loopId, pending: { what: 'inference', value: [m.model, m.effort].filter(Boolean).join(' · ') }, error: null });
        try {
          await controller.change(changes);
          this.#emit({ type: 'picker', loopId, pending: null, error: null });
        } catch (error) {
          this.#emit({ type: 'picker', loopId, pending: null, error: `model not changed: ${errorMessage(error)}` });
        }
        return;
      }
      case 'continueInLoop': {
        const turn = tab.turns.find((t) => t.commandId === m.commandId);
        if (!turn || turn.text === null || !offersLoop(turn.outcome)) return;
        await this.#send(registry, loopId, continueInLoopText(turn.text, turn.outcome!), 'loop');
        return;
      }
      case 'retry': {
        const turn = tab.turns.find((t) => t.commandId === m.commandId);
        if (!turn || turn.text === null || !offersRetry(turn.outcome)) return;
        await this.#send(registry, loopId, turn.text);
        return;
      }
      case 'openPlan': {
        const turn = tab.turns.find((t) => t.commandId === m.commandId);
        const plan = turn?.attempts.find((a) => a.attempt === m.attempt)?.plan;
        if (plan) await this.env.openPlan(plan);
        return;
      }
      default:
        return;
    }
  }

  /** The loop and every loop below it in the delegation tree. */
  #subtree(loopId: string): string[] {
    const out = [loopId];
    for (let i = 0; i < out.length; i++) for (const t of this.#state.tabs) if (t.parentId === out[i]) out.push(t.id);
    return out;
  }

  async #send(registry: ChatRegistry, loopId: LoopId, text: string, regime?: Regime): Promise<void> {
    const provider = await this.env.resolveProvider();
    if (!provider.ok) {
      await this.refreshConfig();
      this.#emit({ type: 'notice', loopId, level: 'error', text: provider.message });
      return;
    }
    await this.#syncSkills();
    const controller = new AbortController();
    let commandId: CommandId;
    try {
      commandId = await registry.submitToLoop(loopId, { text, signal: controller.signal, ...(regime ? { regime } : {}) });
    } catch (error) {
      this.#emit({ type: 'notice', loopId, level: 'error', text: `Not sent: ${errorMessage(error)}` });
      return;
    }
    const turn = this.#tab(loopId)?.turns.find((t) => t.commandId === commandId);
    if (!turn || (turn.status !== 'settled' && turn.status !== 'cancelled')) this.#messages.set(commandId, controller);
    this.#emit({ type: 'user_message', loopId, commandId, text });
  }

  /** "Stop all": interrupts every running loop. */
  async stopAll(): Promise<boolean> {
    const registry = this.#registry;
    if (!registry) return false;
    const ids = this.#state.tabs.filter((t) => t.runningCommandId).map((t) => t.id);
    if (ids.length > 0) this.#emit({ type: 'stopping', loopIds: ids });
    return registry.interrupt({ reason: 'user' });
  }
}
