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
  /** Called with the token usage the provider reports for this call, when it reports one (run records). */
  onUsage?: (usage: { inputTokens?: number | null; outputTokens?: number | null; totalTokens?: number | null }) => void;
  [key: string]: unknown;
}

export interface LlmAgent {
  executePrompt(prompt: string, options?: PromptOptions): Promise<string> | string;
}

export function isLlmAgent(x: unknown): x is LlmAgent {
  return typeof x === 'object' && x !== null && typeof (x as LlmAgent).executePrompt === 'function';
}
