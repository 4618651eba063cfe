// sessions.md section 7, items 42-54: the cancellation contract (loop session; SOP where noted)
// and replaceTools.
import { describe, expect, it } from 'vitest';
import {
  LoopSession, SessionRunError, SopSession, createSessionRegistry, defineAgentLoop, interruptionMessage, type ProgressItem,
  type RegistryEvent,
} from '@lightsop/sessions';
import { testRegistry } from '../helpers/registry';
import { decision, deferred, recordingSupervisor, recordingTool, stubAgent, waitFor } from './helpers';

const quiet = { historyCompressionEnabled: false, logger: () => undefined } as const;

describe('cancellation contract', () => {
  it('42/43: aborting during a planner call resolves "Interrupted by user", status interrupted, entry appended, counters unchanged', async () => {
    const started = deferred();
    const agent = stubAgent({ decide: [() => (started.resolve(), new Promise<string>(() => undefined))] });
    const session = new LoopSession({ agent, tools: {}, options: quiet });
    const controller = new AbortController();
    const pending = session.newPrompt('go', { signal: controller.signal });
    await started.promise;
    controller.abort('esc');
    const result = await pending;
    expect(result).toMatchObject({ kind: 'interrupted', answer: 'Interrupted by user' });
    expect(session.status).toBe('interrupted');
    expect(result.turn.status).toBe('interrupted');
    expect(session.history[session.history.length - 1]).toMatchObject({ type: 'system', event: 'interrupted', by: 'user', reason: 'esc', message: 'Interrupted by user' });
    expect(session.errorCount).toBe(0);
    expect(session.failedTurns).toHaveLength(0);
    expect(session.lastAnswer).toBe('Interrupted by user');
  });

  it('44: an already-aborted signal makes no compression, preparation or planner call and marks session and turn interrupted (both regimes)', async () => {
    const agent = stubAgent({ decide: [decision('final_answer', 'x')], compress: ['## summary\nS'], plans: ['@lastAnswer final_answer x'] });
    const session = new LoopSession({
      agent, tools: {},
      options: { historyCompressionThresholdTokens: 1, initialHistory: [{ role: 'user', message: 'a'.repeat(100) }], preparation: { text: 'prepare things' } },
    });
    const result = await session.newPrompt('go', { signal: AbortSignal.abort('user') });
    expect(result.kind).toBe('interrupted');
    expect(result.turn.status).toBe('interrupted');
    expect(session.status).toBe('interrupted');
    expect(agent.calls).toHaveLength(0);
    expect(session.history.some((e) => e.type === 'user' && e.prompt === 'go')).toBe(false);
    const sop = new SopSession({ agent, skillsDescription: {}, commandsRegistry: testRegistry(), options: { preparation: { text: 'prepare' } } });
    const r = await sop.newPrompt('go', { signal: AbortSignal.abort() });
    expect(r).toMatchObject({ kind: 'interrupted', answer: 'Interrupted by user' });
    expect(sop.status).toBe('interrupted');
    expect(agent.calls).toHaveLength(0);
  });

  it('45: the prompt signal reaches compression, planner calls, interpretMessage, approve and tool handlers', async () => {
    const signals = new Map<string, AbortSignal>();
    const t = recordingTool((i) => (i === 'ask' ? { requiresInput: true, message: 'Which?' } : 'done'));
    const agent = stubAgent({
      compress: [(c) => (signals.set('compress', c.options.signal!), '## summary\nS')],
      decide: [(c) => (signals.set('decide', c.options.signal!), decision('t', 'ask'))],
      interpret: () => ({ intent: 'accept', confidence: 1 }),
    });
    const supervisor = recordingSupervisor();
    const session = new LoopSession({
      agent, tools: { t: t.tool },
      options: { supervisor, historyCompressionThresholdTokens: 1, historyCompressionKeepRecentEntries: 0, initialHistory: [{ role: 'user', message: 'x'.repeat(40) }], logger: () => undefined },
    });
    const controller = new AbortController();
    await session.newPrompt('first', { signal: controller.signal });
    const prompt = signals.get('decide')!;
    expect(signals.get('compress')).toBe(prompt);
    expect(supervisor.signals[0]).toBe(prompt);
    expect(t.contexts[0]!.signal).toBe(prompt);
    // The second prompt is routed to the pending tool through interpretMessage with its own prompt signal.
    const second = new AbortController();
    const gate = deferred<void>();
    const slowTool = { description: 's', handler: async (_i: string, ctx: { signal: AbortSignal }) => (signals.set('handler2', ctx.signal), await gate.promise, 'late') };
    session.replaceTools({ t: slowTool });
    const running = session.newPrompt('the tmp folder', { signal: second.signal });
    await waitFor(() => signals.has('handler2'));
    const interpret = agent.of('interpretMessage')[0]!;
    expect(interpret.options.signal).toBe(signals.get('handler2'));
    expect(prompt.aborted).toBe(false);
    second.abort('esc');
    expect(signals.get('handler2')!.aborted).toBe(true);
    gate.resolve();
    expect((await running).kind).toBe('interrupted');
  });

  it('45: aborting the parent prompt aborts the preparation child\'s calls', async () => {
    const started = deferred<AbortSignal>();
    const agent = stubAgent({ decide: [(c) => (started.resolve(c.options.signal!), new Promise<string>(() => undefined))] });
    const session = new LoopSession({ agent, tools: {}, options: { ...quiet, preparation: { text: 'prepare', retries: 3 } } });
    const controller = new AbortController();
    const pending = session.newPrompt('go', { signal: controller.signal });
    const childSignal = await started.promise;
    controller.abort('esc');
    expect(childSignal.aborted).toBe(true);
    expect((await pending).kind).toBe('interrupted');
    // 46: no further preparation attempt starts and no context is injected.
    expect(agent.calls).toHaveLength(1);
    expect(session.systemPrompt).not.toContain('@context-piece');
  });

  it('46: preparation context is injected only after a successful attempt (retries after a failed one)', async () => {
    const agent = stubAgent({
      decide: [() => Promise.reject(new Error('provider hiccup')), decision('final_answer', '@context_user := "Ada"'), decision('final_answer', 'Hello Ada')],
    });
    const session = new LoopSession({ agent, tools: {}, options: { ...quiet, preparation: { text: 'find the user name' } } });
    const result = await session.newPrompt('greet me');
    expect(result.turn.effectivePrompt).toBe('greet me\n\n@context-piece-1 := "Ada"');
    expect(session.systemPrompt).toContain('@context-piece-1 := "Ada"');
    const failing = new LoopSession({ agent: stubAgent({ decide: [() => Promise.reject(new Error('down'))] }), tools: {}, options: { ...quiet, preparation: { text: 'x', retries: 1 } } });
    await expect(failing.newPrompt('go')).rejects.toBeInstanceOf(SessionRunError);
  });

  it('47: an abort while approve() is pending prevents the handler even when approval arrives later', async () => {
    const t = recordingTool();
    const approval = deferred<'approve'>();
    const asked = deferred();
    const supervisor = recordingSupervisor(() => (asked.resolve(), approval.promise));
    const session = new LoopSession({ agent: stubAgent({ decide: [decision('t', 'x')] }), tools: { t: t.tool }, options: { supervisor, ...quiet } });
    const controller = new AbortController();
    const pending = session.newPrompt('go', { signal: controller.signal });
    await asked.promise;
    controller.abort('user');
    approval.resolve('approve');
    expect((await pending).kind).toBe('interrupted');
    expect(t.inputs).toEqual([]);
  });

  it('48: an abort during a progress write prevents the handler from running', async () => {
    const t = recordingTool();
    const controller = new AbortController();
    const supervisor = {
      async approve() {
        return 'approve' as const;
      },
      getOutputWriter: () => ({
        write: async (item: ProgressItem) => {
          if (item.type === 'tool_started') controller.abort('user');
        },
      }),
    };
    const session = new LoopSession({ agent: stubAgent({ decide: [decision('t', 'x')] }), tools: { t: t.tool }, options: { supervisor, ...quiet } });
    expect((await session.newPrompt('go', { signal: controller.signal })).kind).toBe('interrupted');
    expect(t.inputs).toEqual([]);
  });

  it('49: a handler that resolves after the abort cannot make the prompt succeed', async () => {
    const gate = deferred<string>();
    const entered = deferred();
    const tool = { description: 'slow', handler: async () => (entered.resolve(), gate.promise) };
    const session = new LoopSession({ agent: stubAgent({ decide: [decision('slow', 'x'), decision('final_answer', 'never')] }), tools: { slow: tool }, options: quiet });
    const controller = new AbortController();
    const pending = session.newPrompt('go', { signal: controller.signal });
    await entered.promise;
    controller.abort('esc');
    gate.resolve('finished anyway');
    const result = await pending;
    expect(result).toMatchObject({ kind: 'interrupted', answer: 'Interrupted by user' });
    expect(session.lastAnswer).toBe('Interrupted by user');
    expect(session.toolVars.get('slow-res-1')).toBe('finished anyway');
  });

  it('50: after a prompt settles (success, interruption, SessionRunError) its listener is removed; aborting later changes nothing', async () => {
    for (const first of ['success', 'interrupted', 'error'] as const) {
      const gate = deferred<string>();
      const entered = deferred();
      const agent = stubAgent({
        decide: [
          () => (first === 'error' ? Promise.reject(new Error('provider failed')) : first === 'interrupted' ? new Promise<string>(() => undefined) : decision('final_answer', 'one')),
          () => (entered.resolve(), gate.promise),
        ],
      });
      const session = new LoopSession({ agent, tools: {}, options: quiet });
      const old = new AbortController();
      const p1 = session.newPrompt('one', { signal: old.signal });
      if (first === 'interrupted') {
        await waitFor(() => agent.calls.length === 1);
        old.abort('esc');
      }
      if (first === 'error') await expect(p1).rejects.toBeInstanceOf(SessionRunError);
      else await p1;
      const p2 = session.newPrompt('two');
      await entered.promise;
      if (!old.signal.aborted) old.abort('late');
      gate.resolve(decision('final_answer', 'two done'));
      expect(await p2).toMatchObject({ kind: 'answer', answer: 'two done' });
    }
  });

  it('51: a following prompt with a fresh or no signal continues: status active again, history retained', async () => {
    const agent = stubAgent({ decide: [() => new Promise<string>(() => undefined), decision('final_answer', 'back')] });
    const session = new LoopSession({ agent, tools: {}, options: quiet });
    const c = new AbortController();
    const p = session.newPrompt('first', { signal: c.signal });
    await waitFor(() => agent.calls.length === 1);
    c.abort('esc');
    await p;
    const before = session.history.length;
    const result = await session.newPrompt('second');
    expect(result.answer).toBe('back');
    expect(session.status).toBe('active');
    expect(session.history.length).toBeGreaterThan(before);
    expect(session.history.some((e) => e.type === 'system' && e.event === 'interrupted')).toBe(true);
  });

  it('52: reason to message mapping', () => {
    for (const r of ['esc', 'escape', 'user', 'cancelled', 'external-signal', '', ' ESC ']) expect(interruptionMessage(r)).toBe('Interrupted by user');
    expect(interruptionMessage('shutdown')).toBe('Interrupted: shutdown');
    expect(interruptionMessage('Deadline Reached')).toBe('Interrupted: Deadline Reached');
  });

  it('52: cancel(reason) aborts the in-flight prompt with that reason and returns true; idle cancel returns false', async () => {
    const agent = stubAgent({ decide: [() => new Promise<string>(() => undefined)] });
    const session = new LoopSession({ agent, tools: {}, options: quiet });
    expect(session.cancel()).toBe(false);
    const p = session.newPrompt('go');
    await waitFor(() => agent.calls.length === 1);
    expect(session.cancel('deadline')).toBe(true);
    expect((await p).answer).toBe('Interrupted: deadline');
    expect(session.status).toBe('interrupted');
  });

  it('53: a queued prompt whose signal aborted while waiting settles interrupted without any model call when it starts', async () => {
    const gate = deferred<string>();
    const agent = stubAgent({ plans: [() => gate.promise] });
    const registry = await createSessionRegistry({
      definitions: [defineAgentLoop({ name: 'main', agent, model: { name: 'm' }, registry: testRegistry() })],
      roots: ['main'], activeRoot: 'main', projectRoot: process.cwd(),
    });
    const settled: RegistryEvent[] = [];
    registry.onEvent((e) => e.type === 'TurnSettled' && settled.push(e));
    await registry.submit({ text: 'first' });
    const waiting = new AbortController();
    await registry.submit({ text: 'second', signal: waiting.signal });
    waiting.abort('user');
    gate.resolve('@lastAnswer final_answer one');
    await waitFor(() => settled.length === 2);
    expect(agent.calls).toHaveLength(1);
    expect(settled[1]).toMatchObject({ outcome: { kind: 'interrupted', message: 'Interrupted by user' } });
    await registry.shutdown();
  });

  it('54: replaceTools keeps the object and appends tools_refreshed with the added/updated/removed lists', async () => {
    const a = recordingTool();
    const session = new LoopSession({ agent: stubAgent({ decide: [decision('b', 'x'), decision('final_answer', 'ok')] }), tools: { a: a.tool }, options: quiet });
    const b = recordingTool();
    const returned = session.replaceTools({ b: b.tool }, { added: ['b', '', 3 as unknown as string], removed: ['a'] });
    expect(Object.keys(returned)).toEqual(['b', 'final_answer', 'cancel_complete'.replace('cancel', 'cannot')]);
    expect(session.history[session.history.length - 1]).toMatchObject({ type: 'system', event: 'tools_refreshed', added: ['b'], updated: [], removed: ['a'] });
    await session.newPrompt('go');
    expect(b.inputs).toEqual(['x']);
  });
});
