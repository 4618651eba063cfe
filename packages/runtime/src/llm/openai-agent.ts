/**
 * An LlmAgent for any OpenAI-compatible Chat Completions endpoint (Ollama, vLLM, LM Studio,
 * llama.cpp server, hosted services), on the `openai` client: retries on 429 and 5xx with
 * backoff, timeouts, abort signals and streaming come from the client. Errors name the endpoint
 * (without credentials) and say what went wrong; the API key is never logged or put in an error
 * message, and the client's own log (`OPENAI_LOG`) goes to standard error, never standard output.
 */
import { setMaxListeners } from 'node:events';
import { format } from 'node:util';
// The client library is loaded on the first request, not with the runtime: a host that never
// talks to a model (lint, a plain run) does not pay for loading it.
import type OpenAI from 'openai';
import { toTokenUsage, type LlmAgent, type ModelCall, type PromptOptions, type TokenUsage } from './agent';
import { redactSecrets } from '@lightsop/core';

/** Per request attempt, in milliseconds. */
export const DEFAULT_LLM_TIMEOUT_MS = 120_000;
/** Retries after the first attempt. */
export const DEFAULT_LLM_RETRIES = 3;

export interface OpenAiAgentOptions {
  /** e.g. `http://127.0.0.1:11434/v1`; requests go to `{baseUrl}/chat/completions`. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Per request attempt, in milliseconds (default 120 s). */
  timeoutMs?: number;
  /** Retries on connection errors, timeouts, 408, 409, 429 and 5xx, with exponential backoff (default 3). */
  maxRetries?: number;
  /** Called with each streamed piece of text; streaming is used when set. */
  onToken?: (text: string) => void;
  /**
   * Where the client's log lines go (enabled by `OPENAI_LOG=info|debug`), already redacted.
   * Default: standard error.
   */
  log?: (line: string) => void;
  /**
   * Called after every request, answered or failed, with its model, times and reported usage
   * (traces, docs/tracing.md). A listener that throws is ignored.
   */
  onCall?: (call: ModelCall) => void;
}

export interface LlmSettings {
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  /** Per request attempt, in milliseconds. */
  timeoutMs?: number;
  /** Retries after the first attempt. */
  maxRetries?: number;
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

/** The provider's usage as token counts, or null when it reported none (or nonsense). */
function usageOf(usage: { prompt_tokens?: unknown; completion_tokens?: unknown; total_tokens?: unknown } | null | undefined): TokenUsage | null {
  return usage ? toTokenUsage(usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) : null;
}

/** The innermost `code` or message of a connection failure (`ECONNREFUSED`, `ENOTFOUND`, ...). */
function connectionCause(error: unknown): string {
  let current: unknown = error;
  let message = '';
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const e = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) {
      const known: Record<string, string> = { ECONNREFUSED: 'connection refused', ENOTFOUND: 'host not found', ECONNRESET: 'connection reset', EHOSTUNREACH: 'host unreachable', ETIMEDOUT: 'connection timed out' };
      return known[e.code] ? `${known[e.code]} (${e.code})` : e.code;
    }
    if (typeof e.message === 'string' && e.message !== '' && e.message !== 'fetch failed' && e.message !== 'Connection error.') message = e.message;
    current = e.cause;
  }
  return message || 'connection failed';
}

type OpenAiSdk = typeof import('openai');

let sdkLoading: Promise<OpenAiSdk> | null = null;

/** The `openai` module, imported once, on first use. */
function loadSdk(): Promise<OpenAiSdk> {
  sdkLoading ??= import('openai');
  return sdkLoading;
}

export class OpenAiCompatibleAgent implements LlmAgent {
  private client: { sdk: OpenAiSdk; instance: OpenAI } | null = null;
  private readonly clientOptions: ConstructorParameters<typeof OpenAI>[0];
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  /** The endpoint as errors name it: no credentials, no trailing slash. */
  readonly endpoint: string;

  constructor(private readonly settings: OpenAiAgentOptions) {
    this.timeoutMs = settings.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS;
    this.maxRetries = settings.maxRetries ?? DEFAULT_LLM_RETRIES;
    const baseURL = settings.baseUrl.replace(/\/+$/, '');
    this.endpoint = this.redact(baseURL);
    const write = settings.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
    // The client's logger passes a few arguments per call: a bounded spread.
    // eslint-disable-next-line no-restricted-syntax
    const line = (...args: unknown[]) => write(this.redact(format(...args)));
    this.clientOptions = {
      baseURL,
      apiKey: settings.apiKey || 'not-needed',
      timeout: this.timeoutMs,
      maxRetries: this.maxRetries,
      // The default logger is `console`, whose info and debug write to standard output, between
      // the JSON lines a script reads.
      logger: { error: line, warn: line, info: line, debug: line },
    };
  }

  private async connect(): Promise<{ sdk: OpenAiSdk; instance: OpenAI }> {
    if (!this.client) {
      const sdk = await loadSdk();
      this.client ??= { sdk, instance: new sdk.default(this.clientOptions) };
    }
    return this.client;
  }

