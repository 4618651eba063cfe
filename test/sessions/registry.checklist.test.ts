// sessions.md section 7, items 78-99, 101 and 102, and the panel acceptance checks of section 5
// that the live loop's turn runner owns: the session registry with scripted agents.
import { describe, expect, it } from 'vitest';
import {
  ChangeError, approveAllSupervisor, changeEffort, changeModel, createSessionRegistry, defineAgentLoop, type CommandId, type EventLog,
  type LoopBuildContext, type LoopDefinition, type LoopId, type RegistryEvent, type RegistryInit, type SessionAgent,
} from '@lightsop/sessions';
import { testRegistry } from '../helpers/registry';
import { decision, deferred, stubAgent, waitFor } from './helpers';


function def(name: string, agent: SessionAgent, extra: Partial<Parameters<typeof defineAgentLoop>[0]> = {}): LoopDefinition {
  return defineAgentLoop({ name, agent, model: { name: 'base-model' }, registry: testRegistry(), sop: { maxPlanAttempts: 1 }, loop: { historyCompressionEnabled: false }, ...extra });
}

/** Wraps a definition so tests can read the build context of each loop. */
function capturing(definition: LoopDefinition, contexts: LoopBuildContext[]): LoopDefinition {
  return { ...definition, createSessions: (ctx) => (contexts.push(ctx), definition.createSessions(ctx)) };
}

async function start(definitions: LoopDefinition[], init: Partial<RegistryInit> = {}) {
  const events: RegistryEvent[] = [];
  const registry = await createSessionRegistry({ definitions, roots: [definitions[0]!.name], activeRoot: definitions[0]!.name, projectRoot: process.cwd(), supervisor: approveAllSupervisor, ...init });
  registry.onEvent((e) => events.push(e));
  const settled = (commandId: CommandId) => events.find((e): e is RegistryEvent & { type: 'TurnSettled' } => e.type === 'TurnSettled' && e.commandId === commandId);
  const waitSettled = async (commandId: CommandId) => {
    await waitFor(() => settled(commandId) !== undefined, 15000, `TurnSettled ${commandId}`);
    return settled(commandId)!;
  };
  return { registry, events, waitSettled, types: () => events.map((e) => e.type) };
}

const blocked = () => new Promise<string>(() => undefined);

