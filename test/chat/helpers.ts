/**
 * Helpers for the chat controller tests: a fake page that applies what the host posts exactly as
 * the real page does (after a JSON round trip, since webview messages are serialised), a fake
 * editor environment around the scripted OpenAI-compatible server, a skills map with logged
 * commands, a controller started as the panel starts it, and a polling wait with a time limit.
 */
import { afterEach, expect } from 'vitest';
import { OpenAiCompatibleAgent, toCommandRegistry, type CommandRegistry, type LlmAgent } from '@lightsop/runtime';
import { ChatController, type ChatEnvironment, type ChatSettings, type ChatSkills, type ProviderResolution } from '../../extension/src/chat/controller';
import { applyPanelEvent, emptyState, type ChatState, type TabView, type TurnView } from '../../extension/src/chat/model';
import type { ToChatWebview } from '../../extension/src/chat/protocol';
import { startLlmServer, type ChatRequest, type LlmServer, type Script } from '../helpers/llm-server';
import { waitFor as waitForState } from '../helpers/sync';

export const API_KEY = 'sk-chat-test-secret-0123456789';

/** The page side, as chat/webview.ts keeps it: a state that follows the host's messages. */
export class FakePage {
  readonly messages: ToChatWebview[] = [];
  state: ChatState = emptyState();

  postMessage(message: ToChatWebview): Promise<boolean> {
    const copy = JSON.parse(JSON.stringify(message)) as ToChatWebview;
    // Everything the host posts survives serialisation unchanged.
    expect(copy).toEqual(message);
    this.messages.push(copy);
    if (copy.type === 'state') this.state = copy.state;
    else for (const e of copy.events) this.state = applyPanelEvent(this.state, e);
    return Promise.resolve(true);
  }

  /** Every panel event received, in order. */
  events() {
    return this.messages.flatMap((m) => (m.type === 'events' ? m.events : []));
  }

  tab(id?: string | null): TabView {
    const tab = this.state.tabs.find((t) => t.id === (id ?? this.state.activeLoopId));
    if (!tab) throw new Error(`no tab ${id ?? '(active)'}`);
    return tab;
  }

  lastTurn(id?: string | null): TurnView {
    const turns = this.tab(id).turns;
    const turn = turns[turns.length - 1];
    if (!turn) throw new Error('no turn yet');
    return turn;
  }
}

/**
 * A controller on `env` with a fake page attached, started as the panel starts it: the page says
 * ready (usually before the registry exists, and it must still end up with the tabs), the
 * controller starts, and the page shows the first tab. The controller is added to `controllers`
 * before it starts, so the test's afterEach shuts it down even when starting fails.
 */
export async function startChat(env: ChatEnvironment, controllers: ChatController[]): Promise<{ controller: ChatController; page: FakePage }> {
  const controller = new ChatController(env, { saveDelayMs: 0, shutdownDrainMs: 2000 });
  controllers.push(controller);
  const page = new FakePage();
  controller.attach(page);
  await controller.handleMessage({ type: 'ready' });
  await controller.start();
  await waitFor('the first tab on the page', () => page.state.tabs.length > 0 && page.state.activeLoopId);
  return { controller, page };
}

export interface ChatTests {
  /** Starts the test's scripted model server; asked again in the same test, the same server. */
  serve(script: Script): Promise<LlmServer>;
  /** `startChat` on `env`: the chat is shut down after the test. */
  start(env: ChatEnvironment): Promise<{ controller: ChatController; page: FakePage }>;
}

/**
 * Registers the file's afterEach, which shuts down every chat the test started and then closes
 * its model server; returns what starts them.
 */
export function useChats(): ChatTests {
  let server: LlmServer | null = null;
  const controllers: ChatController[] = [];
  afterEach(async () => {
    for (const c of controllers.splice(0)) await c.shutdown();
    await server?.close();
    server = null;
  });
  return {
    async serve(script) {
      server ??= await startLlmServer(script);
      return server;
    },
    start: (env) => startChat(env, controllers),
  };
}