  get model(): string {
    return this.settings.model;
  }

  async executePrompt(prompt: string, options: PromptOptions = {}): Promise<string> {
    const messages: Message[] = [...toMessages(options.history as unknown[] | undefined), { role: 'user', content: prompt }];
    const model = options.model || this.settings.model;
    const extra = options.reasoningEffort ? { reasoning_effort: options.reasoningEffort as 'low' | 'medium' | 'high' } : {};
    // The client adds an abort listener to the signal it is given on every attempt and never
    // removes it; the caller's signal lives for a whole run and would collect them (Node warns
    // at eleven). So each call gets its own signal, linked to the caller's by one listener that
    // is removed when the call ends.
    const { sdk, instance: client } = await this.connect();
    const outer = options.signal;
    const call = new AbortController();
    setMaxListeners(this.maxRetries + 2, call.signal);
    const onAbort = () => call.abort(outer?.reason);
    if (outer?.aborted) call.abort(outer.reason);
    else outer?.addEventListener('abort', onAbort, { once: true });
    const startTime = Date.now();
    let usage: TokenUsage | null = null;
    let responseModel: string | null = null;
    let failure: string | null = null;
    const listening = Boolean(this.settings.onCall || options.onUsage);
    try {
      if (this.settings.onToken) {
        // Usage arrives in a last chunk only when asked for; it is asked for only when someone counts.
        const usageOption = listening ? { stream_options: { include_usage: true } } : {};
        const stream = await client.chat.completions.create({ model, messages, stream: true, ...usageOption, ...extra }, { signal: call.signal });
        let text = '';
        for await (const chunk of stream) {
          if (chunk.model) responseModel = chunk.model;
          if (chunk.usage) usage = usageOf(chunk.usage);
          const piece = chunk.choices[0]?.delta?.content ?? '';
          if (piece) {
            text += piece;
            this.settings.onToken(piece);
          }
        }
        return text;
      }
      const response = await client.chat.completions.create({ model, messages, ...extra }, { signal: call.signal });
      responseModel = response.model || null;
      usage = usageOf(response.usage);
      return response.choices[0]?.message?.content ?? '';
    } catch (error) {
      if (outer?.aborted || error instanceof sdk.APIUserAbortError) {
        failure = 'aborted';
        throw error;
      }
      failure = this.describe(sdk, error);
      throw new Error(failure, { cause: error });
    } finally {
      outer?.removeEventListener('abort', onAbort);
      if (usage && options.onUsage) {
        try {
          options.onUsage(usage);
        } catch {
          // A counter's failure must not lose the answer.
        }
      }
      if (this.settings.onCall) {
        try {
          this.settings.onCall({ operation: 'chat', requestModel: model, responseModel, startTime, endTime: Date.now(), usage, error: failure });
        } catch {
          // A listener's failure must not lose the answer.
        }
      }
    }
  }

  /** A one-line description of a failed request that names the endpoint and never the key. */
  private describe(sdk: OpenAiSdk, error: unknown): string {
    const attempts = `${this.maxRetries + 1} attempt${this.maxRetries === 0 ? '' : 's'}`;
    if (error instanceof sdk.APIConnectionTimeoutError) {
      return `the language model at ${this.endpoint} did not answer within ${this.timeoutMs / 1000} s (${attempts})`;
    }
    if (error instanceof sdk.APIConnectionError) {
      return `cannot reach the language model at ${this.endpoint}: ${this.redact(connectionCause(error))} (${attempts})`;
    }
    if (error instanceof sdk.APIError && typeof error.status === 'number') {
      const body = error.error as { message?: unknown } | undefined;
      const detail = typeof body?.message === 'string' ? body.message : error.message.replace(/^\d{3}\s*/, '');
      return `the language model at ${this.endpoint} answered HTTP ${error.status}${detail ? `: ${this.redact(detail)}` : ''}`;
    }
    return `the language model at ${this.endpoint} failed: ${this.redact(error instanceof Error ? error.message : String(error))}`;
  }

  private redact(text: string): string {
    return redactSecrets(text, [this.settings.apiKey]);
  }
}

/**
 * Resolves the LLM settings as the contract orders them: flags, then LIGHTSOP_LLM_* environment
 * variables (the key falls back to OPENAI_API_KEY), then the config's `llm`. The timeout and the
 * retries come from the flags, else the config.
 */
export function resolveLlmSettings(flags: LlmSettings, env: NodeJS.ProcessEnv, config: LlmSettings | undefined): LlmSettings {
  return {
    baseUrl: flags.baseUrl || env.LIGHTSOP_LLM_BASE_URL || config?.baseUrl,
    model: flags.model || env.LIGHTSOP_LLM_MODEL || config?.model,
    apiKey: flags.apiKey || env.LIGHTSOP_LLM_API_KEY || env.OPENAI_API_KEY || undefined,
    timeoutMs: flags.timeoutMs ?? config?.timeoutMs,
    maxRetries: flags.maxRetries ?? config?.maxRetries,
  };
}
