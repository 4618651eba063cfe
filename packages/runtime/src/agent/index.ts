/**
 * Agent sessions (sessions.md sections 1 to 4): SOP sessions, loop sessions, the session
 * registry with its live loops, the supervisor helpers and the reserved tools.
 */
export * from './types';
export * from './errors';
export {
  FINAL_ANSWER, CANNOT_COMPLETE, CLARIFY_CONTEXT, RESERVED_NAMES, CLARIFY_UNAVAILABLE, DEFAULT_CANNOT_COMPLETE, isReservedName, normalizeFinalText,
} from './reserved';
export { interruptionMessage } from './control';
export {
  stableStringify, normalizeDecision, denialText, approveAllSupervisor, denyAllSupervisor, markSupervised, isSupervised, followUpApprover, type FollowUpApprover, type FollowUpRequest, type GateResult, type NormalizedDecision,
} from './supervisor';
export { createPlanRuntime, type PlanRuntime, type PlanRuntimeOptions, type PlanDiagnostic, type ExecutionReport, type VariableUpdate, type VariableStatus } from './plan-runtime';
export {
  SopSession, AUTHORING_RULES, feedbackBlock, quoteLiteral, type SopSessionInit, type SopSessionOptions, type SopPreparation, type SopHistoryEntry,
  type SopPromptResult, type SopPromptOptions, type LastExecution,
} from './sop-session';
export { parseDecision, type PlannerDecision } from './decision';
export {
  LoopSession, resolveLoopOptions, historyFromInitial, summarizeToolDescription, coerceResult, parseCompression, parseContextLines, ERROR_LIMIT_ANSWER,
  FINALIZE_FAILURES_REASON, type LoopSessionInit, type LoopSessionOptions, type ResolvedLoopOptions, type LoopTool, type ToolCallContext,
  type LoopPreparation, type InitialHistoryItem, type LoopHistoryEntry, type TurnRecord, type TurnStep, type LoopTurnResult, type LoopPromptOptions,
  type ToolCallRecord,
} from './loop-session';
export { toolsFromRegistry, listCommandInfos, describeCommands } from './tools';
export {
  createSessionRegistry, changeModel, changeEffort, BUILTIN_MODES, InMemoryEventLog, readOnlySupervisor, type LoopId, type CommandId, type ModeName,
  type Regime, type ModelRef, type ModeSpec, type LoopDefinition, type LoopSessions, type LoopBuildContext, type LoopHandle, type Change,
  type LoopController, type LoopInput, type LoopState, type LoopInfo, type EventHeader, type TurnOutcome, type RegistryEvent, type RegistryEventType,
  type EventFilter, type EventSubscription, type EventLog, type RegistryInit, type SessionController, type SupervisorFactory,
} from './registry';
export { defineAgentLoop, DELEGATE_COMMAND, type AgentLoopOptions } from './definition';