/** Resolves with `fn()` once it is truthy; a read that throws (no turn yet) is read again (the shared `waitFor`). */
export function waitFor<T>(what: string, fn: () => T | null | undefined | false, timeout = 10_000): Promise<T> {
  return waitForState(what, fn, { timeoutMs: timeout, every: 10, retryErrors: true });
}

export interface TestSkills {
  readonly registry: CommandRegistry;
  readonly log: string[];
}

/** Workspace skills: two without side effects, one with (unknown, so it asks), one that fails. */
export function testSkills(extra: Record<string, { description: string; sideEffects?: boolean; run: (args: string[], ctx: { signal?: AbortSignal }) => unknown }> = {}): TestSkills {
  const log: string[] = [];
  const text = (args: string[]) => args.map(String).join(' ');
  const registry = toCommandRegistry({
    shout: { description: 'Upper-cases its text', sideEffects: false, run: (args: string[]) => (log.push(`shout ${text(args)}`), text(args).toUpperCase()) },
    count_words: { description: 'Counts the words of a text', sideEffects: false, run: (args: string[]) => (log.push(`count_words ${text(args)}`), String(text(args).split(/\s+/).filter(Boolean).length)) },
    save_note: { description: 'Saves a note', run: (args: string[]) => (log.push(`save_note ${text(args)}`), `saved: ${text(args)}`) },
    failer: {
      description: 'Always fails', sideEffects: false,
      run: () => {
        log.push('failer');
        throw new Error('the failer failed');
      },
    },
    ...extra,
  });
  return { registry, log };
}

export interface TestEnvironment extends ChatEnvironment {
  readonly store: Map<string, unknown>;
  readonly logs: string[];
  readonly opened: string[];
  settingsValue: ChatSettings;
  skills: ChatSkills;
  provider: () => Promise<ProviderResolution>;
  /** What the editor returns for a plan under review ("Edit"); null = the user gave up. */
  editResult: ((plan: string) => string | null) | null;
  running: boolean[];
  attention: string[];
}

export function agentFor(server: LlmServer): LlmAgent {
  return new OpenAiCompatibleAgent({ baseUrl: server.url, model: 'test-model', apiKey: API_KEY, maxRetries: 0 });
}

export function testEnvironment(o: { server?: LlmServer; skills?: TestSkills | null; root?: string | null; settings?: Partial<ChatSettings>; store?: Map<string, unknown> } = {}): TestEnvironment {
  const store = o.store ?? new Map<string, unknown>();
  const env: TestEnvironment = {
    projectRoot: o.root ?? null,
    store,
    logs: [],
    opened: [],
    running: [],
    attention: [],
    settingsValue: { reviewPlans: 'off', autoApproveReadOnly: true, standardSkills: false, ...o.settings },
    skills: { registry: o.skills?.registry ?? null, note: null, stamp: 'v1' },
    editResult: null,
    provider: async () => (o.server
      ? { ok: true, agent: agentFor(o.server), label: `test-model at ${o.server.url}`, models: [{ name: 'test-model', label: 'test-model' }, { name: 'other-model', label: 'other-model' }] }
      : { ok: false, message: 'No language model is configured for the chat.' }),
    resolveProvider: () => env.provider(),
    loadSkills: async () => env.skills,
    settings: () => env.settingsValue,
    storage: {
      get: (key) => store.get(key),
      update: async (key, value) => {
        store.set(key, JSON.parse(JSON.stringify(value)));
      },
    },
    openPlan: async (plan) => {
      env.opened.push(plan);
    },
    editPlan: async (plan) => (env.editResult ? env.editResult(plan) : null),
    configure: async () => undefined,
    onRunningChanged: (running) => env.running.push(running),
    onAttention: (text) => env.attention.push(text),
    log: (line) => env.logs.push(line),
  };
  return env;
}

/** The last user message of a request (the prompt of a SOP plan request). */
export const lastUser = (r: ChatRequest) => [...r.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
export const isLoopRequest = (r: ChatRequest) => r.messages[0]?.role === 'system' && r.messages[0].content.startsWith('You are the planner of an agent loop');
export const loopReply = (tool: string, prompt: string, reason = '') => `## tool\n${tool}\n## prompt\n${prompt}${reason ? `\n## reason\n${reason}` : ''}`;
