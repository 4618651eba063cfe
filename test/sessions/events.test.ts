// Session events and snapshots (sessions.md 1.4, 1.6 to 1.8, 4.12): listener and writer failures
// are logged and ignored, commands receive the calling session's snapshot, provider failures
// reject with SessionRunError, subscriptions end with an error when their buffer overflows.
import { describe, expect, it } from 'vitest';
import {
  LoopSession, SessionRunError, SopSession, approveAllSupervisor, createSessionRegistry, defineAgentLoop, type ConversationSnapshot,
  type ProgressItem, type SessionCommandPayload, type SessionEvent,
} from '@lightsop/sessions';
import { testRegistry } from '../helpers/registry';
import { decision, recordingTool, stubAgent } from './helpers';

describe('events, snapshots and errors', () => {
  it('a throwing listener and a failing output writer are logged and ignored; prompt_started and prompt_settled frame each prompt', async () => {
    const logged: string[] = [];
    const supervisor = {
      async approve() {
        return 'approve' as const;
      },
      getOutputWriter: () => ({ write: async (_i: ProgressItem) => { throw new Error('terminal closed'); } }),
    };
    const t = recordingTool();
    const session = new LoopSession({
      agent: stubAgent({ decide: [decision('t', 'x', 'because'), decision('final_answer', 'done')] }), tools: { t: t.tool },
      options: { supervisor, logger: (m) => logged.push(m), historyCompressionEnabled: false },
    });
    const seen: SessionEvent['type'][] = [];
    session.onEvent(() => {
      throw new Error('listener bug');
    });
    const subscription = session.onEvent((e) => seen.push(e.type));
    const result = await session.newPrompt('go');
    expect(result.answer).toBe('done');
    expect(t.inputs).toEqual(['x']);
    expect(logged.some((m) => m.includes('listener bug'))).toBe(true);
    expect(logged.some((m) => m.includes('terminal closed'))).toBe(true);
    expect(seen[0]).toBe('prompt_started');
    expect(seen.at(-1)).toBe('prompt_settled');
    expect(seen).toEqual(expect.arrayContaining(['tool_reason', 'approval_requested', 'approval_resolved', 'tool_started', 'tool_settled']));
    subscription.dispose();
    await session.newPrompt('again').catch(() => undefined);
    expect(seen.filter((e) => e === 'prompt_started')).toHaveLength(1);
  });

  it('commands and tools receive the calling session and pass its snapshot on as a parent context', async () => {
    const snapshots: ConversationSnapshot[] = [];
    const registry = testRegistry({ peek: (p, r) => (snapshots.push((p as SessionCommandPayload).session!.getConversationSnapshot()), r.success('seen')) });
    const sop = new SopSession({ agent: stubAgent({ plans: ['@a peek\n@lastAnswer final_answer $a'] }), skillsDescription: { peek: 'peeks' }, commandsRegistry: registry });
    await sop.newPrompt('look at yourself');
    expect(snapshots[0]).toMatchObject({ type: 'sop', status: 'running' });
    expect(snapshots[0]!.history[0]).toMatchObject({ type: 'plan', prompt: 'look at yourself' });
    let loopSnapshot: ConversationSnapshot | null = null;
    const tool = { description: 'peek', handler: async (_i: string, ctx: { session: { getConversationSnapshot(): ConversationSnapshot } }) => ((loopSnapshot = ctx.session.getConversationSnapshot()), 'ok') };
    const loop = new LoopSession({ agent: stubAgent({ decide: [decision('peek', ''), decision('final_answer', 'fine')] }), tools: { peek: tool }, options: { historyCompressionEnabled: false } });
    await loop.newPrompt('peek please');
    expect(loopSnapshot).toMatchObject({ type: 'loop', status: 'running', history: [{ type: 'user', prompt: 'peek please' }, { type: 'tool_call', tool: 'peek' }] });
  });

  it('a provider failure rejects with SessionRunError after recording run_error and marking the session failed; a later prompt still runs', async () => {
    const agent = stubAgent({ plans: [() => Promise.reject(new Error('503 from provider')), '@lastAnswer final_answer fine'] });
    const sop = new SopSession({ agent, skillsDescription: {}, commandsRegistry: testRegistry() });
    const error = await sop.newPrompt('go').catch((e) => e);
    expect(error).toBeInstanceOf(SessionRunError);
    expect(error.phase).toBe('planning');
    expect(sop.status).toBe('failed');
    expect(sop.history.at(-1)).toMatchObject({ type: 'system', event: 'run_error', phase: 'planning', message: '503 from provider' });
    expect(await sop.newPrompt('again')).toMatchObject({ kind: 'answered', answer: 'fine' });
    const loop = new LoopSession({ agent: stubAgent({ decide: [() => Promise.reject(new Error('down'))] }), tools: {} });
    const loopError = await loop.newPrompt('go').catch((e) => e);
    expect(loopError).toMatchObject({ name: 'SessionRunError', phase: 'decision' });
    expect(loop.turns[0]!.status).toBe('failed');
    expect(loop.status).toBe('failed');
  });

  it('a blank plan is an attempt failure (no_plan), not an error', async () => {
    const sop = new SopSession({ agent: stubAgent({ plans: ['   ', '```\n\n```'] }), skillsDescription: {}, commandsRegistry: testRegistry(), options: { maxPlanAttempts: 2 } });
    expect(await sop.newPrompt('go')).toMatchObject({ kind: 'failed', reason: 'no_plan', failures: [{ code: 'empty-plan' }], attempts: 2 });
  });

  it('a subscription whose buffer overflows ends with an error instead of blocking publishers', async () => {
    const registry = await createSessionRegistry({
      definitions: [defineAgentLoop({ name: 'main', agent: stubAgent({ plans: ['@a emit x\n@lastAnswer final_answer $a'] }), model: { name: 'm' }, registry: testRegistry() })],
      roots: ['main'], activeRoot: 'main', projectRoot: '.', supervisor: approveAllSupervisor, subscriptionBuffer: 2,
    });
    const subscription = registry.subscribe({ includeProgress: true });
    const settled = new Promise<void>((resolve) => registry.onEvent((e) => e.type === 'TurnSettled' && resolve()));
    await registry.submit({ text: 'go' });
    await settled;
    const iterator = subscription[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    expect((await iterator.next()).done).toBe(false);
    await expect(iterator.next()).rejects.toThrow(/overflowed its buffer of 2 events/);
    subscription.close();
    subscription.close();
    await registry.shutdown();
  });

  it('session memory: the loop system prompt carries the project root; the SOP system prompt reaches the planner; the planning registry only describes', async () => {
    const agent = stubAgent({ decide: [decision('final_answer', 'ok')], plans: ['@lastAnswer final_answer ok'] });
    const loop = new LoopSession({ agent, tools: {}, options: { systemPrompt: 'Be brief.', projectRoot: '/work/project', historyCompressionEnabled: false } });
    expect(loop.baseSystemPrompt).toBe('Be brief.\n\nCurrent project root: /work/project');
    await loop.newPrompt('hi');
    expect(agent.of('loop.decide')[0]!.history[0]!.message).toContain('Current project root: /work/project');
    const sop = new SopSession({ agent, skillsDescription: { emit: 'emit TEXT' }, commandsRegistry: testRegistry(), options: { systemPrompt: 'Always answer in French.' } });
    await sop.newPrompt('hi');
    expect(agent.of('sop.plan')[0]!.history[0]!.message).toContain('Always answer in French.');
    expect(sop.systemPrompt).toBe(sop.baseSystemPrompt);
    expect((sop.planCommandsRegistry.listCommands() as { name: string }[]).map((c) => c.name)).toEqual(['emit', 'final_answer', 'cannot_complete']);
    expect(() => sop.planCommandsRegistry.executeCommand({} as never, {} as never)).toThrow(/only describes commands/);
  });
});
