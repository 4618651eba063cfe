/**
 * The chat panel's view model and the one reducer that builds it, shared by the extension host
 * and the webview page. The host turns registry events (and its own approval, review and tab
 * events) into JSON-safe `PanelEvent`s, applies each to its copy of the state and posts it; the
 * page applies the same events to its copy, so both always agree, and a reloaded page gets the
 * host's state whole. No `vscode`, no DOM, no session objects: plain data only.
 */
import type { CANNOT_COMPLETE } from '@lightsop/core';

export type Regime = 'sop' | 'loop' | 'plan';
export type LoopState = 'registered' | 'running' | 'idle' | 'closing' | 'exited';
export type VariableState = 'undefined' | 'running' | 'success' | 'fail' | 'canceled' | 'awaiting_input';
export const EFFORTS = ['minimal', 'low', 'medium', 'high'] as const;
export type Effort = (typeof EFFORTS)[number];
export const BUILTIN_MODES: readonly string[] = ['sop', 'loop', 'plan'];
/** The model name that means "whatever the provider is configured with". */
export const DEFAULT_MODEL = 'default';

/** Most turns a tab keeps in the view model (older ones drop off the top). */
export const MAX_TURNS = 200;

export interface ModelView {
  readonly name: string;
  readonly effort?: Effort | null;
}

/** One declaration of a generated plan, as the host's parser (core's analyzePlan) saw it. */
export interface PlanStep {
  readonly name: string;
  readonly command: string;
  readonly deps: readonly string[];
  /** The declaration's source text (header and body), for the diff. */
  readonly text: string;
  readonly line: number;
  readonly comment: string;
}

export interface FailureView {
  readonly variable: string;
  readonly reason: string;
  readonly code?: string;
  readonly line?: number;
}

/** A `SessionEvent` (sessions.md 1.6) as the panel shows it: values are preview texts. */
export type ProgressView =
  | { readonly type: 'prompt_started'; readonly promptIndex: number }
  | { readonly type: 'prompt_settled'; readonly status: string }
  | { readonly type: 'tool_reason'; readonly tool: string; readonly reason: string; readonly stepIndex: number | null }
  | { readonly type: 'approval_requested'; readonly tool: string; readonly origin: 'sop' | 'loop'; readonly input: string; readonly variable?: string }
  | {
      readonly type: 'approval_resolved'; readonly tool: string; readonly origin: 'sop' | 'loop'; readonly input: string; readonly variable?: string;
      readonly verdict: 'approve' | 'alwaysApprove' | 'deny' | 'cached';
    }
  | { readonly type: 'tool_started'; readonly tool: string; readonly origin: 'sop' | 'loop'; readonly input: string }
  | { readonly type: 'tool_settled'; readonly tool: string; readonly outcome: 'ok' | 'error' | 'denied' | 'needs_input'; readonly resultRef?: string; readonly preview?: string }
  | { readonly type: 'plan_generated'; readonly attempt: number; readonly plan: string; readonly previousPlan: string; readonly steps: readonly PlanStep[] }
  | { readonly type: 'plan_rejected'; readonly attempt: number; readonly failures: readonly FailureView[] }
  | { readonly type: 'variable_status'; readonly attempt: number; readonly variable: string; readonly command: string; readonly state: VariableState; readonly value?: string }
  | { readonly type: 'history_compressed'; readonly compressedFromCount: number };

/** How a settled turn ended (the registry's `TurnOutcome`, flattened for display). */
export interface OutcomeView {
  readonly kind: 'answered' | 'awaiting_input' | 'plan_only' | typeof CANNOT_COMPLETE | 'failed' | 'interrupted' | 'error';
  /** The answer or message shown to the user. */
  readonly text: string;
  /** The session that produced the result (null for interruptions and errors). */
  readonly regime: 'sop' | 'loop' | null;
  /** `failed`: the SOP reason (no_plan, plan_invalid, plan_rejected, execution_failed) or the loop's (tool_failure, limit:steps, …). */
  readonly reason?: string;
  readonly failures?: readonly FailureView[];
  /** The SOP session found no valid plan and the loop session answered in the same turn. */
  readonly fellBack?: { readonly sopReason: string };
  /** The SOP plan of the turn ('' when none). */
  readonly plan?: string;
}

