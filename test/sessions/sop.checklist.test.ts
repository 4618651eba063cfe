// sessions.md section 7, items 55-77 and 100: the SOP session with a scripted agent and the
// test registry (emit, combine, failer, canceler).
import { describe, expect, it } from 'vitest';
import type { CommandRegistry } from '@lightsop/runtime';
import { SopSession, type PlanReviewDecision, type ProgressItem, type SessionEvent } from '@lightsop/sessions';
import { testRegistry, type Handler } from '../helpers/registry';
import { deferred, recordingSupervisor, stubAgent, waitFor } from './helpers';

const skills = { emit: 'emit TEXT: returns TEXT', combine: 'combine A B: joins', failer: 'always fails', ask: 'asks the user' };

function session(plans: NonNullable<Parameters<typeof stubAgent>[0]>['plans'], options: ConstructorParameters<typeof SopSession>[0]['options'] = {}, extra: Record<string, Handler> = {}, interpret?: NonNullable<Parameters<typeof stubAgent>[0]>['interpret']) {
  const agent = stubAgent({ plans, ...(interpret ? { interpret } : {}) });
  const registry = testRegistry(extra);
  const s = new SopSession({ agent, skillsDescription: { ...skills, ...Object.fromEntries(Object.keys(extra).map((k) => [k, `test ${k}`])) }, commandsRegistry: registry, options });
  return { agent, registry, session: s };
}

const askHandler: Handler = (p, r) => (p.args[0] === 'start' ? r.success({ requiresInput: true, message: 'Which colour?', step: 'colour' }) : r.success(`colour is ${p.args[0]}`));

