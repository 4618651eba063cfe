// The LlmAgent over VS Code's language model API (chat/lm-agent.ts) with a fake `vscode.lm`:
// message mapping (no system role in VS Code's API), model choice by id and family, streaming,
// and cancellation (the session's abort signal cancels the request's token).
import { describe, expect, it } from 'vitest';
import { createSessionAgent } from '@lightsop/sessions';
import { NO_VSCODE_MODEL, VsCodeLmAgent, toLmMessages, type LmApi, type LmChatModel, type LmSelector } from '../../extension/src/chat/lm-agent';

interface Sent {
  model: string;
  messages: unknown[];
  token: { cancelled: boolean };
}

function fakeLm(models: { id: string; family: string; reply: (sent: Sent) => AsyncIterable<string> }[]) {
  const sent: Sent[] = [];
  const selectors: LmSelector[] = [];
  const api: LmApi = {
    async selectChatModels(selector = {}) {
      selectors.push(selector);
      return models
        .filter((m) => (!selector.id || m.id === selector.id) && (!selector.family || m.family === selector.family))
        .map((m): LmChatModel => ({
          id: m.id, name: `Model ${m.id}`, vendor: 'test', family: m.family,
          async sendRequest(messages, _options, token) {
            const s = { model: m.id, messages, token: token as { cancelled: boolean } };
            sent.push(s);
            return { text: m.reply(s) };
          },
        }));
    },
    user: (text) => ({ role: 'user', text }),
    assistant: (text) => ({ role: 'assistant', text }),
    tokenSource: () => {
      const token = { cancelled: false };
      return { token, cancel: () => void (token.cancelled = true), dispose: () => undefined };
    },
  };
  return { api, sent, selectors };
}

async function* pieces(...parts: string[]): AsyncIterable<string> {
  for (const p of parts) yield p;
}

describe('VsCodeLmAgent', () => {
  it('sends the history as user/assistant messages (system text first, as a user message) and joins the streamed reply', async () => {
    const lm = fakeLm([{ id: 'm1', family: 'fam', reply: () => pieces('@lastAnswer ', 'final_answer ', '"hi"') }]);
    const agent = createSessionAgent(new VsCodeLmAgent(lm.api));
    const reply = await agent.executePrompt('Say hi', { history: [{ role: 'system', message: 'Write plans.' }, { role: 'user', message: 'earlier' }, { role: 'assistant', message: '@x emit y' }] });
    expect(reply).toBe('@lastAnswer final_answer "hi"');
    expect(lm.sent[0]!.messages).toEqual([
      { role: 'user', text: 'Instructions for this conversation:\n\nWrite plans.' },
      { role: 'user', text: 'earlier' },
      { role: 'assistant', text: '@x emit y' },
      { role: 'user', text: 'Say hi' },
    ]);
    expect(toLmMessages(lm.api, 'p', undefined)).toEqual([{ role: 'user', text: 'p' }]);
  });

  it('uses the model the picker chose (by id), else the configured family, and says clearly when there is none', async () => {
    const lm = fakeLm([{ id: 'a', family: 'small', reply: () => pieces('from a') }, { id: 'b', family: 'big', reply: () => pieces('from b') }]);
    const agent = new VsCodeLmAgent(lm.api, { family: 'big' });
    expect(await agent.executePrompt('x')).toBe('from b');
    expect(await agent.executePrompt('x', { model: 'a' })).toBe('from a');
    expect((await agent.models()).map((m) => m.id)).toEqual(['b']);
    const none = new VsCodeLmAgent(fakeLm([]).api);
    await expect(none.executePrompt('x')).rejects.toThrow(NO_VSCODE_MODEL);
  });

  it('an aborted signal cancels the request token and rejects, even when the model keeps streaming', async () => {
    let release!: () => void;
    let streaming!: () => void;
    const midStream = new Promise<void>((resolve) => (streaming = resolve));
    const lm = fakeLm([{
      id: 'm', family: 'f',
      reply: () => (async function* () {
        yield 'part one ';
        const paused = new Promise<void>((resolve) => (release = resolve));
        streaming();
        await paused;
        yield 'part two';
      })(),
    }]);
    const controller = new AbortController();
    const pending = new VsCodeLmAgent(lm.api).executePrompt('x', { signal: controller.signal });
    await midStream;
    controller.abort('esc');
    release();
    await expect(pending).rejects.toThrow(/aborted/);
    expect(lm.sent[0]!.token.cancelled).toBe(true);
    const already = new AbortController();
    already.abort();
    await expect(new VsCodeLmAgent(lm.api).executePrompt('x', { signal: already.signal })).rejects.toThrow(/aborted/);
    expect(lm.sent).toHaveLength(1);
  });
});
