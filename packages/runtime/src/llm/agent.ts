/**
 * The language model surface the runtime needs (8.1, 8.3): an agent with `executePrompt`.
 * Providers (the OpenAI-compatible client, VS Code's language model API) implement it.
 */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

export interface PromptOptions {
  model?: string;
  tags?: string[];
  reasoningEffort?: string;
  signal?: AbortSignal;
  /** Earlier messages; a system message first when the caller sends the user's words as the prompt. */
  history?: ChatMessage[] | unknown[];
  /**
   * Called once per answered request with the tokens the provider reported for it (providers that
   * report none never call it). The one usage hook: token budgets (`TokenBudget`), run records and
   * the chat panel all count with it; a wrapper that listens calls the caller's `onUsage` too.
   */
  onUsage?: (usage: TokenUsage) => void;
  [key: string]: unknown;
}

/** The tokens one model request consumed, as the provider reported them. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** The provider's total when it reports one, else input plus output. */
  totalTokens: number;
}

/** Reported counts as a `TokenUsage`: missing or nonsensical counts are 0, a missing total is the sum. */
export function toTokenUsage(inputTokens: unknown, outputTokens: unknown, totalTokens?: unknown): TokenUsage {
  const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.floor(n) : null);
  const input = count(inputTokens) ?? 0;
  const output = count(outputTokens) ?? 0;
  return { inputTokens: input, outputTokens: output, totalTokens: count(totalTokens) ?? input + output };
}

/**
 * One model request as a provider saw it, for traces (docs/tracing.md): the model asked for, the
 * model that answered, wall-clock start and end (ms since the epoch), the reported usage (null
 * when the provider reported none) and, for a failed request, the error's text (never a key).
 */
export interface ModelCall {
  operation: 'chat';
  requestModel: string;
  responseModel: string | null;
  startTime: number;
  endTime: number;
  usage: TokenUsage | null;
  error: string | null;
}

export interface LlmAgent {
  executePrompt(prompt: string, options?: PromptOptions): Promise<string> | string;
}

export function isLlmAgent(x: unknown): x is LlmAgent {
  return typeof x === 'object' && x !== null && typeof (x as LlmAgent).executePrompt === 'function';
}
