/**
 * @lightsop/runtime: executes LightSOPLang plans (sections 5 to 8 of the spec): the interpreter,
 * the command registry protocol and the skills loader, value records, execution monitors and the
 * LLM providers `#!english` plans use. Builds on @lightsop/core; knows nothing of editors or of
 * agent sessions (@lightsop/sessions builds on it). README.md lists this API; test/runtime/api.test.ts
 * fails when an unlisted name is exported.
 */
export {
  Interpreter, type InterpreterOptions, type UpdateOptions, type UpdateResult, type RunEvent, type Failure, type PlanGeneratedEvent,
  type VariableSnapshot,
} from './interpreter';
export { PlanValidationError, ConfigurationError, PlanGenerationError } from './errors';
export { DefaultExecutionMonitor, UnlimitedExecutionMonitor, type ExecutionMonitor, type MonitorLimits } from './monitor';
export { cancelHeuristic } from './cancel-heuristic';
export { createResponder, type ResponderState } from './responder';
export { publicForm, dataText, errorText, textOf, nextTimestamp, type Status, type Value, type RootCause } from './values';
export type { GenerationRequest } from './english/prompt';
export type { LlmAgent, PromptOptions, ChatMessage, TokenUsage, ModelCall } from './llm/agent';
export { TokenBudget, TokenBudgetExceededError, withTokenBudget } from './llm/budget';
export {
  OpenAiCompatibleAgent, DEFAULT_LLM_RETRIES, DEFAULT_LLM_TIMEOUT_MS, resolveLlmSettings, type OpenAiAgentOptions, type LlmSettings,
} from './llm/openai-agent';
export { tracingRequested, otlpHeaderSecrets, type RunTrace, type Tracing, type CommandOutcome, type ToolCall } from './tracing';
export { redactSecrets, hasUrlCredentials } from '@lightsop/core';
export * from './skills/index';
export * from './record/index';