/** A registry event (sessions.md 4.12) as the panel receives it: header fields it uses, JSON-safe body. */
export type RegistryEventView = { readonly seq: number; readonly loopId?: string } & (
  | { readonly type: 'LoopStarted'; readonly parentLoopId: string | null; readonly name: string; readonly displayName: string; readonly mode: string; readonly model: ModelView }
  | { readonly type: 'ActiveLoopChanged'; readonly previousLoopId: string | null; readonly activeLoopId: string }
  | { readonly type: 'LoopModeChanged'; readonly mode: string; readonly model: ModelView }
  | { readonly type: 'LoopInferenceChanged'; readonly model: ModelView }
  | { readonly type: 'InputQueued'; readonly commandId: string }
  | { readonly type: 'InputCancelled'; readonly commandId: string; readonly reason: 'cancelled' | 'shutdown' }
  | { readonly type: 'TurnStarted'; readonly commandId: string; readonly regime: Regime }
  | { readonly type: 'SessionProgress'; readonly commandId: string; readonly event: ProgressView }
  | { readonly type: 'TurnSettled'; readonly commandId: string; readonly outcome: OutcomeView }
  | { readonly type: 'LoopIdle' }
  | { readonly type: 'LoopClosing' }
  | { readonly type: 'LoopExited' }
  | { readonly type: 'SessionStopped' }
  | { readonly type: 'SessionFaulted'; readonly message: string }
);

export interface ApprovalRequestView {
  readonly id: string;
  readonly tool: string;
  readonly origin: 'sop' | 'loop';
  readonly variable?: string;
  readonly reason?: string;
  /** The whole input, pretty-printed (never cut: nothing may run that the card does not show). */
  readonly input: string;
  /** A plan step's arguments, each whole: the card shows where each begins and ends. */
  readonly args?: readonly string[];
  /** The stable serialisation that "Always approve this exact call" caches. */
  readonly key: string;
  /** As declared; null = unknown (treated as having side effects). */
  readonly sideEffects: boolean | null;
  /** An MCP tool's destructiveHint: asked about every time, so the card offers no "always". */
  readonly destructive?: boolean;
}
export type ApprovalState = 'open' | 'approved' | 'always' | 'denied' | 'cancelled';
export interface ApprovalView extends ApprovalRequestView {
  readonly state: ApprovalState;
  readonly denyReason?: string;
}

export interface ReviewRequestView {
  readonly id: string;
  readonly attempt: number;
  readonly plan: string;
  readonly previousPlan: string;
  readonly steps: readonly PlanStep[];
  readonly previousSteps: readonly PlanStep[];
}
export type ReviewState = 'open' | 'editing' | 'run' | 'edited' | 'rejected' | 'cancelled';
export interface ReviewView extends ReviewRequestView {
  readonly state: ReviewState;
  readonly reason?: string;
}

export interface VariableRow {
  readonly variable: string;
  readonly command: string;
  readonly state: VariableState;
  readonly value?: string;
}

export interface AttemptView {
  readonly attempt: number;
  readonly plan: string;
  readonly previousPlan: string;
  readonly steps: readonly PlanStep[];
  readonly failures: readonly FailureView[];
  readonly variables: readonly VariableRow[];
}

export interface StepView {
  readonly reason: string | null;
  readonly tool: string;
  readonly input: string | null;
  readonly approval: 'pending' | 'approved' | 'always' | 'denied' | 'cached' | null;
  readonly outcome: 'running' | 'ok' | 'error' | 'denied' | 'needs_input' | null;
  readonly resultRef?: string;
  readonly preview?: string;
}

export interface TurnView {
  readonly commandId: string;
  /** The user's message (null until the host has told which text the command carries). */
  readonly text: string | null;
  readonly status: 'queued' | 'running' | 'settled' | 'cancelled';
  readonly regime: Regime | null;
  /** Which session the progress events belong to: the SOP session, then the loop session after a fallback. */
  readonly phase: 'sop' | 'loop';
  readonly prompts: number;
  readonly attempts: readonly AttemptView[];
  readonly progress: readonly string[];
  readonly steps: readonly StepView[];
  readonly approvals: readonly ApprovalView[];
  readonly reviews: readonly ReviewView[];
  readonly outcome: OutcomeView | null;
  readonly compressed?: number;
}

