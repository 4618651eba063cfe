/**
 * @lightsop/runtime: executes LightSOPLang plans (sections 5 to 8 of the spec) and hosts agent
 * sessions. Builds on @lightsop/core; knows nothing of editors.
 */
export * from './skills/registry';
export * from './skills/load';
export { MAX_CONFIG_FILE_BYTES, readLimitedTextFile, readLimitedTextFileSync, UnreadableFileError } from './skills/read-limited';
export * from './values';
export * from './errors';
export * from './monitor';
export { cancelHeuristic, autoCancelReason } from './cancel-heuristic';
export { createResponder } from './responder';
export { buildGenerationPrompt, stripFences, finalCommandsAvailable, type GenerationRequest } from './english/prompt';
export type { LlmAgent, PromptOptions, ChatMessage } from './llm/agent';
export {
  Interpreter, type InterpreterOptions, type UpdateOptions, type UpdateResult, type RunEvent, type Failure,
  type PlanGeneratedEvent, type VariableSnapshot,
} from './interpreter';
export {
  OpenAiCompatibleAgent, DEFAULT_LLM_RETRIES, DEFAULT_LLM_TIMEOUT_MS, resolveLlmSettings, type OpenAiAgentOptions, type LlmSettings,
} from './llm/openai-agent';
export { redactSecrets, hasUrlCredentials } from '@lightsop/core';
export * from './agent';
export * from './stdlib';
export { createSessionAgent, parseInterpretation, type SessionAgentOptions } from './llm/session-agent';
