/**
 * An `LlmAgent` over VS Code's language model API (`vscode.lm`), for `lightsop.chat.provider`
 * = `vscode-lm`. It is written against the small structural surface below rather than the
 * `vscode` module, so tests can give it a fake: panel.ts passes the real `vscode.lm`, message
 * constructors and `CancellationTokenSource`. The abort signal of the session's call cancels the
 * request's token; a call that was aborted rejects with an abort error even if the model goes on.
 */
import type { LlmAgent, PromptOptions } from '@lightsop/runtime';

export interface LmChatModel {
  readonly id: string;
  readonly name: string;
  readonly vendor: string;
  readonly family: string;
  sendRequest(messages: unknown[], options: { justification?: string }, token: unknown): PromiseLike<{ readonly text: AsyncIterable<string> }>;
}

export interface LmSelector {
  vendor?: string;
  family?: string;
  id?: string;
}

export interface LmTokenSource {
  readonly token: unknown;
  cancel(): void;
  dispose(): void;
}

export interface LmApi {
  selectChatModels(selector?: LmSelector): PromiseLike<readonly LmChatModel[]>;
  /** `vscode.LanguageModelChatMessage.User`. */
  user(text: string): unknown;
  /** `vscode.LanguageModelChatMessage.Assistant`. */
  assistant(text: string): unknown;
  tokenSource(): LmTokenSource;
}

export const NO_VSCODE_MODEL =
  "No VS Code language model is available. Install and sign in to an extension that provides one (for example GitHub Copilot Chat), or set lightsop.chat.provider to openai-compatible and configure lightsop.llm.baseUrl and lightsop.llm.model.";

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const error = new Error(typeof reason === 'string' && reason ? `aborted: ${reason}` : 'aborted');
  error.name = 'AbortError';
  return error;
}

/** The messages of a request: VS Code's API has no system role, so system text becomes a first user message. */
export function toLmMessages(api: Pick<LmApi, 'user' | 'assistant'>, prompt: string, history: unknown): unknown[] {
  const out: unknown[] = [];
  for (const item of Array.isArray(history) ? history : []) {
    if (typeof item !== 'object' || item === null) continue;
    const m = item as { role?: unknown; content?: unknown };
    const content = typeof m.content === 'string' ? m.content : m.content === undefined ? '' : JSON.stringify(m.content);
    if (content === '') continue;
    if (m.role === 'assistant') out.push(api.assistant(content));
    else if (m.role === 'system') out.push(api.user(`Instructions for this conversation:\n\n${content}`));
    else out.push(api.user(content));
  }
  out.push(api.user(prompt));
  return out;
}

export class VsCodeLmAgent implements LlmAgent {
  constructor(private readonly api: LmApi, private readonly selector: LmSelector = {}) {}

  /** The models the picker offers (id and name), in VS Code's order. */
  async models(): Promise<readonly LmChatModel[]> {
    return this.api.selectChatModels(this.selector);
  }

  /** The model for a call: the requested id, else the configured selector's first model. */
  private async pick(model: string | undefined): Promise<LmChatModel> {
    if (model) {
      const byId = await this.api.selectChatModels({ ...this.selector, id: model });
      if (byId[0]) return byId[0];
      const anyById = await this.api.selectChatModels({ id: model });
      if (anyById[0]) return anyById[0];
    }
    const models = await this.api.selectChatModels(this.selector);
    if (!models[0]) throw new Error(NO_VSCODE_MODEL);
    return models[0];
  }

  async executePrompt(prompt: string, options: PromptOptions = {}): Promise<string> {
    const signal = options.signal;
    if (signal?.aborted) throw abortError(signal);
    const model = await this.pick(typeof options.model === 'string' && options.model ? options.model : undefined);
    if (signal?.aborted) throw abortError(signal);
    const source = this.api.tokenSource();
    const onAbort = () => source.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await model.sendRequest(
        toLmMessages(this.api, prompt, options.history),
        { justification: 'LightSOPLang chat plans and answers the requests you type in its panel.' },
        source.token,
      );
      let text = '';
      for await (const piece of response.text) {
        if (signal?.aborted) throw abortError(signal);
        text += piece;
      }
      if (signal?.aborted) throw abortError(signal);
      return text;
    } catch (error) {
      if (signal?.aborted) throw abortError(signal);
      throw error;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      source.dispose();
    }
  }
}