/** A turn restored from an earlier window: shown, never claimed to have run here. */
export interface RestoredTurn {
  readonly user: string;
  readonly answer: string;
  readonly kind: string;
}

export interface NoticeView {
  readonly level: 'info' | 'error';
  readonly text: string;
  /** Increases with every notice, so the page can tell a repeated text apart. */
  readonly serial: number;
}

export type PickerChange = { readonly what: 'mode'; readonly value: string } | { readonly what: 'inference'; readonly value: string };

export interface TabView {
  readonly id: string;
  readonly parentId: string | null;
  readonly displayName: string;
  readonly state: LoopState;
  readonly mode: string;
  readonly model: ModelView;
  /** Command ids of inputs waiting in the loop's queue, in order. */
  readonly queued: readonly string[];
  readonly hidden: boolean;
  /** Stop was pressed; cleared when the interrupted turn settles. */
  readonly stopping: boolean;
  readonly runningCommandId: string | null;
  readonly restored: readonly RestoredTurn[];
  readonly turns: readonly TurnView[];
  readonly notice: NoticeView | null;
  readonly picker: { readonly pending: PickerChange | null; readonly error: string | null };
}

export interface ProviderView {
  readonly ready: boolean;
  /** What answers: "qwen2.5:7b at http://…", "VS Code language model: …". */
  readonly label: string;
  /** Why nothing is configured, when not ready. */
  readonly message: string | null;
}

export interface ModelOption {
  readonly name: string;
  readonly label: string;
}

export interface ChatState {
  readonly provider: ProviderView;
  /** Why some skills are missing (untrusted workspace, a JSON description, a load error). */
  readonly skillsNote: string | null;
  readonly modes: readonly string[];
  readonly models: readonly ModelOption[];
  readonly efforts: readonly Effort[];
  readonly reviewPlans: 'off' | 'sideEffects' | 'always';
  readonly activeLoopId: string | null;
  readonly tabs: readonly TabView[];
  readonly notice: NoticeView | null;
  /** The serial of the newest notice (both copies of the state count the same way). */
  readonly noticeSerial: number;
  readonly stopped: boolean;
  readonly faulted: string | null;
  /** The tokens the panel's model requests have used, as the provider reported them (null before any). */
  readonly usage: UsageView | null;
}

