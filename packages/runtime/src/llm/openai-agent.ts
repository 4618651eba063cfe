/**
 * An LlmAgent for any OpenAI-compatible Chat Completions endpoint (Ollama, vLLM, LM Studio,
 * llama.cpp server, hosted services), on the `openai` client: retries on 429 and 5xx with
 * backoff, timeouts, abort signals and streaming come from the client. The API key is never
 * logged or put in an error message.
 */
import OpenAI from 'openai';
import type { LlmAgent, PromptOptions } from './agent';

export interface OpenAiAgentOptions {
  /** e.g. `http://127.0.0.1:11434/v1`; requests go to `{baseUrl}/chat/completions`. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Per request, in milliseconds (default 120 s). */
  timeoutMs?: number;
  /** Retries on 408, 409, 429 and 5xx, with exponential backoff (default 3). */
  maxRetries?: number;
  /** Called with each streamed piece of text; streaming is used when set. */
  onToken?: (text: string) => void;
}

export interface LlmSettings {
  baseUrl?: string;
  model?: string;
  apiKey?: string;
}

type Message = { role: 'system' | 'user' | 'assistant'; content: string };

function toMessages(history: unknown[] | undefined): Message[] {
  const out: Message[] = [];
  for (const item of history ?? []) {
    if (typeof item !== 'object' || item === null) continue;
    const m = item as { role?: unknown; content?: unknown; text?: unknown };
    const role = m.role === 'system' || m.role === 'assistant' || m.role === 'user' ? m.role : m.role === 'tool' ? 'user' : null;
    const content = typeof m.content === 'string' ? m.content : typeof m.text === 'string' ? m.text : m.content !== undefined ? JSON.stringify(m.content) : null;
    if (role && content !== null) out.push({ role, content });
  }
  return out;
}

export class OpenAiCompatibleAgent implements LlmAgent {
  private readonly client: OpenAI;

  constructor(private readonly settings: OpenAiAgentOptions) {
    this.client = new OpenAI({
      baseURL: settings.baseUrl.replace(/\/+$/, ''),
      apiKey: settings.apiKey || 'not-needed',
      timeout: settings.timeoutMs ?? 120_000,
      maxRetries: settings.maxRetries ?? 3,
    });
  }

  get model(): string {
    return this.settings.model;
  }

  async executePrompt(prompt: string, options: PromptOptions = {}): Promise<string> {
    const messages: Message[] = [...toMessages(options.history as unknown[] | undefined), { role: 'user', content: prompt }];
    const model = options.model || this.settings.model;
    const extra = options.reasoningEffort ? { reasoning_effort: options.reasoningEffort as 'low' | 'medium' | 'high' } : {};
    if (this.settings.onToken) {
      const stream = await this.client.chat.completions.create({ model, messages, stream: true, ...extra }, { signal: options.signal });
      let text = '';
      for await (const chunk of stream) {
        const piece = chunk.choices[0]?.delta?.content ?? '';
        if (piece) {
          text += piece;
          this.settings.onToken(piece);
        }
      }
      return text;
    }
    const response = await this.client.chat.completions.create({ model, messages, ...extra }, { signal: options.signal });
    return response.choices[0]?.message?.content ?? '';
  }
}

/**
 * Resolves the LLM settings as the contract orders them: flags, then LIGHTSOP_LLM_* environment
 * variables (the key falls back to OPENAI_API_KEY), then the config's `llm`.
 */
export function resolveLlmSettings(flags: LlmSettings, env: NodeJS.ProcessEnv, config: LlmSettings | undefined): LlmSettings {
  return {
    baseUrl: flags.baseUrl || env.LIGHTSOP_LLM_BASE_URL || config?.baseUrl,
    model: flags.model || env.LIGHTSOP_LLM_MODEL || config?.model,
    apiKey: flags.apiKey || env.LIGHTSOP_LLM_API_KEY || env.OPENAI_API_KEY || undefined,
  };
}
