/**
 * Helpers written the way AchillesAgentLib's own tests write them: a registry built from one
 * `executeCommand` function and a list of command docs, and a mock agent that answers prompts
 * from a resolver function. Nothing here knows about the runtime behind the compat entry point.
 */
import type { LightSOPLangPayload, LightSOPLangRegistry, LightSOPLangResponder } from '@lightsop/runtime/compat';
import { waitFor } from '../helpers/sync';

export type ExecuteCommand = (payload: LightSOPLangPayload, response: LightSOPLangResponder) => unknown;

export interface CommandDoc {
  name: string;
  description: string;
}

export function createRegistry(executeCommand: ExecuteCommand, docs: CommandDoc[] = []): LightSOPLangRegistry {
  return {
    async executeCommand(payload, response) {
      return executeCommand(payload, response);
    },
    listCommands: () => docs.map((d) => ({ ...d })),
  };
}

/**
 * The checklist's test commands (spec section 10): `emit` succeeds with its first argument,
 * `combine` joins its arguments with `+`, `failer` fails with `oops`, `canceler` cancels with
 * `nope`. Every call is logged as `command arg1 arg2 ...`, and every payload is kept.
 */
export function checklistRegistry(extra: Record<string, ExecuteCommand> = {}) {
  const history: string[] = [];
  const payloads: LightSOPLangPayload[] = [];
  const handlers: Record<string, ExecuteCommand> = {
    emit: ({ args }, response) => response.success(args[0] ?? ''),
    combine: ({ args }, response) => response.success(args.join('+')),
    failer: (_payload, response) => response.fail('oops'),
    canceler: (_payload, response) => response.cancel('nope'),
    ...extra,
  };
  const registry = createRegistry(async (payload, response) => {
    history.push([payload.command, ...payload.args].join(' '));
    payloads.push(payload);
    const handler = handlers[payload.command];
    if (!handler) throw new Error(`Unknown command ${payload.command}`);
    return handler(payload, response);
  }, Object.keys(handlers).map((name) => ({ name, description: `${name} for tests` })));
  return { registry, history, payloads };
}

/** An agent with `executePrompt` that answers from a resolver and records every prompt. */
export class MockLLMAgent {
  readonly prompts: string[] = [];
  readonly options: Record<string, unknown>[] = [];
  constructor(private readonly resolver: (prompt: string, index: number) => unknown) {}

  async executePrompt(prompt: string, options: Record<string, unknown> = {}): Promise<unknown> {
    this.prompts.push(prompt);
    this.options.push(options);
    return this.resolver(prompt, this.prompts.length - 1);
  }
}

/** A mock agent that gives the answers in order and repeats the last one. */
export function scriptedAgent(...answers: string[]): MockLLMAgent {
  return new MockLLMAgent((_prompt, i) => answers[Math.min(i, answers.length - 1)]);
}

/** Resolves after pending promise callbacks and one macrotask have run. */
export const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A promise with its resolve function, for commands that settle when a test says so. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Waits, one event-loop turn at a time, until the predicate holds; fails after `timeoutMs` (the shared `waitFor`). */
export async function until(predicate: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(what, predicate, { timeoutMs, every: 'turn' });
}