export interface UsageView {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** Everything the host tells the page, in order. */
export type PanelEvent =
  | { readonly type: 'registry'; readonly event: RegistryEventView }
  | { readonly type: 'user_message'; readonly loopId: string; readonly commandId: string; readonly text: string }
  | { readonly type: 'approval_opened'; readonly loopId: string; readonly commandId: string | null; readonly approval: ApprovalRequestView }
  | { readonly type: 'approval_closed'; readonly loopId: string; readonly id: string; readonly state: Exclude<ApprovalState, 'open'>; readonly reason?: string }
  | { readonly type: 'review_opened'; readonly loopId: string; readonly commandId: string | null; readonly review: ReviewRequestView }
  | { readonly type: 'review_state'; readonly loopId: string; readonly id: string; readonly state: ReviewState; readonly reason?: string }
  | { readonly type: 'tab_hidden'; readonly loopId: string; readonly hidden: boolean }
  | { readonly type: 'stopping'; readonly loopIds: readonly string[] }
  | { readonly type: 'usage'; readonly usage: UsageView }
  | { readonly type: 'notice'; readonly loopId: string | null; readonly level: 'info' | 'error'; readonly text: string }
  | { readonly type: 'picker'; readonly loopId: string; readonly pending: PickerChange | null; readonly error: string | null }
  | { readonly type: 'restored'; readonly loopId: string; readonly turns: readonly RestoredTurn[] }
  | {
      readonly type: 'config'; readonly provider: ProviderView; readonly skillsNote: string | null; readonly models: readonly ModelOption[];
      readonly reviewPlans: 'off' | 'sideEffects' | 'always';
    };

// ------------------------------------------------------------------ construction

export function emptyState(): ChatState {
  return {
    provider: { ready: false, label: '', message: null },
    skillsNote: null,
    modes: BUILTIN_MODES,
    models: [{ name: DEFAULT_MODEL, label: 'Default model' }],
    efforts: EFFORTS,
    reviewPlans: 'off',
    activeLoopId: null,
    tabs: [],
    notice: null,
    noticeSerial: 0,
    stopped: false,
    faulted: null,
    usage: null,
  };
}

export function newTab(init: { id: string; parentId: string | null; displayName: string; state: LoopState; mode: string; model: ModelView; queued?: readonly string[] }): TabView {
  return {
    id: init.id, parentId: init.parentId, displayName: init.displayName, state: init.state, mode: init.mode, model: init.model,
    queued: init.queued ?? [], hidden: false, stopping: false, runningCommandId: null, restored: [], turns: [], notice: null,
    picker: { pending: null, error: null },
  };
}

function newTurn(commandId: string): TurnView {
  return { commandId, text: null, status: 'queued', regime: null, phase: 'sop', prompts: 0, attempts: [], progress: [], steps: [], approvals: [], reviews: [], outcome: null };
}

// ------------------------------------------------------------------ the reducer


function mapTab(state: ChatState, id: string | undefined, fn: (tab: TabView) => TabView): ChatState {
  if (!id) return state;
  const i = state.tabs.findIndex((t) => t.id === id);
  if (i < 0) return state;
  const tabs = state.tabs.slice();
  tabs[i] = fn(tabs[i]!);
  return { ...state, tabs };
}

/** Applies `fn` to the turn `commandId` of `tab`, creating it (at the end) when it is new. */
function mapTurn(tab: TabView, commandId: string, fn: (turn: TurnView) => TurnView, create = true): TabView {
  const i = tab.turns.findIndex((t) => t.commandId === commandId);
  if (i < 0 && !create) return tab;
  const turns = tab.turns.slice();
  if (i < 0) turns.push(fn(newTurn(commandId)));
  else turns[i] = fn(turns[i]!);
  return { ...tab, turns: turns.length > MAX_TURNS ? turns.slice(turns.length - MAX_TURNS) : turns };
}

/** The turn an approval or review belongs to: the given command, else the running one, else the last. */
function turnFor(tab: TabView, commandId: string | null): string | null {
  if (commandId && tab.turns.some((t) => t.commandId === commandId)) return commandId;
  if (tab.runningCommandId) return tab.runningCommandId;
  return tab.turns[tab.turns.length - 1]?.commandId ?? null;
}

function updateLast<T>(list: readonly T[], match: (item: T) => boolean, fn: (item: T) => T): T[] | null {
  for (let i = list.length - 1; i >= 0; i--) {
    if (match(list[i]!)) {
      const out = list.slice();
      out[i] = fn(list[i]!);
      return out;
    }
  }
  return null;
}

function applyProgress(turn: TurnView, e: ProgressView): TurnView {
  switch (e.type) {
    case 'prompt_started': {
      const prompts = turn.prompts + 1;
      // A second prompt in one turn is the loop session answering after the SOP session found no valid plan.
      return { ...turn, prompts, phase: prompts > 1 ? 'loop' : turn.phase };
    }
    case 'tool_reason':
      if (turn.phase === 'sop') return { ...turn, progress: [...turn.progress, e.reason] };
      return { ...turn, steps: [...turn.steps, { reason: e.reason, tool: e.tool, input: null, approval: null, outcome: null }] };
    case 'approval_requested': {
      if (turn.phase !== 'loop' || e.origin !== 'loop') return turn;
      const steps = updateLast(turn.steps, (s) => s.tool === e.tool && s.approval === null && s.outcome === null, (s): StepView => ({ ...s, input: e.input, approval: 'pending' }));
      return { ...turn, steps: steps ?? [...turn.steps, { reason: null, tool: e.tool, input: e.input, approval: 'pending', outcome: null }] };
    }
    case 'approval_resolved': {
      if (turn.phase !== 'loop' || e.origin !== 'loop') return turn;
      const approval: StepView['approval'] = e.verdict === 'approve' ? 'approved' : e.verdict === 'alwaysApprove' ? 'always' : e.verdict === 'deny' ? 'denied' : 'cached';
      const steps = updateLast(turn.steps, (s) => s.tool === e.tool && (s.approval === 'pending' || s.approval === null) && s.outcome === null, (s): StepView => ({ ...s, input: e.input, approval }));
      return { ...turn, steps: steps ?? [...turn.steps, { reason: null, tool: e.tool, input: e.input, approval, outcome: null }] };
    }
    case 'tool_started': {
      if (turn.phase !== 'loop' || e.origin !== 'loop') return turn;
      const steps = updateLast(turn.steps, (s) => s.tool === e.tool && s.outcome === null, (s): StepView => ({ ...s, input: e.input, outcome: 'running' }));
      return { ...turn, steps: steps ?? [...turn.steps, { reason: null, tool: e.tool, input: e.input, approval: null, outcome: 'running' }] };
    }
    case 'tool_settled': {
      if (turn.phase !== 'loop' || !e.resultRef) return turn;
      const settle = (s: StepView): StepView => ({ ...s, outcome: e.outcome, resultRef: e.resultRef, ...(e.preview !== undefined ? { preview: e.preview } : {}) });
      const steps = updateLast(turn.steps, (s) => s.tool === e.tool && (s.outcome === 'running' || s.outcome === null), settle);
      return { ...turn, steps: steps ?? [...turn.steps, settle({ reason: null, tool: e.tool, input: null, approval: null, outcome: null })] };
    }
    case 'plan_generated': {
      const attempt: AttemptView = { attempt: e.attempt, plan: e.plan, previousPlan: e.previousPlan, steps: e.steps, failures: [], variables: [] };
      const i = turn.attempts.findIndex((a) => a.attempt === e.attempt);
      if (i < 0) return { ...turn, attempts: [...turn.attempts, attempt] };
      // An edited plan (plan review) replaces the attempt's plan.
      const attempts = turn.attempts.slice();
      attempts[i] = attempt;
      return { ...turn, attempts };
    }
    case 'plan_rejected': {
      const attempts = updateLast(turn.attempts, (a) => a.attempt === e.attempt, (a) => ({ ...a, failures: e.failures }));
      return attempts ? { ...turn, attempts } : turn;
    }
    case 'variable_status': {
      const row: VariableRow = { variable: e.variable, command: e.command, state: e.state, ...(e.value !== undefined ? { value: e.value } : {}) };
      const attempts = updateLast(turn.attempts, (a) => a.attempt === e.attempt, (a) => {
        const j = a.variables.findIndex((v) => v.variable === e.variable);
        const variables = a.variables.slice();
        if (j < 0) variables.push(row);
        else variables[j] = row;
        return { ...a, variables };
      });
      return attempts ? { ...turn, attempts } : turn;
    }
    case 'history_compressed':
      return { ...turn, compressed: e.compressedFromCount };
    default:
      return turn;
  }
}

function closeOpenCards(turn: TurnView): TurnView {
  const approvals = turn.approvals.map((a) => (a.state === 'open' ? { ...a, state: 'cancelled' as const } : a));
  const reviews = turn.reviews.map((r) => (r.state === 'open' || r.state === 'editing' ? { ...r, state: 'cancelled' as const } : r));
  return { ...turn, approvals, reviews };
}

function applyRegistry(state: ChatState, e: RegistryEventView): ChatState {
  switch (e.type) {
    case 'LoopStarted': {
      if (!e.loopId || state.tabs.some((t) => t.id === e.loopId)) return state;
      const tab = newTab({ id: e.loopId, parentId: e.parentLoopId, displayName: e.displayName, state: 'registered', mode: e.mode, model: e.model });
      return { ...state, tabs: [...state.tabs, tab] };
    }
    case 'ActiveLoopChanged':
      return { ...state, activeLoopId: e.activeLoopId };
    case 'LoopModeChanged':
      return mapTab(state, e.loopId, (t) => ({ ...t, mode: e.mode, model: e.model }));
    case 'LoopInferenceChanged':
      return mapTab(state, e.loopId, (t) => ({ ...t, model: e.model }));
    case 'InputQueued':
      return mapTab(state, e.loopId, (t) => mapTurn({ ...t, hidden: false, queued: t.queued.includes(e.commandId) ? t.queued : [...t.queued, e.commandId] }, e.commandId, (turn) => turn));
    case 'InputCancelled':
      return mapTab(state, e.loopId, (t) => mapTurn({ ...t, queued: t.queued.filter((c) => c !== e.commandId) }, e.commandId, (turn) => ({ ...turn, status: 'cancelled' }), false));
    case 'TurnStarted':
      return mapTab(state, e.loopId, (t) => mapTurn(
        { ...t, hidden: false, stopping: false, state: 'running', runningCommandId: e.commandId, queued: t.queued.filter((c) => c !== e.commandId) },
        e.commandId,
        (turn) => ({ ...turn, status: 'running', regime: e.regime, phase: e.regime === 'loop' ? 'loop' : 'sop' }),
      ));
    case 'SessionProgress':
      return mapTab(state, e.loopId, (t) => mapTurn(t, e.commandId, (turn) => applyProgress(turn, e.event), false));
    case 'TurnSettled':
      return mapTab(state, e.loopId, (t) => mapTurn(
        { ...t, stopping: false, runningCommandId: t.runningCommandId === e.commandId ? null : t.runningCommandId },
        e.commandId,
        (turn) => closeOpenCards({ ...turn, status: 'settled', outcome: e.outcome }),
      ));
    case 'LoopIdle':
      return mapTab(state, e.loopId, (t) => ({ ...t, state: 'idle', stopping: false, runningCommandId: null }));
    case 'LoopClosing':
      return mapTab(state, e.loopId, (t) => ({ ...t, state: 'closing' }));
    case 'LoopExited':
      return mapTab(state, e.loopId, (t) => ({ ...t, state: 'exited', stopping: false, runningCommandId: null }));
    case 'SessionStopped':
      return { ...state, stopped: true };
    case 'SessionFaulted':
      return { ...state, faulted: e.message };
    default:
      return state;
  }
}

/** Applies one panel event. Pure: returns a new state, never changes the old one. */
export function applyPanelEvent(state: ChatState, e: PanelEvent): ChatState {
  switch (e.type) {
    case 'usage':
      return { ...state, usage: e.usage };
    case 'registry':
      return applyRegistry(state, e.event);
    case 'user_message':
      return mapTab(state, e.loopId, (t) => mapTurn({ ...t, notice: null }, e.commandId, (turn) => ({ ...turn, text: e.text })));
    case 'approval_opened':
      return mapTab(state, e.loopId, (t) => {
        const target = turnFor(t, e.commandId);
        if (!target) return t;
        return mapTurn({ ...t, hidden: false }, target, (turn) => ({ ...turn, approvals: [...turn.approvals, { ...e.approval, state: 'open' }] }));
      });
    case 'approval_closed':
      return mapTab(state, e.loopId, (t) => ({
        ...t,
        turns: t.turns.map((turn) => (turn.approvals.some((a) => a.id === e.id)
          ? { ...turn, approvals: turn.approvals.map((a) => (a.id === e.id ? { ...a, state: e.state, ...(e.reason ? { denyReason: e.reason } : {}) } : a)) }
          : turn)),
      }));
    case 'review_opened':
      return mapTab(state, e.loopId, (t) => {
        const target = turnFor(t, e.commandId);
        if (!target) return t;
        return mapTurn({ ...t, hidden: false }, target, (turn) => ({ ...turn, reviews: [...turn.reviews, { ...e.review, state: 'open' }] }));
      });
    case 'review_state':
      return mapTab(state, e.loopId, (t) => ({
        ...t,
        turns: t.turns.map((turn) => (turn.reviews.some((r) => r.id === e.id)
          ? { ...turn, reviews: turn.reviews.map((r) => (r.id === e.id ? { ...r, state: e.state, ...(e.reason ? { reason: e.reason } : {}) } : r)) }
          : turn)),
      }));
    case 'tab_hidden':
      return mapTab(state, e.loopId, (t) => ({ ...t, hidden: e.hidden }));
    case 'stopping': {
      let next = state;
      for (const id of e.loopIds) next = mapTab(next, id, (t) => (t.runningCommandId ? { ...t, stopping: true } : t));
      return next;
    }
    case 'notice': {
      const serial = state.noticeSerial + 1;
      const notice: NoticeView = { level: e.level, text: e.text, serial };
      if (e.loopId === null) return { ...state, notice, noticeSerial: serial };
      return mapTab({ ...state, noticeSerial: serial }, e.loopId, (t) => ({ ...t, notice }));
    }
    case 'picker':
      return mapTab(state, e.loopId, (t) => ({ ...t, picker: { pending: e.pending, error: e.error } }));
    case 'restored':
      return mapTab(state, e.loopId, (t) => ({ ...t, restored: e.turns }));
    case 'config':
      return { ...state, provider: e.provider, skillsNote: e.skillsNote, models: e.models, reviewPlans: e.reviewPlans };
    default:
      return state;
  }
}

// ------------------------------------------------------------------ derived views

/**
 * Characters an approval card shows as visible escapes instead of rendering: control characters
 * (C0 but line feed and tab, DEL, C1), invisible format characters (bidi overrides and isolates,
 * zero-width characters, tag characters), line and paragraph separators, lone surrogates and the
 * Hangul fillers. The same set as the CLI's terminal-text.ts.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u115F\u1160\u3164\uFFA0]/u;
const HIDDEN_ALL = new RegExp(HIDDEN.source, 'gu');

export interface VisiblePart {
  readonly text: string;
  /** True for the escape of a hidden character (`\u202e`), which the page styles apart. */
  readonly escape: boolean;
}

