/**
 * Helpers for session tests: a stub SessionAgent that answers from scripts and records every
 * call, deferred promises, bounded waits (never fixed sleeps), and a recording supervisor.
 */
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitFor as waitForState } from '../helpers/sync';
import type {
  ApprovalDecision, CallOptions, CompleteRequest, Interpretation, ReplyIntent, SessionAgent, SessionChatMessage, Supervisor, ToolChoice
} from '@lightsop/sessions';

export interface AgentCall {
  kind: 'complete' | 'executePrompt' | 'interpretMessage';
  prompt: string;
  history: readonly SessionChatMessage[];
  options: CallOptions & { context?: { intent: string; [key: string]: unknown }; intents?: readonly ReplyIntent[] };
}

type Reply = string | ((call: AgentCall, index: number) => string | Promise<string>);

export interface StubAgent extends SessionAgent {
  calls: AgentCall[];
  /** Calls of one kind, or of one intent (`loop.decide`, `loop.compress`, `sop.plan`, ...). */
  of(kindOrIntent: string): AgentCall[];
}

function pick(replies: Reply[], index: number, call: AgentCall): string | Promise<string> {
  if (replies.length === 0) throw new Error(`no scripted reply for ${call.kind} #${index}`);
  const r = replies[Math.min(index, replies.length - 1)]!;
  return typeof r === 'function' ? r(call, index) : r;
}

/**
 * A scripted agent. `decide` answers loop decisions, `compress` compression calls, `plans` SOP
 * plan generations, `clarify` clarify_context prompts; `interpret` classifies pending replies.
 */
export function stubAgent(script: {
  decide?: Reply[];
  compress?: Reply[];
  plans?: Reply[];
  clarify?: Reply[];
  interpret?: (message: string) => Interpretation | Promise<Interpretation>;
} = {}): StubAgent {
  const calls: AgentCall[] = [];
  const counters = new Map<string, number>();
  const next = (key: string) => {
    const n = counters.get(key) ?? 0;
    counters.set(key, n + 1);
    return n;
  };
  const honour = <T>(signal: AbortSignal | undefined, value: T | Promise<T>): Promise<T> => {
    if (signal?.aborted) return Promise.reject(abortError());
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(abortError());
      signal?.addEventListener('abort', onAbort, { once: true });
      Promise.resolve(value).then(resolve, reject).finally(() => signal?.removeEventListener('abort', onAbort));
    });
  };
  const agent: StubAgent = {
    calls,
    of: (k) => calls.filter((c) => c.kind === k || c.options.context?.intent === k),
    complete(request: CompleteRequest) {
      const call: AgentCall = { kind: 'complete', prompt: request.prompt, history: request.history ?? [], options: request };
      calls.push(call);
      const intent = request.context?.intent;
      if (intent === 'loop.compress') return honour(request.signal, pick(script.compress ?? [], next('compress'), call));
      return honour(request.signal, pick(script.decide ?? [], next('decide'), call));
    },
    executePrompt(prompt, options) {
      const call: AgentCall = { kind: 'executePrompt', prompt, history: options.history ?? [], options };
      calls.push(call);
      if (options.context?.intent === 'clarify_context') return honour(options.signal, pick(script.clarify ?? [], next('clarify'), call));
      return honour(options.signal, pick(script.plans ?? [], next('plans'), call));
    },
  };
  if (script.interpret) {
    const interpret = script.interpret;
    agent.interpretMessage = (message, options) => {
      calls.push({ kind: 'interpretMessage', prompt: message, history: [], options });
      return honour(options.signal, interpret(message));
    };
  }
  return agent;
}

export function abortError(): Error {
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  return e;
}

/** A Markdown decision as a planner would write it. */
export function decision(tool: string, prompt?: string, reason?: string): string {
  return [`## tool`, tool, ...(prompt !== undefined ? ['## prompt', prompt] : []), ...(reason ? ['## reason', reason] : [])].join('\n');
}

export { deferred, type Deferred } from '../helpers/sync';

/** Waits until the predicate holds, reading it every 5 ms; fails after the timeout (the shared `waitFor`). */
export async function waitFor(predicate: () => boolean, timeoutMs = 15000, what = 'condition'): Promise<void> {
  await waitForState(what, predicate, { timeoutMs, every: 5 });
}

/** Whether a process exists (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A supervisor that records each choice and answers with the given function (default approve). */
export function recordingSupervisor(answer: (choice: ToolChoice, signal: AbortSignal) => ApprovalDecision | Promise<ApprovalDecision> = () => 'approve') {
  const choices: ToolChoice[] = [];
  const signals: AbortSignal[] = [];
  const supervisor: Supervisor & { choices: ToolChoice[]; signals: AbortSignal[] } = {
    choices,
    signals,
    async approve(choice, { signal }) {
      choices.push(choice);
      signals.push(signal);
      return answer(choice, signal);
    },
  };
  return supervisor;
}

/** Tool handler helper: records inputs and contexts. */
export function recordingTool(result: (input: string) => unknown = (input) => `ran ${input}`, extra: { sideEffects?: boolean; description?: string } = {}) {
  const inputs: string[] = [];
  const contexts: { signal: AbortSignal; approval: unknown }[] = [];
  return {
    inputs,
    contexts,
    tool: {
      description: extra.description ?? 'A test tool.',
      ...(extra.sideEffects !== undefined ? { sideEffects: extra.sideEffects } : {}),
      async handler(input: string, ctx: { signal: AbortSignal; approval: unknown }) {
        inputs.push(input);
        contexts.push(ctx);
        return result(input);
      },
    },
  };
}

/** A temporary folder with the given files (paths may contain folders); its real path. */
export function tempDir(files: Record<string, string>): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'lightsop-session-')));
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  return dir;
}
