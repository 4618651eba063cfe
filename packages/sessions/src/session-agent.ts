/**
 * The provider interface of agent sessions: any `LlmAgent` (the OpenAI-compatible client, or an
 * adapter over VS Code's language model API in the extension) becomes a `SessionAgent`. Role
 * separated history is passed through; abort signals, model routing and reasoning effort are
 * forwarded on every call. Nothing here logs prompts or keys.
 */
import type { ChatMessage, LlmAgent, PromptOptions } from '@lightsop/runtime';
import type { CallOptions, SessionChatMessage as SessionMessage, CompleteRequest, Interpretation, ReplyIntent, SessionAgent } from './types';

export interface SessionAgentOptions {
  /**
   * Classify replies to a pending interaction with one extra model call (intent accept, cancel
   * or update). Off by default: sessions then use their verb rule alone.
   */
  interpretReplies?: boolean;
}

function providerOptions(options: CallOptions & { history?: readonly SessionMessage[] }): PromptOptions {
  const out: PromptOptions = {};
  if (options.model) out.model = options.model;
  if (options.tags && options.tags.length > 0) out.tags = [...options.tags];
  if (options.reasoningEffort) out.reasoningEffort = options.reasoningEffort;
  if (options.signal) out.signal = options.signal;
  if (options.history && options.history.length > 0) {
    out.history = options.history.map((m): ChatMessage => ({ role: m.role, content: m.message }));
  }
  return out;
}

async function call(agent: LlmAgent, prompt: string, options: CallOptions & { history?: readonly SessionMessage[] }): Promise<string> {
  options.signal?.throwIfAborted();
  const reply = await agent.executePrompt(prompt, providerOptions(options));
  return typeof reply === 'string' ? reply : String(reply ?? '');
}

/** Reads `{ "intent": ..., "confidence": ... }` from a classifier reply. */
export function parseInterpretation(reply: string, intents: readonly ReplyIntent[]): Interpretation {
  const match = /\{[\s\S]*\}/.exec(reply);
  if (!match) return { intent: 'unknown', confidence: 0 };
  try {
    const parsed = JSON.parse(match[0]) as { intent?: unknown; confidence?: unknown; updates?: unknown };
    const intent = typeof parsed.intent === 'string' ? parsed.intent.trim().toLowerCase() : '';
    const known = (intents as readonly string[]).includes(intent) || intent === 'ideas' ? (intent as Interpretation['intent']) : 'unknown';
    const confidence = typeof parsed.confidence === 'number' && Number.isFinite(parsed.confidence) ? Math.min(1, Math.max(0, parsed.confidence)) : 0;
    const out: Interpretation = { intent: known, confidence };
    if (typeof parsed.updates === 'object' && parsed.updates !== null && !Array.isArray(parsed.updates)) {
      const updates: Record<string, string> = {};
      for (const [k, v] of Object.entries(parsed.updates)) updates[k] = String(v);
      out.updates = updates;
    }
    return out;
  } catch {
    return { intent: 'unknown', confidence: 0 };
  }
}

/** Adapts a provider (`LlmAgent`) to the session agent surface (sessions.md 1.1). */
export function createSessionAgent(agent: LlmAgent, options: SessionAgentOptions = {}): SessionAgent {
  const sessionAgent: SessionAgent = {
    complete(request: CompleteRequest) {
      return call(agent, request.prompt, request);
    },
    executePrompt(prompt, callOptions) {
      return call(agent, prompt, callOptions);
    },
  };
  if (options.interpretReplies) {
    sessionAgent.interpretMessage = async (message, callOptions) => {
      const prompt = [
        'A tool asked the user for input and the user replied with the message below.',
        `Classify the reply as one of: ${callOptions.intents.join(', ')}, or unknown when it is a new, unrelated instruction.`,
        'Reply with JSON only: {"intent": "<intent>", "confidence": <0..1>}',
        '',
        'Reply:',
        message,
      ].join('\n');
      const reply = await call(agent, prompt, callOptions);
      return parseInterpretation(reply, callOptions.intents);
    };
  }
  return sessionAgent;
}