describe('SOP session', () => {
  it('55: plan generation uses executePrompt with the session model; a per-prompt model persists', async () => {
    const { agent, session: s } = session(['@lastAnswer final_answer one', '@lastAnswer final_answer two', '@lastAnswer final_answer three'], { model: 'base' });
    await s.newPrompt('first');
    await s.newPrompt('second', { model: 'changed' });
    await s.newPrompt('third');
    expect(agent.of('sop.plan').map((c) => c.options.model)).toEqual(['base', 'changed', 'changed']);
    expect(agent.of('sop.plan').every((c) => c.kind === 'executePrompt')).toBe(true);
    expect(s.options.model).toBe('changed');
  });

  it('56: the second request has the system message first (without the prompt), then the first prompt and its plan', async () => {
    const plan1 = '@a emit hi\n@lastAnswer final_answer $a';
    const { agent, session: s } = session([plan1, '@lastAnswer final_answer two']);
    await s.newPrompt('say hi');
    await s.newPrompt('now say bye');
    const call = agent.of('sop.plan')[1]!;
    expect(call.prompt).toBe('now say bye');
    expect(call.history[0]!.role).toBe('system');
    expect(call.history[0]!.message).not.toContain('now say bye');
    expect(call.history[0]!.message).toContain('update the existing');
    expect(call.history.slice(1)).toEqual([{ role: 'user', message: 'say hi' }, { role: 'assistant', message: plan1 }]);
  });

  it('57/58: a plan using a command missing from the registry is rejected before anything runs; only the valid replan executes', async () => {
    const { agent, registry, session: s } = session(['@a emit hi\n@b launch_rockets now\n@lastAnswer final_answer $a', '@a emit hi\n@lastAnswer final_answer $a']);
    const result = await s.newPrompt('do it');
    expect(result).toMatchObject({ kind: 'answered', answer: 'hi' });
    expect(registry.log).toEqual(['emit hi']);
    const second = agent.of('sop.plan')[1]!.history[0]!.message;
    expect(second).toContain('- b: command-not-allowed:launch_rockets');
    const system = agent.of('sop.plan')[0]!.history[0]!.message;
    expect(system).toMatch(/Commands \(the only executable surface of this session/);
    for (const name of ['emit', 'combine', 'failer', 'ask', 'final_answer', 'cannot_complete']) expect(system).toContain(`- ${name}: `);
    expect(system).not.toContain('clarify_context');
  });

  it('59: undefined-variable, cycle and duplicate-declaration errors are rejected before any command runs; warnings do not reject', async () => {
    for (const bad of ['@a emit $nope\n@lastAnswer final_answer $a', '@a emit $b\n@b emit $a\n@lastAnswer final_answer $a', '@a emit x\n@a emit y\n@lastAnswer final_answer $a']) {
      const { registry, session: s } = session([bad], { maxPlanAttempts: 1 });
      const result = await s.newPrompt('go');
      expect(result).toMatchObject({ kind: 'failed', reason: 'plan_invalid' });
      expect(registry.log).toEqual([]);
      expect(s.lastExecution).toEqual({ variables: {}, lastAnswer: null });
    }
    const { session: ok } = session(['@unused emit x\n@lastAnswer final_answer done']);
    expect((await ok.newPrompt('go')).kind).toBe('answered');
  });

  it('60: a plan without final_answer or cannot_complete is rejected', async () => {
    const { registry, session: s } = session(['@a emit x'], { maxPlanAttempts: 1 });
    const result = await s.newPrompt('go');
    expect(result).toMatchObject({ kind: 'failed', reason: 'plan_invalid', failures: [{ variable: '__plan__', code: 'missing-final-answer' }] });
    expect(registry.log).toEqual([]);
  });

  it('61: after a failed attempt the next request carries the feedback block with failures and the variable snapshot', async () => {
    const { agent, session: s } = session(['@a emit fine\n@b failer\n@lastAnswer final_answer $b', '@a emit fine\n@lastAnswer final_answer $a']);
    const result = await s.newPrompt('go');
    expect(result).toMatchObject({ kind: 'answered', answer: 'fine' });
    const feedback = agent.of('sop.plan')[1]!.history[0]!.message;
    expect(feedback).toContain('Execution feedback from the previous plan');
    expect(feedback).toContain('Failed variables:\n- b: oops');
    expect(feedback).toContain('Variable snapshot:\n- a: fine\n- b: oops\n- lastAnswer: waiting for b');
  });

  it('62: with maxPlanAttempts n at most n generations happen; then failed with lastRunFailures', async () => {
    const { agent, session: s } = session(['@b failer\n@lastAnswer final_answer $b'], { maxPlanAttempts: 2 });
    const result = await s.newPrompt('go');
    expect(agent.of('sop.plan')).toHaveLength(2);
    expect(result).toMatchObject({ kind: 'failed', reason: 'execution_failed', attempts: 2, failures: [{ variable: 'b', reason: 'oops' }] });
    expect(s.lastRunFailures).toEqual([{ variable: 'b', reason: 'oops' }]);
    expect(s.status).toBe('failed');
  });

  it('63: maxPlanAttempts defaults to 3 and values below 1 behave as 1', () => {
    expect(session([]).session.maxPlanAttempts).toBe(3);
    expect(session([], { maxPlanAttempts: 0 }).session.maxPlanAttempts).toBe(1);
    expect(session([], { maxPlanAttempts: -5 }).session.maxPlanAttempts).toBe(1);
    expect(session([], { maxPlanAttempts: Number.POSITIVE_INFINITY }).session.maxPlanAttempts).toBe(3);
  });

  it('64: planOnly / generatePlanOnly perform one generation, no validation, no execution; lastExecution stays null', async () => {
    for (const options of [{ planOnly: true }, { generatePlanOnly: true }]) {
      const { agent, registry, session: s } = session(['@a launch_rockets\n@x emit $nope'], options);
      const result = await s.newPrompt('plan it');
      expect(result).toEqual({ kind: 'plan_only', plan: '@a launch_rockets\n@x emit $nope', answer: null });
      expect(agent.calls).toHaveLength(1);
      expect(registry.log).toEqual([]);
      expect(s.lastExecution).toBeNull();
      expect(s.status).toBe('active');
    }
    const { session: perPrompt, registry } = session(['@a emit x\n@lastAnswer final_answer $a']);
    expect((await perPrompt.newPrompt('plan', { planOnly: true })).kind).toBe('plan_only');
    expect(registry.log).toEqual([]);
    const noRegistry = new SopSession({ agent: stubAgent({ plans: ['@lastAnswer final_answer x'] }), skillsDescription: {} });
    expect((await noRegistry.newPrompt('go')).kind).toBe('plan_only');
  });

  it('65: a command asking for input sets pendingTool, runs none of its dependents and settles awaiting_input', async () => {
    const { registry, session: s } = session(['@c ask start\n@d emit $c\n@lastAnswer final_answer $d'], {}, { ask: askHandler });
    const result = await s.newPrompt('paint it');
    expect(result).toMatchObject({ kind: 'awaiting_input', answer: 'Which colour?', pendingTool: { command: 'ask', variable: 'c', message: 'Which colour?', step: 'colour' } });
    expect(s.pendingTool).toEqual({ command: 'ask', variable: 'c', message: 'Which colour?', step: 'colour' });
    expect(registry.log).toEqual(['ask start']);
    expect(s.status).toBe('awaiting_input');
    expect(s.history).toContainEqual({ type: 'awaiting_input', tool: 'ask', variable: 'c', answer: 'Which colour?' });
  });

  it('66: the next accepting reply resumes the pending command with the reply as its argument, without a plan generation', async () => {
    const { agent, registry, session: s } = session(['@c ask start\n@lastAnswer final_answer $c'], {}, { ask: askHandler });
    await s.newPrompt('paint it');
    const result = await s.newPrompt('deep "blue"\nplease');
    expect(agent.of('sop.plan')).toHaveLength(1);
    expect(result).toMatchObject({ kind: 'answered', answer: 'colour is deep "blue"\nplease' });
    expect(registry.payloads.at(-1)!.args).toEqual(['deep "blue"\nplease']);
    expect((registry.payloads.at(-1) as { resume?: unknown }).resume).toMatchObject({ command: 'ask', variable: 'c' });
    expect(s.history.find((e) => e.type === 'plan' && e.route === 'pending_resume')).toMatchObject({ tool: 'ask', attempt: 1 });
    expect(s.pendingTool).toBeNull();
    const classified = session(['@c ask start\n@lastAnswer final_answer $c'], {}, { ask: askHandler }, () => ({ intent: 'update', confidence: 1 }));
    await classified.session.newPrompt('paint');
    const r = await classified.session.newPrompt('change it to red');
    expect(classified.agent.of('sop.plan')).toHaveLength(1);
    expect(r.answer).toBe('colour is change it to red');
  });

  it('67: a fresh instruction while paused clears pendingTool and plans normally', async () => {
    const { agent, session: s } = session(['@c ask start\n@lastAnswer final_answer $c', '@a emit listing\n@lastAnswer final_answer $a'], {}, { ask: askHandler });
    await s.newPrompt('paint');
    const result = await s.newPrompt('list my files');
    expect(agent.of('sop.plan')).toHaveLength(2);
    expect(result.answer).toBe('listing');
    expect(s.pendingTool).toBeNull();
    expect(s.history.some((e) => e.type === 'system' && e.event === 'pending_abandoned')).toBe(true);
    const named = session(['@c ask start\n@lastAnswer final_answer $c', '@a emit y\n@lastAnswer final_answer $a'], {}, { ask: askHandler });
    await named.session.newPrompt('paint');
    await named.session.newPrompt('use combine on it');
    expect(named.agent.of('sop.plan')).toHaveLength(2);
  });

  it('68: lastAnswer derivation order', async () => {
    const cases: [string, unknown][] = [
      ['@lastAnswer emit L\n@result emit R\n@x final_answer "explicit"', 'explicit'],
      ['@lastAnswer emit L\n@result emit R\n@f cannot_complete no\n@z emit z', 'no'],
      ['@result emit R\n@final emit F\n@y final_answer ""', ''],
      ['@answer emit A\n@domain emit D\n@zz emit $answer\n@y cannot_complete $zz', 'A'],
    ];
    for (const [plan, expected] of cases) {
      const { session: s } = session([plan]);
      await s.newPrompt('go');
      expect(s.getLastResult()).toBe(expected);
    }
    // Without an explicit final answer (a registry that lists final_answer itself is not allowed, so
    // derive from a plan whose final command never ran because its dependency is undefined).
    const { session: derived } = session(['@result emit R\n@final emit F\n@none nothing\n@y final_answer $none'], {}, { nothing: () => undefined });
    await derived.newPrompt('go');
    expect(derived.lastExecution!.lastAnswer).toBe('R');
    const { session: only } = session(['@solo nothing\n@y final_answer $solo'], {}, { nothing: () => undefined });
    await only.newPrompt('go');
    expect(only.getLastResult()).toBeNull();
  });

  it('69: cannot_complete settles cannot_complete with status failed and no further generation', async () => {
    const { agent, session: s } = session(['@lastAnswer cannot_complete "No access to the mail server."']);
    const result = await s.newPrompt('read my mail');
    expect(result).toEqual({ kind: 'cannot_complete', plan: '@lastAnswer cannot_complete "No access to the mail server."', answer: 'No access to the mail server.' });
    expect(s.status).toBe('failed');
    expect(agent.of('sop.plan')).toHaveLength(1);
  });

  it('70: aborting during plan generation resolves "Interrupted by user"; the next prompt answers and status returns to active', async () => {
    const { agent, session: s } = session([() => new Promise<string>(() => undefined), '@lastAnswer final_answer back']);
    const c = new AbortController();
    const p = s.newPrompt('slow', { signal: c.signal });
    await waitFor(() => agent.calls.length === 1);
    c.abort('esc');
    expect(await p).toMatchObject({ kind: 'interrupted', answer: 'Interrupted by user' });
    expect(s.status).toBe('interrupted');
    expect(s.history.at(-1)).toMatchObject({ type: 'system', event: 'interrupted', reason: 'esc' });
    expect(s.getLastResult()).toBe('Interrupted by user');
    expect(await s.newPrompt('again')).toMatchObject({ kind: 'answered', answer: 'back' });
    expect(s.status).toBe('active');
    expect(agent.of('sop.plan')[1]!.history[0]!.message).toContain('interrupted by user: esc');
  });

  it('71: interruption clears pendingTool and keeps the variables settled before the abort', async () => {
    const entered = deferred();
    const slow: Handler = (p, r) => (entered.resolve(), new Promise((resolve) => p.signal!.addEventListener('abort', () => resolve(r.fail('aborted')), { once: true })));
    const { session: s } = session(['@c ask start\n@lastAnswer final_answer $c', '@a emit kept\n@b slow $a\n@lastAnswer final_answer $b'], {}, { ask: askHandler, slow });
    await s.newPrompt('paint');
    expect(s.pendingTool).not.toBeNull();
    const c = new AbortController();
    const p = s.newPrompt('list things', { signal: c.signal });
    await entered.promise;
    c.abort('esc');
    const result = await p;
    expect(result.kind).toBe('interrupted');
    expect(s.pendingTool).toBeNull();
    expect(s.lastExecution!.variables.a).toBe('kept');
    expect(s.lastExecution!.lastAnswer).toBe('Interrupted by user');
  });

  it('72: a plan comment becomes a tool_reason item (comment, line) and is passed with the command; none for assign or final_answer', async () => {
    const writes: ProgressItem[] = [];
    const supervisor = { async approve() { return 'approve' as const; }, getOutputWriter: () => ({ write: async (i: ProgressItem) => void writes.push(i) }) };
    const { registry, session: s } = session(['# Say hello first\n@a emit hi\n# local text\n@n assign note\n# the answer\n@lastAnswer final_answer $a'], { supervisor });
    const events: SessionEvent[] = [];
    s.onEvent((e) => events.push(e));
    await s.newPrompt('go');
    expect(writes.filter((w) => w.type === 'tool_reason')).toEqual([{ type: 'tool_reason', tool: 'emit', reason: 'Say hello first', stepIndex: 2 }]);
    expect(events.filter((e) => e.type === 'tool_reason')).toHaveLength(1);
    expect(registry.payloads[0]!.comment).toBe('Say hello first');
  });

  it('73: every non-reserved command goes through approve(); a denial fails that variable without calling the command', async () => {
    const supervisor = recordingSupervisor((c) => (c.toolName === 'combine' ? { decision: 'deny', reason: 'no combining today' } : 'approve'));
    const { registry, session: s } = session(['@a emit x\n@b combine $a y\n@lastAnswer final_answer $b'], { supervisor, maxPlanAttempts: 1 });
    const result = await s.newPrompt('go');
    expect(supervisor.choices.map((c) => c.toolName)).toEqual(['emit', 'combine']);
    expect(supervisor.choices[1]).toMatchObject({ origin: 'sop', variable: 'b', params: { args: ['x', 'y'], raw: 'combine x y' } });
    expect(registry.log).toEqual(['emit x']);
    expect(result).toMatchObject({ kind: 'failed', reason: 'execution_failed' });
    expect(s.lastRunFailures[0]).toMatchObject({ variable: 'b', code: 'denied', reason: expect.stringContaining('Reason: no combining today') });
  });

  it('74/75: preparation runs in one child session with retries + 1 attempts; its answer is planner context, never a variable', async () => {
    const agent = stubAgent({
      plans: [
        '@p failer\n@lastAnswer final_answer $p',
        '@p emit "user prefers metric"\n@lastAnswer final_answer $p',
        '@a emit "20 km"\n@lastAnswer final_answer $a',
      ],
    });
    const registry = testRegistry();
    const s = new SopSession({ agent, skillsDescription: skills, commandsRegistry: registry, options: { preparation: { text: 'Find the unit preference.', retries: 1 } } });
    const result = await s.newPrompt('how far is it?');
    const plans = agent.of('sop.plan');
    expect(plans).toHaveLength(3);
    expect(plans[0]!.prompt).toContain('Find the unit preference.');
    expect(plans[1]!.history[0]!.message).toContain('- p: oops');
    expect(plans[2]!.prompt).toBe('how far is it?');
    expect(plans[2]!.history[0]!.message).toContain('Context gathered before planning:\nuser prefers metric');
    expect(s.preparationContextText).toBe('user prefers metric');
    expect(result).toMatchObject({ kind: 'answered', answer: '20 km' });
    expect(Object.values(s.lastExecution!.variables)).not.toContain('user prefers metric');
    expect(Object.keys(s.lastExecution!.variables)).toEqual(['a', 'lastAnswer']);
  });

  it('76: getVariables returns the last plan, the last answer, the variables ({} when none) and the status', async () => {
    const { session: s } = session(['@a emit hi\n@lastAnswer final_answer $a']);
    expect(await s.getVariables()).toEqual({ lastPlan: '', lastAnswer: null, variables: {}, status: 'idle' });
    await s.newPrompt('go');
    expect(await s.getVariables()).toEqual({ lastPlan: '@a emit hi\n@lastAnswer final_answer $a', lastAnswer: 'hi', variables: { a: 'hi', lastAnswer: 'hi' }, status: 'active' });
  });

  it('77: replaceSkillSurface keeps the object, refreshes descriptions and registry, records tools_refreshed; a bad registry throws', async () => {
    const { session: s } = session(['@a emit x\n@lastAnswer final_answer $a', '@a shout x\n@lastAnswer final_answer $a']);
    await s.newPrompt('first');
    const shout: CommandRegistry = { listCommands: () => [{ name: 'shout', description: 'shouts' }], executeCommand: (p, r) => r.success(String(p.args[0]).toUpperCase()) };
    const surface = s.replaceSkillSurface({ skillsDescription: { shout: 'shouts' }, commandsRegistry: shout }, { added: ['shout'], removed: ['emit'] });
    expect(Object.keys(surface.skillsDescription)).toEqual(['shout', 'final_answer', 'cannot_complete']);
    expect(s.history.at(-1)).toMatchObject({ type: 'system', event: 'tools_refreshed', added: ['shout'], removed: ['emit'], updated: [] });
    expect((await s.newPrompt('second')).answer).toBe('X');
    expect(() => s.replaceSkillSurface({ skillsDescription: {}, commandsRegistry: { listCommands: () => [] } as unknown as CommandRegistry })).toThrow(TypeError);
    expect(Object.keys(s.skillsDescription)).toContain('shout');
  });

  it('100: a rejected plan review settles failed plan_rejected without running or replanning; an edited plan is validated again', async () => {
    const reviews: PlanReviewDecision[] = [{ decision: 'reject', reason: 'too risky' }];
    const supervisor = { ...recordingSupervisor(), reviewPlan: async () => reviews.shift()! };
    const { agent, registry, session: s } = session(['@a emit x\n@lastAnswer final_answer $a'], { supervisor });
    const result = await s.newPrompt('go');
    expect(result).toMatchObject({ kind: 'failed', reason: 'plan_rejected', failures: [{ variable: '__plan__', code: 'plan-rejected', reason: 'too risky' }] });
    expect(registry.log).toEqual([]);
    expect(agent.of('sop.plan')).toHaveLength(1);

    const edits: PlanReviewDecision[] = [{ decision: 'edit', plan: '@a emit $missing\n@lastAnswer final_answer $a' }, { decision: 'edit', plan: '@a emit edited\n@lastAnswer final_answer $a' }, 'approve'];
    const editing = session(['@a emit original\n@lastAnswer final_answer $a', '@a emit second\n@lastAnswer final_answer $a'], { supervisor: { ...recordingSupervisor(), reviewPlan: async () => edits.shift()! } });
    const r = await editing.session.newPrompt('go');
    // The first edit is invalid: the attempt fails validation and the model replans; the second plan is edited again.
    expect(editing.agent.of('sop.plan')).toHaveLength(2);
    expect(r).toMatchObject({ kind: 'answered', answer: 'edited' });
    expect(editing.registry.log).toEqual(['emit edited']);
  });
});
