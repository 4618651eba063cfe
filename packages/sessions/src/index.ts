/**
 * @lightsop/sessions: agent sessions over the plan runtime (sessions.md sections 1 to 4): SOP
 * sessions, loop sessions, the session registry with its live loops, the supervisor helpers, the
 * reserved tools, the standard skills and the adaptation of a provider (`LlmAgent`) to a session
 * agent. Builds on @lightsop/core and @lightsop/runtime; the runtime never imports it.
 */
export * from './types';
export * from './errors';
export {
  FINAL_ANSWER, CANNOT_COMPLETE, CLARIFY_CONTEXT, RESERVED_NAMES, CLARIFY_UNAVAILABLE, DEFAULT_CANNOT_COMPLETE, isReservedName,
} from './reserved';
export { interruptionMessage } from './control';
export {
  stableStringify, approveAllSupervisor, denyAllSupervisor, markSupervised, isSupervised, followUpApprover, type FollowUpApprover, type FollowUpRequest,
  type GateResult,
} from './supervisor';
export { createPlanRuntime, type PlanRuntime, type PlanRuntimeOptions, type PlanDiagnostic, type ExecutionReport, type VariableUpdate, type VariableStatus } from './plan-runtime';
export {
  SopSession, type SopSessionInit, type SopSessionOptions, type SopPreparation, type SopHistoryEntry, type SopPromptResult, type SopPromptOptions,
  type LastExecution,
} from './sop-session';
export type { PlannerDecision } from './decision';
export {
  LoopSession, historyFromInitial, ERROR_LIMIT_ANSWER, FINALIZE_FAILURES_REASON, type LoopSessionInit, type LoopSessionOptions, type ResolvedLoopOptions,
  type LoopTool, type ToolCallContext, type LoopPreparation, type InitialHistoryItem, type LoopHistoryEntry, type TurnRecord, type TurnStep,
  type LoopTurnResult, type LoopPromptOptions, type ToolCallRecord,
} from './loop-session';
export { toolsFromRegistry, sessionCommands } from './tools';
export {
  createSessionRegistry, changeModel, changeEffort, BUILTIN_MODES, InMemoryEventLog, readOnlySupervisor, type LoopId, type CommandId, type ModeName,
  type Regime, type ModelRef, type ModeSpec, type LoopDefinition, type LoopSessions, type LoopBuildContext, type LoopHandle, type Change,
  type LoopController, type LoopInput, type LoopState, type LoopInfo, type EventHeader, type TurnOutcome, type RegistryEvent, type RegistryEventType,
  type EventFilter, type EventSubscription, type EventLog, type RegistryInit, type SessionController, type SupervisorFactory,
} from './registry';
export { defineAgentLoop, DELEGATE_COMMAND, type AgentLoopOptions } from './definition';
export { createStandardSkills, combineRegistries, WorkspacePathError, readWorkspaceFile, type StandardSkillsOptions, type StandardSkillName } from './stdlib';
export { createSessionAgent, type SessionAgentOptions } from './session-agent';