describe('registry and live loops', () => {
  it('78/94: activeLoop() returns the active handle; a delegated child stays registered and idle and loop(id) returns it', async () => {
    const parentAgent = stubAgent({ plans: ['@r delegate helper "count the files"\n@lastAnswer final_answer $r'] });
    const childAgent = stubAgent({ plans: ['@lastAnswer final_answer "42 files"'] });
    const { registry, waitSettled } = await start([def('main', parentAgent, { delegates: ['helper'] }), def('helper', childAgent)]);
    const main = registry.activeLoop()!;
    expect(registry.loops().map((l) => l.name)).toEqual(['main']);
    const settled = await waitSettled(await registry.submit({ text: 'how many files?' }));
    expect(settled.outcome).toMatchObject({ kind: 'sop', result: { kind: 'answered', answer: '42 files' } });
    const child = registry.loops().find((l) => l.name === 'helper')!;
    expect(child.parentId).toBe(main.id);
    await waitFor(() => registry.loops().find((l) => l.id === child.id)!.state === 'idle');
    expect(registry.loop(child.id)).toMatchObject({ id: child.id, mode: 'sop' });
    // The user may focus the child and submit to it.
    const more = await registry.submitToLoop(child.id, { text: 'and now?' });
    expect((await waitSettled(more)).loopId).toBe(child.id);
    await registry.shutdown();
  });

  it('79: loop(id) and loopController(id) are undefined only for ids never registered', async () => {
    const { registry } = await start([def('main', stubAgent())]);
    const id = registry.activeLoop()!.id;
    expect(registry.loop(id)).toBeDefined();
    expect(registry.loopController(id)).toBeDefined();
    expect(registry.loop('nope' as LoopId)).toBeUndefined();
    expect(registry.loopController('nope' as LoopId)).toBeUndefined();
    await registry.shutdown();
    expect(registry.loop(id)).toBeDefined();
  });

  it('80/84: setActiveLoop rejects loop_not_found, closing, loop_exited and leaves the active loop unchanged', async () => {
    const { registry } = await start([def('main', stubAgent()), def('other', stubAgent())]);
    const main = registry.activeLoop()!.id;
    const other = await registry.newLoop('other');
    await expect(registry.setActiveLoop('missing' as LoopId)).rejects.toMatchObject({ kind: 'loop_not_found' });
    const shutdown = registry.shutdown();
    await expect(registry.setActiveLoop(other)).rejects.toMatchObject({ kind: 'closing' });
    await shutdown;
    await expect(registry.setActiveLoop(other)).rejects.toMatchObject({ kind: 'closing' });
    expect(registry.activeLoop()!.id).toBe(main);
  });

  it('80: a loop whose actor exited (its host session factory failed) is refused with loop_exited; the active loop stays', async () => {
    const agent = stubAgent({ plans: ['@lastAnswer final_answer ok'] });
    const base = def('fragile', agent);
    const fragile: LoopDefinition = {
      ...base,
      createSessions: (ctx) => ({ ...base.createSessions(ctx), loop: () => { throw new Error('no loop session for this host'); } }),
    };
    const { registry, events, waitSettled } = await start([def('main', stubAgent()), fragile]);
    const main = registry.activeLoop()!.id;
    const broken = await registry.newLoop('fragile', { mode: 'loop' });
    const settled = await waitSettled(await registry.submitToLoop(broken, { text: 'go' }));
    expect(settled.outcome).toMatchObject({ kind: 'error', message: 'no loop session for this host' });
    await waitFor(() => events.some((e) => e.type === 'LoopExited' && e.loopId === broken));
    expect(registry.loops().find((l) => l.id === broken)!.state).toBe('exited');
    await expect(registry.setActiveLoop(broken)).rejects.toMatchObject({ kind: 'loop_exited' });
    await expect(registry.submitToLoop(broken, { text: 'again' })).rejects.toMatchObject({ kind: 'loop_exited' });
    await expect(registry.loopController(broken)!.setMode('sop')).rejects.toMatchObject({ kind: 'loop_exited' });
    expect(registry.activeLoop()!.id).toBe(main);
    expect(registry.loop(broken)).toBeDefined();
    await registry.shutdown();
  });

  it('81/82: switching commits ActiveLoopChanged before activeLoop() changes; re-selecting is a no-op', async () => {
    const { registry, events } = await start([def('main', stubAgent())]);
    const main = registry.activeLoop()!.id;
    const other = await registry.newLoop('main');
    const seenDuring: (string | undefined)[] = [];
    registry.onEvent((e) => e.type === 'ActiveLoopChanged' && seenDuring.push(registry.activeLoop()?.id));
    await registry.setActiveLoop(other);
    expect(seenDuring).toEqual([main]);
    expect(registry.activeLoop()!.id).toBe(other);
    expect(events.filter((e) => e.type === 'ActiveLoopChanged')).toEqual([expect.objectContaining({ previousLoopId: main, activeLoopId: other })]);
    await registry.setActiveLoop(other);
    expect(events.filter((e) => e.type === 'ActiveLoopChanged')).toHaveLength(1);
    await registry.shutdown();
  });

  it('83: when committing ActiveLoopChanged fails, setActiveLoop rejects faulted and the active loop stays; interrupt and shutdown still work', async () => {
    const log: EventLog = { append: async (e) => { if (e.type === 'ActiveLoopChanged') throw new Error('disk full'); return e.seq; } };
    const { registry, events } = await start([def('main', stubAgent())], { eventLog: log });
    const main = registry.activeLoop()!.id;
    const other = await registry.newLoop('main');
    await expect(registry.setActiveLoop(other)).rejects.toMatchObject({ kind: 'faulted' });
    expect(registry.activeLoop()!.id).toBe(main);
    expect(events.some((e) => e.type === 'SessionFaulted')).toBe(true);
    await expect(registry.submit({ text: 'x' })).rejects.toMatchObject({ kind: 'faulted' });
    await expect(registry.newLoop('main')).rejects.toMatchObject({ kind: 'faulted' });
    await expect(registry.loopController(main)!.setMode('loop')).rejects.toMatchObject({ kind: 'faulted' });
    expect(await registry.interrupt()).toBe(false);
    await registry.shutdown();
  });

  it('85/86/87/101: changing the active loop stops nothing; submitToLoop keeps its target; idle starts, running queues', async () => {
    const gate = deferred<string>();
    const { registry, events, waitSettled } = await start([def('main', stubAgent({ plans: [() => gate.promise, '@lastAnswer final_answer second'] }))]);
    const main = registry.activeLoop()!.id;
    const other = await registry.newLoop('main');
    const first = await registry.submit({ text: 'first' });
    expect(events.find((e) => e.type === 'TurnStarted' && e.commandId === first)).toMatchObject({ loopId: main, agency: 'user' });
    const queued = await registry.submitToLoop(main, { text: 'second' });
    expect(events.find((e) => e.type === 'InputQueued' && e.commandId === queued)).toBeDefined();
    await registry.setActiveLoop(other);
    expect(registry.loops().find((l) => l.id === main)!.state).toBe('running');
    gate.resolve('@lastAnswer final_answer first');
    expect((await waitSettled(first)).outcome).toMatchObject({ kind: 'sop', result: { answer: 'first' } });
    expect((await waitSettled(queued)).loopId).toBe(main);
    await registry.shutdown();
    const empty = await createSessionRegistry({ definitions: [def('main', stubAgent())], roots: ['main'], activeRoot: 'main', projectRoot: '.' });
    await empty.shutdown();
    empty.dispose();
    await expect(empty.submit({ text: 'x' })).rejects.toMatchObject({ kind: 'loop_not_found' });
  });

  it('88: handle.mode and handle.model change only after the change is committed; a refused change leaves both', async () => {
    let release: (() => void) | null = null;
    const log: EventLog = {
      append: async (e) => {
        if (e.type === 'LoopModeChanged') await new Promise<void>((r) => (release = r));
        return e.seq;
      },
    };
    const { registry } = await start([def('main', stubAgent(), { modes: [{ name: 'review', regime: 'loop', model: { name: 'review-model' } }] })], { eventLog: log });
    const controller = registry.loopController(registry.activeLoop()!.id)!;
    const handle = registry.activeLoop()!;
    const pending = controller.setMode('review');
    await waitFor(() => release !== null);
    expect(handle.mode).toBe('sop');
    expect(handle.model.name).toBe('base-model');
    release!();
    await pending;
    expect(handle.mode).toBe('review');
    expect(handle.model.name).toBe('review-model');
    await expect(controller.change([changeModel({ name: '' })])).rejects.toMatchObject({ kind: 'invalid_model' });
    expect(handle.model.name).toBe('review-model');
    await registry.shutdown();
  });

  it('89: change([]) rejects no_changes; a batch with one invalid change applies nothing and commits no event', async () => {
    const { registry, events } = await start([def('main', stubAgent())]);
    const controller = registry.loopController(registry.activeLoop()!.id)!;
    await expect(controller.change([])).rejects.toMatchObject({ kind: 'no_changes' });
    await expect(controller.change([changeModel({ name: 'new-model' }), changeEffort('extreme' as never)])).rejects.toMatchObject({ kind: 'invalid_effort' });
    expect(controller.model.name).toBe('base-model');
    expect(events.some((e) => e.type === 'LoopInferenceChanged')).toBe(false);
    await controller.change([changeModel({ name: 'a' }), changeEffort('low'), changeModel({ name: 'b', tags: ['x'] })]);
    expect(controller.model).toEqual({ name: 'b', tags: ['x'], effort: 'low' });
    expect(events.filter((e) => e.type === 'LoopInferenceChanged')).toHaveLength(1);
    await registry.shutdown();
  });

  it('90: setMode with an unknown mode rejects invalid_mode; a valid mode set during a turn applies from the next turn', async () => {
    const gate = deferred<string>();
    const agent = stubAgent({ plans: [() => gate.promise], decide: [decision('final_answer', 'from the loop')] });
    const { registry, events, waitSettled } = await start([def('main', agent)]);
    const controller = registry.loopController(registry.activeLoop()!.id)!;
    await expect(controller.setMode('nonsense')).rejects.toBeInstanceOf(ChangeError);
    await expect(controller.setMode('nonsense')).rejects.toMatchObject({ kind: 'invalid_mode', mode: 'nonsense' });
    const first = await registry.submit({ text: 'first' });
    await controller.setMode('loop');
    gate.resolve('@lastAnswer final_answer from sop');
    expect((await waitSettled(first)).outcome).toMatchObject({ kind: 'sop' });
    const second = await registry.submit({ text: 'second' });
    expect(events.find((e) => e.type === 'TurnStarted' && e.commandId === second)).toMatchObject({ regime: 'loop' });
    expect((await waitSettled(second)).outcome).toMatchObject({ kind: 'loop', result: { answer: 'from the loop' } });
    await registry.shutdown();
  });

  it('91/92: controller.interrupt cancels the loop and its descendants only; registry interrupt cancels all and is quiet when idle', async () => {
    const parentAgent = stubAgent({ plans: ['@r delegate helper "sub task"\n@lastAnswer final_answer $r'] });
    const childAgent = stubAgent({ plans: [blocked] });
    const siblingAgent = stubAgent({ plans: [blocked] });
    const { registry, events, waitSettled } = await start([def('main', parentAgent, { delegates: ['helper'] }), def('helper', childAgent), def('sibling', siblingAgent)]);
    expect(await registry.interrupt()).toBe(false);
    const main = registry.activeLoop()!.id;
    const sibling = await registry.newLoop('sibling');
    const siblingTurn = await registry.submitToLoop(sibling, { text: 'keep going' });
    const parentTurn = await registry.submit({ text: 'delegate it' });
    await waitFor(() => childAgent.calls.length === 1);
    await registry.loopController(main)!.interrupt({ reason: 'user' });
    const settledParent = await waitSettled(parentTurn);
    expect(settledParent.outcome).toMatchObject({ kind: 'interrupted', message: 'Interrupted by user' });
    const child = registry.loops().find((l) => l.name === 'helper')!;
    await waitFor(() => events.some((e) => e.type === 'TurnSettled' && e.loopId === child.id));
    expect(registry.loops().find((l) => l.id === sibling)!.state).toBe('running');
    expect(await registry.interrupt()).toBe(true);
    expect((await waitSettled(siblingTurn)).outcome).toMatchObject({ kind: 'interrupted' });
    const before = events.length;
    expect(await registry.interrupt()).toBe(false);
    expect(events.length).toBe(before);
    await registry.shutdown();
  });

  it('4.7: while an interrupt barrier holds, queued inputs wait; they start in order once the interrupted turn settled', async () => {
    const release = deferred<void>();
    const agent = stubAgent({
      plans: [
        (c) => new Promise<string>((resolve) => c.options.signal!.addEventListener('abort', () => void release.promise.then(() => resolve('@lastAnswer final_answer late')), { once: true })),
        '@lastAnswer final_answer queued one',
      ],
    });
    const { registry, events, waitSettled } = await start([def('main', agent)]);
    const first = await registry.submit({ text: 'slow' });
    const queued = await registry.submit({ text: 'next' });
    await waitFor(() => agent.calls.length === 1, 15000, 'the first plan request');
    await registry.interrupt();
    expect(events.some((e) => e.type === 'TurnStarted' && e.commandId === queued)).toBe(false);
    release.resolve();
    expect((await waitSettled(first)).outcome.kind).toBe('interrupted');
    expect((await waitSettled(queued)).outcome).toMatchObject({ kind: 'sop', result: { answer: 'queued one' } });
    await registry.shutdown();
  });

  it('93: lifecycle registered -> running -> idle -> running -> closing -> exited', async () => {
    const { registry, events, waitSettled } = await start([def('main', stubAgent({ plans: ['@lastAnswer final_answer ok'] }))]);
    const id = registry.activeLoop()!.id;
    const state = () => registry.loops().find((l) => l.id === id)!.state;
    expect(state()).toBe('registered');
    const c1 = await registry.submit({ text: 'one' });
    expect(state()).toBe('running');
    await waitSettled(c1);
    await waitFor(() => state() === 'idle');
    await registry.submit({ text: 'two' });
    expect(state()).toBe('running');
    await registry.shutdown();
    expect(state()).toBe('exited');
    const mine = events.filter((e) => e.loopId === id && e.type !== 'SessionProgress').map((e) => e.type);
    expect(mine).toEqual(['TurnStarted', 'TurnSettled', 'LoopIdle', 'TurnStarted', 'LoopClosing', 'TurnSettled', 'LoopExited']);
  });

  it('95/97/98: shutdown reaches every loop (idle children, never-run loops) before the final cancellation; concurrent calls share it; entries stay until dispose', async () => {
    const contexts: LoopBuildContext[] = [];
    const parentAgent = stubAgent({ plans: ['@r delegate helper "x"\n@lastAnswer final_answer $r'] });
    const { registry, events, waitSettled } = await start([
      capturing(def('main', parentAgent, { delegates: ['helper'] }), contexts), capturing(def('helper', stubAgent({ plans: ['@lastAnswer final_answer y'] })), contexts),
    ]);
    const neverRun = await registry.newLoop('helper');
    await waitSettled(await registry.submit({ text: 'go' }));
    const signal = contexts[0]!.registrySignal;
    const order: string[] = [];
    registry.onEvent((e) => {
      if (e.type === 'LoopClosing' || e.type === 'SessionStopped') order.push(`${e.type}:${signal.aborted}`);
    });
    const [a, b] = await Promise.allSettled([registry.shutdown(), registry.shutdown()]);
    expect(a.status).toBe('fulfilled');
    expect(b.status).toBe('fulfilled');
    expect(signal.aborted).toBe(true);
    expect(order).toEqual(['LoopClosing:false', 'LoopClosing:false', 'LoopClosing:false', 'SessionStopped:false']);
    expect(events.filter((e) => e.type === 'SessionStopped')).toHaveLength(1);
    expect(registry.loops().map((l) => l.state)).toEqual(['exited', 'exited', 'exited']);
    expect(registry.loop(neverRun)).toBeDefined();
    registry.dispose();
    expect(registry.loop(neverRun)).toBeUndefined();
    expect(registry.activeLoop()).toBeUndefined();
  });

  it('96: no child loop is registered after shutdown took its snapshot; newLoop and delegation reject closing', async () => {
    const contexts: LoopBuildContext[] = [];
    const { registry } = await start([capturing(def('main', stubAgent(), { delegates: ['helper'] }), contexts), def('helper', stubAgent())]);
    const shutdown = registry.shutdown();
    await expect(registry.newLoop('helper')).rejects.toMatchObject({ kind: 'closing' });
    await expect(contexts[0]!.delegate!('helper', 'x', new AbortController().signal)).rejects.toMatchObject({ kind: 'closing' });
    await shutdown;
    expect(registry.loops()).toHaveLength(1);
  });

  it('99: delegation beyond maxDepth or maxChildren is refused; a failed spawn does not consume quota', async () => {
    const contexts: LoopBuildContext[] = [];
    const broken: LoopDefinition = { ...def('broken', stubAgent()), createSessions: () => { throw new Error('cannot build'); } };
    const { registry } = await start([
      capturing(def('a', stubAgent(), { delegates: ['b', 'broken'] }), contexts), capturing(def('b', stubAgent({ plans: ['@lastAnswer final_answer b done'] }), { delegates: ['b'] }), contexts), broken,
    ], { limits: { maxDepth: 2, maxChildren: 1 } });
    const signal = new AbortController().signal;
    await expect(contexts[0]!.delegate!('broken', 'x', signal)).rejects.toThrow('cannot build');
    expect(await contexts[0]!.delegate!('b', 'work', signal)).toBe('b done');
    await expect(contexts[0]!.delegate!('b', 'again', signal)).rejects.toMatchObject({ kind: 'quota_exceeded' });
    await expect(contexts[1]!.delegate!('b', 'deeper', signal)).rejects.toMatchObject({ kind: 'depth_exceeded' });
    await registry.shutdown();
  });

  it('102: cancelQueued removes a queued input and commits InputCancelled; a started input is not affected', async () => {
    const gate = deferred<string>();
    const { registry, events, waitSettled } = await start([def('main', stubAgent({ plans: [() => gate.promise] }))]);
    const id = registry.activeLoop()!.id;
    const running = await registry.submit({ text: 'one' });
    const queued = await registry.submit({ text: 'two' });
    expect(registry.loops()[0]!.queued).toBe(1);
    expect(await registry.cancelQueued(id, running)).toBe(false);
    expect(await registry.cancelQueued(id, queued)).toBe(true);
    expect(events.find((e) => e.type === 'InputCancelled')).toMatchObject({ commandId: queued, reason: 'cancelled' });
    gate.resolve('@lastAnswer final_answer done');
    await waitSettled(running);
    await waitFor(() => registry.loops()[0]!.state === 'idle');
    expect(events.some((e) => e.type === 'TurnStarted' && e.commandId === queued)).toBe(false);
    await registry.shutdown();
  });
});