/** A text cut into plain runs and visible escapes of hidden characters, for an approval card. */
export function visibleParts(text: string): VisiblePart[] {
  const parts: VisiblePart[] = [];
  let last = 0;
  for (const m of text.matchAll(HIDDEN_ALL)) {
    const ch = m[0];
    if (ch === '\n' || ch === '\t') continue;
    if (m.index > last) parts.push({ text: text.slice(last, m.index), escape: false });
    const code = ch.codePointAt(0)!;
    const escape = ch === '\r' ? '\\r' : code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`;
    parts.push({ text: escape, escape: true });
    last = m.index + ch.length;
  }
  if (last < text.length) parts.push({ text: text.slice(last), escape: false });
  return parts;
}

/** True when a text has characters `visibleParts` shows as escapes. */
export function hasHidden(text: string): boolean {
  for (const m of text.matchAll(HIDDEN_ALL)) if (m[0] !== '\n' && m[0] !== '\t') return true;
  return false;
}

/** Open approval cards of a tab (the tab badge). */
export function openApprovals(tab: TabView): number {
  let n = 0;
  for (const turn of tab.turns) for (const a of turn.approvals) if (a.state === 'open') n++;
  for (const turn of tab.turns) for (const r of turn.reviews) if (r.state === 'open') n++;
  return n;
}

/** The tab's title: its first message, shortened, else its display name. */
export function tabTitle(tab: TabView): string {
  const first = tab.turns.find((t) => t.text)?.text ?? tab.restored[0]?.user ?? null;
  if (!first) return tab.displayName;
  const flat = first.replace(/\s+/g, ' ').trim();
  return flat.length > 28 ? `${flat.slice(0, 27)}…` : flat;
}

/** "Continue in loop mode" is offered after a SOP turn whose plan ran and failed (5.1). */
export function offersLoop(outcome: OutcomeView | null): boolean {
  return Boolean(outcome && outcome.kind === 'failed' && outcome.regime === 'sop' && outcome.reason === 'execution_failed' && !outcome.fellBack);
}

/** "Retry" is offered after a turn that ended with a provider or session error. */
export function offersRetry(outcome: OutcomeView | null): boolean {
  return Boolean(outcome && outcome.kind === 'error');
}

export type StepChange = 'added' | 'removed' | 'changed' | 'unchanged';
export interface StepDiff {
  readonly name: string;
  readonly change: StepChange;
  readonly before?: PlanStep;
  readonly after?: PlanStep;
}

const normalise = (s: string) => s.replace(/[ \t]+/g, ' ').replace(/\s+$/g, '').trim();

/** The difference between two plans by variable: added, removed, changed and unchanged declarations. */
export function diffPlanSteps(previous: readonly PlanStep[], next: readonly PlanStep[]): StepDiff[] {
  const before = new Map(previous.map((s) => [s.name, s]));
  const seen = new Set<string>();
  const out: StepDiff[] = [];
  for (const s of next) {
    seen.add(s.name);
    const old = before.get(s.name);
    if (!old) out.push({ name: s.name, change: 'added', after: s });
    else out.push({ name: s.name, change: normalise(old.text) === normalise(s.text) ? 'unchanged' : 'changed', before: old, after: s });
  }
  for (const s of previous) if (!seen.has(s.name)) out.push({ name: s.name, change: 'removed', before: s });
  return out;
}
