/**
 * The shared contracts of agent sessions (sessions.md section 1): the LLM agent surface sessions
 * call, the supervisor (the approval boundary), statuses, session events and snapshots. Types
 * only; nothing here talks to a provider or runs a tool.
 */
import type { CLARIFY_CONTEXT } from '@lightsop/core';
import type { CommandPayload, CommandRegistry } from '@lightsop/runtime';

export type ChatRole = 'system' | 'user' | 'assistant';
/** One role-separated message of a session's conversation (sessions.md 1.1). */
export interface SessionChatMessage {
  role: ChatRole;
  message: string;
}
type ChatMessage = SessionChatMessage;

export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high';
export const REASONING_EFFORTS: readonly ReasoningEffort[] = ['minimal', 'low', 'medium', 'high'];

export interface CallOptions {
  /** Concrete model name or routing alias; null = the agent's default. */
  model?: string | null;
  tags?: readonly string[] | null;
  reasoningEffort?: ReasoningEffort | null;
  /** Must be honoured: the call rejects with an abort error when it fires. */
  signal?: AbortSignal;
}

export type LlmIntent = 'loop.decide' | 'loop.compress' | 'sop.plan' | typeof CLARIFY_CONTEXT | 'interpret';

export interface CompleteRequest extends CallOptions {
  prompt: string;
  history?: readonly ChatMessage[];
  context?: { intent: LlmIntent; [key: string]: unknown };
}

export type ReplyIntent = 'accept' | 'cancel' | 'update';
export interface Interpretation {
  intent: ReplyIntent | 'ideas' | 'unknown';
  confidence: number;
  updates?: Readonly<Record<string, string>>;
}

/** What sessions need from a language model (sessions.md 1.1). */
export interface SessionAgent {
  /** Raw completion: loop decisions and history compression. */
  complete(request: CompleteRequest): Promise<string>;
  /** Prompt execution: SOP plan generation and clarify_context answers. */
  executePrompt(prompt: string, options: CallOptions & {
    history?: readonly ChatMessage[];
    context?: { intent: LlmIntent; [key: string]: unknown };
  }): Promise<string>;
  /** Optional classifier for replies to a pending interaction. */
  interpretMessage?(message: string, options: CallOptions & { intents: readonly ReplyIntent[] }): Promise<Interpretation>;
}

export type SessionStatus = 'idle' | 'running' | 'active' | 'awaiting_input' | 'interrupted' | 'failed';
export type TurnStatus = 'running' | 'done' | 'awaiting_input' | 'interrupted' | 'failed';

// ------------------------------------------------------------------ supervisor (1.4)

export interface ToolChoice {
  toolName: string;
  /** Loop: the resolved input string; SOP: `{ args, raw }`. */
  params: unknown;
  origin: 'loop' | 'sop';
  /** SOP only: the plan variable being computed. */
  variable?: string;
  /** The planner's stated reason or the plan comment, if any. */
  reason?: string;
  /** As declared by the command or tool; undefined = unknown (treat as true). */
  sideEffects?: boolean;
  /** Asked every time, never answered from the always-approve cache (an MCP tool's `destructiveHint`). */
  destructive?: boolean;
}

export type ApprovalVerdict = 'approve' | 'alwaysApprove' | 'deny';
export type ApprovalDecision = ApprovalVerdict | { decision: ApprovalVerdict; reason?: string; approval?: unknown };

export type ProgressItem =
  | { type: 'tool_reason'; tool: string; reason: string; stepIndex: number | null }
  | { type: 'tool_started'; tool: string };

export interface OutputWriter {
  write(item: ProgressItem): Promise<void>;
}

export interface PlanReview {
  plan: string;
  previousPlan: string;
  attempt: number;
  prompt: string;
}
export type PlanReviewDecision =
  | 'approve'
  | { decision: 'approve' }
  | { decision: 'edit'; plan: string }
  | { decision: 'reject'; reason?: string };

/**
 * The approval boundary. It decides whether a proposed call may run; it never chooses the next
 * action, generates plans, calls the agent or performs the action.
 */
export interface Supervisor {
  approve(choice: ToolChoice, options: { signal: AbortSignal }): Promise<ApprovalDecision>;
  getOutputWriter?(): OutputWriter | null;
  /** Optional plan-level review before a validated SOP plan executes (2.4 step 9a). */
  reviewPlan?(review: PlanReview, options: { signal: AbortSignal }): Promise<PlanReviewDecision>;
}

// ------------------------------------------------------------------ events and snapshots (1.6, 1.7)

export interface Disposable {
  dispose(): void;
}

export type VariableState = 'undefined' | 'running' | 'success' | 'fail' | 'canceled' | 'awaiting_input';

export interface PlanFailure {
  /** '__plan__' for plan-level problems. */
  variable: string;
  /** The text fed back to the planner. */
  reason: string;
  code?: string;
  line?: number;
}

export type SessionEvent =
  | { type: 'prompt_started'; promptIndex: number }
  | { type: 'tool_reason'; tool: string; reason: string; stepIndex: number | null }
  | { type: 'approval_requested'; choice: ToolChoice }
  | { type: 'approval_resolved'; choice: ToolChoice; verdict: ApprovalVerdict | 'cached' }
  | { type: 'tool_started'; tool: string; input: unknown }
  | { type: 'tool_settled'; tool: string; resultRef?: string; outcome: 'ok' | 'error' | 'denied' | 'needs_input' }
  | { type: 'plan_generated'; attempt: number; plan: string; previousPlan: string }
  | { type: 'plan_rejected'; attempt: number; failures: readonly PlanFailure[] }
  | { type: 'variable_status'; attempt: number; variable: string; command: string; state: VariableState; value?: unknown }
  | { type: 'history_compressed'; compressedFromCount: number }
  | { type: 'prompt_settled'; status: SessionStatus };

export interface SessionEvents {
  onEvent(listener: (event: SessionEvent) => void): Disposable;
}

export interface ConversationSnapshot {
  type: 'sop' | 'loop';
  status: SessionStatus;
  lastAnswer: unknown | null;
  /** Deep, JSON-safe copy of the session history. */
  history: unknown[];
}

/** Anything that can hand out a snapshot of the calling session (tools and commands get one). */
export interface SnapshotSource {
  getConversationSnapshot(): ConversationSnapshot;
}

// ------------------------------------------------------------------ commands (2.1)

export interface CommandInfo {
  name: string;
  description: string;
  sideEffects?: boolean;
}

/** A pending command of a SOP session (2.2). */
export interface PendingTool {
  command: string;
  variable: string;
  message: string;
  step?: string;
}

/** The payload a session passes to a command: the runtime's payload plus the session fields. */
export interface SessionCommandPayload extends CommandPayload {
  readonly session?: SnapshotSource;
  readonly approval?: unknown;
  readonly resume?: PendingTool;
}

export type { CommandRegistry };

/** A logger for problems that are reported and ignored (listener and writer failures). */
export type SessionLogger = (message: string) => void;

export const defaultLogger: SessionLogger = (message) => {
  console.warn(`lightsop session: ${message}`);
};