describe('panel acceptance checks owned by the turn runner (5.1)', () => {
  it('plan_invalid in mode sop re-runs the input in the loop session within the same turn; execution_failed does not', async () => {
    const agent = stubAgent({ plans: ['@a launch_rockets\n@lastAnswer final_answer $a', '@b failer\n@lastAnswer final_answer $b'], decide: [decision('final_answer', 'done by the loop')] });
    const { registry, waitSettled } = await start([def('main', agent)]);
    const first = await waitSettled(await registry.submit({ text: 'launch' }));
    expect(first.outcome).toMatchObject({ kind: 'sop', result: { kind: 'failed', reason: 'plan_invalid' }, fellBackToLoop: { kind: 'answer', answer: 'done by the loop' } });
    const second = await waitSettled(await registry.submit({ text: 'fail please' }));
    expect(second.outcome).toMatchObject({ kind: 'sop', result: { kind: 'failed', reason: 'execution_failed' } });
    expect((second.outcome as { fellBackToLoop?: unknown }).fellBackToLoop).toBeUndefined();
    expect(agent.of('loop.decide')).toHaveLength(1);
    await registry.shutdown();
  });

  it('the loop session starts from the unified transcript; turns it missed arrive as context lines; the SOP session gets the loop turns as context', async () => {
    const agent = stubAgent({
      plans: ['@lastAnswer final_answer "sop answer 1"', '@lastAnswer final_answer "sop answer 2"', '@lastAnswer final_answer "sop answer 3"'],
      decide: [decision('final_answer', 'loop answer 1'), decision('final_answer', 'loop answer 2')],
    });
    const { registry, waitSettled } = await start([def('main', agent)]);
    await waitSettled(await registry.submit({ text: 'sop question 1' }));
    await waitSettled(await registry.submit({ text: 'loop question 1', regime: 'loop' }));
    const firstDecide = agent.of('loop.decide')[0]!;
    expect(firstDecide.history.slice(1)).toEqual([{ role: 'user', message: 'sop question 1' }, { role: 'assistant', message: 'sop answer 1' }]);
    await waitSettled(await registry.submit({ text: 'sop question 2' }));
    const sopCall = agent.of('sop.plan')[1]!;
    expect(sopCall.history[0]!.message).toContain('Earlier conversation:\nuser: loop question 1\nanswer: loop answer 1');
    await waitSettled(await registry.submit({ text: 'loop question 2', regime: 'loop' }));
    const secondDecide = agent.of('loop.decide')[1]!;
    expect(secondDecide.history[0]!.message).toContain('user: sop question 2\nanswer: sop answer 2');
    expect(secondDecide.history[0]!.message).not.toContain('user: sop question 1');
    await registry.shutdown();
  });

  it('a pending interaction is sticky: the next input goes to the paused session whatever the mode', async () => {
    const ask = testRegistry({ ask: (p, r) => (p.args[0] === 'start' ? r.success({ requiresInput: true, message: 'Which?' }) : r.success(`chose ${p.args[0]}`)) });
    const agent = stubAgent({ plans: ['@c ask start\n@lastAnswer final_answer $c'] });
    const { registry, events, waitSettled } = await start([defineAgentLoop({ name: 'main', agent, model: { name: 'm' }, registry: ask })]);
    const first = await waitSettled(await registry.submit({ text: 'pick' }));
    expect(first.outcome).toMatchObject({ kind: 'sop', result: { kind: 'awaiting_input', answer: 'Which?' } });
    await registry.loopController(registry.activeLoop()!.id)!.setMode('loop');
    const second = await registry.submit({ text: 'the red one' });
    expect(events.find((e) => e.type === 'TurnStarted' && e.commandId === second)).toMatchObject({ regime: 'sop' });
    expect((await waitSettled(second)).outcome).toMatchObject({ kind: 'sop', result: { kind: 'answered', answer: 'chose the red one' } });
    await registry.shutdown();
  });

  it('session events reach subscribers as SessionProgress with the command id; plan mode runs plan-only', async () => {
    const agent = stubAgent({ plans: ['@a emit hi\n@lastAnswer final_answer $a'] });
    const { registry, waitSettled } = await start([def('main', agent)]);
    const subscription = registry.subscribe({ includeProgress: true });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const e of subscription) {
        seen.push(e.type === 'SessionProgress' ? `progress:${e.event.type}` : e.type);
        if (e.type === 'TurnSettled') break;
      }
    })();
    const id = await registry.submit({ text: 'hi', regime: 'plan' });
    await reading;
    expect(seen).toContain('progress:plan_generated');
    expect((await waitSettled(id)).outcome).toMatchObject({ kind: 'sop', result: { kind: 'plan_only' } });
    subscription.close();
    await registry.shutdown();
  });
});
