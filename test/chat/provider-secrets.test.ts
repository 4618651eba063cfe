// ARCHITECTURE.md: API keys never reach logs, webview state or saved conversations. The chat gets
// its key inside the provider, so the one way for a key to come back is the endpoint itself: a
// hostile or careless server (or proxy) that echoes the Authorization header in an error body.
import { describe, expect, it } from 'vitest';
import { STORAGE_KEY } from '../../extension/src/chat/controller';
import { API_KEY, testEnvironment, useChats, waitFor } from './helpers';

const chats = useChats();

describe('the API key and the chat', () => {
  it('an endpoint that echoes the key in its error: the key is in no turn, page state, log or saved conversation', async () => {
    const server = await chats.serve(() => ({ status: 401, text: `Incorrect API key provided: ${API_KEY} (Bearer ${API_KEY})` }));
    const store = new Map<string, unknown>();
    const env = testEnvironment({ server, store });
    const { controller, page } = await chats.start(env);
    await controller.handleMessage({ type: 'send', loopId: page.state.activeLoopId, text: 'hello' });
    const turn = await waitFor('the turn to settle', () => page.tab().turns.find((t) => t.status === 'settled'));
    expect(turn.outcome?.kind).toBe('error');
    // The error still says what happened, without the key.
    expect(turn.outcome?.text).toContain('401');
    await waitFor('the saved conversation', () => store.get(STORAGE_KEY) !== undefined);
    await controller.shutdown();
    for (const [what, text] of [
      ['the turn', JSON.stringify(turn)],
      ['the page state', JSON.stringify(page.state)],
      ['the events sent to the page', JSON.stringify(page.events())],
      ['the log', env.logs.join('\n')],
      ['the saved conversations', JSON.stringify(store.get(STORAGE_KEY))],
    ] as const) {
      expect(text.includes(API_KEY), `${what} holds the key`).toBe(false);
    }
  });
});
