// The chat panel's host side (extension/src/chat/controller.ts) with a fake page and the scripted
// OpenAI-compatible server on 127.0.0.1: the real registry, sessions and HTTP client underneath.
// Each test checks what the page would show (its copy of the state, built only from what the
// host posted) and, at the end, that the page and the host agree.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { STORAGE_KEY, continueInLoopText, readSaved, type ChatController } from '../../extension/src/chat/controller';
import type { OutcomeView } from '../../extension/src/chat/model';
import type { LlmServer, Script } from '../helpers/llm-server';
import { API_KEY, isLoopRequest, lastUser, loopReply, testEnvironment, useChats, testSkills, waitFor, type FakePage, type TestEnvironment, type TestSkills } from './helpers';

const chats = useChats();

interface Setup {
  controller: ChatController;
  page: FakePage;
  env: TestEnvironment;
  skills: TestSkills;
  server: LlmServer;
}

async function setup(script: Script, o: { skills?: TestSkills; settings?: Partial<TestEnvironment['settingsValue']>; store?: Map<string, unknown>; root?: string } = {}): Promise<Setup> {
  const server = await chats.serve(script);
  const skills = o.skills ?? testSkills();
  const env = testEnvironment({ server, skills, ...(o.settings ? { settings: o.settings } : {}), ...(o.store ? { store: o.store } : {}), ...(o.root ? { root: o.root } : {}) });
  const { controller, page } = await chats.start(env);
  return { controller, page, env, skills, server };
}

async function send(s: Setup, text: string, loopId?: string): Promise<void> {
  await s.controller.handleMessage({ type: 'send', loopId: loopId ?? s.page.state.activeLoopId, text });
}

function settledTurn(s: Setup, text: string, loopId?: string) {
  return waitFor(`the turn "${text.slice(0, 30)}" to settle`, () => {
    const turn = s.page.tab(loopId).turns.find((t) => t.text === text && t.status === 'settled');
    return turn ?? null;
  });
}

function expectAgreement(s: Setup): void {
  expect(s.page.state).toEqual(s.controller.state);
}

describe('chat controller: sending and answers', () => {
  it('answers a prompt with a plan: the page gets the plan with its declarations, the variables settle, and the answer', async () => {
    const s = await setup((r) => (lastUser(r) === 'Shout hello and count'
      ? '# Shout it\n@loud shout hello world\n@n count_words $loud\n@lastAnswer final_answer $loud has $n words'
      : 'unexpected'));
    await send(s, 'Shout hello and count');
    const turn = await settledTurn(s, 'Shout hello and count');
    expect(turn.regime).toBe('sop');
    expect(turn.attempts).toHaveLength(1);
    const attempt = turn.attempts[0]!;
    expect(attempt.plan).toContain('@loud shout hello world');
    expect(attempt.steps.map((st) => [st.name, st.command, st.deps])).toEqual([['loud', 'shout', []], ['n', 'count_words', ['loud']], ['lastAnswer', 'final_answer', ['loud', 'n']]]);
    expect(Object.fromEntries(attempt.variables.map((v) => [v.variable, [v.state, v.value]]))).toEqual({
      loud: ['success', 'HELLO WORLD'], n: ['success', '2'], lastAnswer: ['success', 'HELLO WORLD has 2 words'],
    });
    expect(turn.progress).toEqual(['Shout it']);
    expect(turn.outcome).toMatchObject({ kind: 'answered', regime: 'sop', text: 'HELLO WORLD has 2 words' });
    expect(turn.approvals).toEqual([]);
    // The page saw the variables go through running before success.
    const states = s.page.events().flatMap((e) => (e.type === 'registry' && e.event.type === 'SessionProgress' && e.event.event.type === 'variable_status' && e.event.event.variable === 'n' ? [e.event.event.state] : []));
    expect(states).toEqual(['running', 'success']);
    expect(s.skills.log).toEqual(['shout hello world', 'count_words HELLO WORLD']);
    expect(s.page.tab().state).toBe('idle');
    expectAgreement(s);
  });

  it('the usage line: the page gets the tokens the provider reported, summed over the requests', async () => {
    const s = await setup((r) => ({ text: lastUser(r) === 'one' ? '@lastAnswer final_answer first' : '@lastAnswer final_answer second', usage: { inputTokens: 300, outputTokens: 20 } }));
    expect(s.page.state.usage).toBeNull();
    await send(s, 'one');
    await settledTurn(s, 'one');
    await waitFor('the usage of the first request', () => s.page.state.usage?.inputTokens === 300);
    expect(s.page.state.usage).toEqual({ inputTokens: 300, outputTokens: 20 });
    await send(s, 'two');
    await settledTurn(s, 'two');
    await waitFor('the usage of both requests', () => s.page.state.usage?.inputTokens === 600);
    expect(s.page.state.usage).toEqual({ inputTokens: 600, outputTokens: 40 });
    expectAgreement(s);
  });

  it('messages sent while a turn runs are queued; Remove cancels a queued one and the others run in order', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const s = await setup(async (r) => {
      if (lastUser(r) === 'first') await gate;
      return `@lastAnswer final_answer "answer to ${lastUser(r)}"`;
    });
    await send(s, 'first');
    await waitFor('the first request', () => s.server.requests.length === 1);
    await send(s, 'second');
    await send(s, 'third');
    const tab = await waitFor('two queued messages', () => (s.page.tab().queued.length === 2 ? s.page.tab() : null));
    const second = tab.turns.find((t) => t.text === 'second')!;
    expect(second.status).toBe('queued');
    await s.controller.handleMessage({ type: 'cancelQueued', loopId: tab.id, commandId: second.commandId });
    await waitFor('second removed', () => s.page.tab().turns.find((t) => t.text === 'second')?.status === 'cancelled');
    expect(s.page.tab().queued).toHaveLength(1);
    release();
    expect((await settledTurn(s, 'third')).outcome).toMatchObject({ kind: 'answered', text: 'answer to third' });
    expect((await settledTurn(s, 'first')).outcome).toMatchObject({ kind: 'answered', text: 'answer to first' });
    expect(s.server.prompts()).toEqual(['first', 'third']);
    expectAgreement(s);
  });

  it('says clearly when no language model is configured, and submits nothing', async () => {
    const s = await setup(() => 'unused');
    s.env.provider = async () => ({ ok: false, message: 'No language model is configured for the chat. Set lightsop.llm.baseUrl and lightsop.llm.model.' });
    await send(s, 'hello?');
    const tab = await waitFor('the notice', () => (s.page.tab().notice ? s.page.tab() : null));
    expect(tab.notice).toMatchObject({ level: 'error', text: expect.stringContaining('No language model is configured') });
    expect(tab.turns).toEqual([]);
    expect(s.page.state.provider).toMatchObject({ ready: false, message: expect.stringContaining('lightsop.llm.baseUrl') });
    expect(s.server.requests).toHaveLength(0);
    expectAgreement(s);
  });

  it('a provider error settles as an error with Retry, which sends the same text again', async () => {
    const s = await setup((r, i) => (i === 0 ? { status: 400, text: 'bad request' } : `@lastAnswer final_answer "fine now: ${lastUser(r)}"`));
    await send(s, 'try me');
    const failed = await settledTurn(s, 'try me');
    expect(failed.outcome).toMatchObject({ kind: 'error', text: expect.stringContaining('planning failed') });
    await s.controller.handleMessage({ type: 'retry', loopId: s.page.state.activeLoopId, commandId: failed.commandId });
    await waitFor('the retried turn to answer', () => s.page.tab().turns.filter((t) => t.text === 'try me').length === 2 && s.page.lastTurn().outcome?.kind === 'answered');
    expect(s.page.lastTurn().outcome?.text).toBe('fine now: try me');
    expectAgreement(s);
  });

  it('ignores malformed messages from the page', async () => {
    const s = await setup(() => 'unused');
    const before = s.controller.state;
    for (const bad of [null, 'send', { type: 'send', loopId: '../x', text: 'hi' }, { type: 'send', loopId: s.page.state.activeLoopId, text: '   ' }, { type: 'approval', id: 'x', decision: 'maybe' }, { type: 'eval', code: '1' }]) {
      await s.controller.handleMessage(bad);
    }
    expect(s.controller.state).toBe(before);
    expect(s.env.logs.filter((l) => l.includes('malformed'))).toHaveLength(6);
    expect(s.server.requests).toHaveLength(0);
  });
});

describe('chat controller: approvals and plan review', () => {
  const notePlan = '# Keep it\n@note save_note hello there\n@lastAnswer final_answer $note';

  it('asks before a command with side effects and runs it after Approve; "Always approve" skips the card for the identical call', async () => {
    const s = await setup(() => notePlan);
    await send(s, 'save a note');
    const card = await waitFor('the approval card', () => s.page.lastTurn().approvals.find((a) => a.state === 'open'));
    expect(card).toMatchObject({ tool: 'save_note', origin: 'sop', variable: 'note', reason: 'Keep it', sideEffects: null });
    expect(JSON.parse(card.input)).toEqual({ args: ['hello', 'there'], raw: 'save_note hello there' });
    expect(card.key).toBe('save_note {"args":["hello","there"],"raw":"save_note hello there"}');
    expect(s.skills.log).toEqual([]);
    expect(s.env.attention).toEqual(['save_note is waiting for your approval in the chat.']);
    expect(s.page.lastTurn().attempts[0]!.variables.find((v) => v.variable === 'note')?.state).toBe('running');
    await s.controller.handleMessage({ type: 'approval', id: card.id, decision: 'alwaysApprove' });
    const turn = await settledTurn(s, 'save a note');
    expect(turn.outcome).toMatchObject({ kind: 'answered', text: 'saved: hello there' });
    expect(turn.approvals.map((a) => a.state)).toEqual(['always']);
    expect(s.skills.log).toEqual(['save_note hello there']);

    await send(s, 'save it again');
    const again = await settledTurn(s, 'save it again');
    expect(again.approvals).toEqual([]);
    expect(again.outcome?.text).toBe('saved: hello there');
    expect(s.skills.log).toEqual(['save_note hello there', 'save_note hello there']);
    expectAgreement(s);
  });

  it('Deny with a reason runs nothing and the reason reaches the planner; a plain Approve is asked again next time', async () => {
    const s = await setup((_r, i) => (i === 0 ? notePlan : i === 1 ? '@lastAnswer final_answer "I did not save it."' : notePlan));
    await send(s, 'save a note');
    const card = await waitFor('the approval card', () => s.page.lastTurn().approvals.find((a) => a.state === 'open'));
    await s.controller.handleMessage({ type: 'approval', id: card.id, decision: 'deny', reason: 'not today' });
    const turn = await settledTurn(s, 'save a note');
    expect(turn.approvals[0]).toMatchObject({ state: 'denied', denyReason: 'not today' });
    expect(turn.outcome).toMatchObject({ kind: 'answered', text: 'I did not save it.' });
    expect(turn.attempts).toHaveLength(2);
    expect(s.skills.log).toEqual([]);
    const replan = s.server.requests[1]!.messages[0]!.content;
    expect(replan).toContain('Denied before execution: tool "save_note" was not run.');
    expect(replan).toContain('Reason: not today');

    await send(s, 'now save it');
    const second = await waitFor('a new card', () => s.page.lastTurn().approvals.find((a) => a.state === 'open'));
    await s.controller.handleMessage({ type: 'approval', id: second.id, decision: 'approve' });
    expect((await settledTurn(s, 'now save it')).outcome?.text).toBe('saved: hello there');
    expectAgreement(s);
  });

  it('Stop while an approval card is open closes it as Cancelled, the command never runs, and the next message works', async () => {
    const s = await setup((r) => (lastUser(r) === 'after' ? '@lastAnswer final_answer "still here"' : notePlan));
    await send(s, 'save a note');
    const card = await waitFor('the approval card', () => s.page.lastTurn().approvals.find((a) => a.state === 'open'));
    expect(s.page.tab().runningCommandId).not.toBeNull();
    await s.controller.handleMessage({ type: 'stop', loopId: s.page.state.activeLoopId });
    const turn = await settledTurn(s, 'save a note');
    expect(turn.approvals).toEqual([expect.objectContaining({ id: card.id, state: 'cancelled' })]);
    expect(turn.outcome).toMatchObject({ kind: 'interrupted', text: 'Interrupted by user' });
    // A late click changes nothing.
    await s.controller.handleMessage({ type: 'approval', id: card.id, decision: 'approve' });
    expect(s.skills.log).toEqual([]);
    expect(s.page.tab().stopping).toBe(false);
    await send(s, 'after');
    expect((await settledTurn(s, 'after')).outcome?.text).toBe('still here');
    expect(s.skills.log).toEqual([]);
    expectAgreement(s);
  });

  it('plan review: Reject settles plan_rejected and runs nothing; Edit runs the saved edit; sideEffects mode skips read-only plans', async () => {
    const s = await setup((r) => (lastUser(r) === 'read only' ? '@x shout quiet\n@lastAnswer final_answer $x' : notePlan), { settings: { reviewPlans: 'always' } });
    await send(s, 'save a note');
    const review = await waitFor('the review card', () => s.page.lastTurn().reviews.find((r) => r.state === 'open'));
    expect(review).toMatchObject({ attempt: 1, plan: notePlan, previousPlan: '' });
    expect(review.steps.map((st) => st.name)).toEqual(['note', 'lastAnswer']);
    await s.controller.handleMessage({ type: 'review', id: review.id, decision: 'reject', reason: 'too risky' });
    const rejected = await settledTurn(s, 'save a note');
    expect(rejected.outcome).toMatchObject({ kind: 'failed', reason: 'plan_rejected' });
    expect(rejected.reviews[0]).toMatchObject({ state: 'rejected', reason: 'too risky' });
    expect(s.server.requests).toHaveLength(1);

    s.env.editResult = (plan) => plan.replace('save_note hello there', 'shout edited by me');
    await send(s, 'save another');
    const second = await waitFor('the second review card', () => s.page.lastTurn().reviews.find((r) => r.state === 'open'));
    await s.controller.handleMessage({ type: 'review', id: second.id, decision: 'edit' });
    // The edited plan is validated and reviewed again before it runs.
    const again = await waitFor('the review of the edited plan', () => s.page.lastTurn().reviews.find((r) => r.state === 'open' && r.plan.includes('shout edited by me')));
    expect(s.skills.log).toEqual([]);
    await s.controller.handleMessage({ type: 'review', id: again.id, decision: 'run' });
    const edited = await settledTurn(s, 'save another');
    expect(edited.reviews.map((r) => r.state)).toEqual(['edited', 'run']);
    expect(edited.outcome).toMatchObject({ kind: 'answered', text: 'EDITED BY ME' });
    expect(edited.attempts[0]!.plan).toContain('@note shout edited by me');
    expect(s.skills.log).toEqual(['shout edited by me']);

    s.env.settingsValue = { ...s.env.settingsValue, reviewPlans: 'sideEffects' };
    await send(s, 'read only');
    const quiet = await settledTurn(s, 'read only');
    expect(quiet.reviews).toEqual([]);
    expect(quiet.outcome?.text).toBe('QUIET');
    expectAgreement(s);
  });
});

describe('chat controller: stopping', () => {
  it('Stop during a slow reply: the tab says Stopping until the turn settles as interrupted; the queued message then starts', async () => {
    const s = await setup((r) => (lastUser(r) === 'slow one' ? { hold: true } : '@lastAnswer final_answer "quick"'));
    await send(s, 'slow one');
    await waitFor('the slow request', () => s.server.requests.length === 1);
    await send(s, 'quick one');
    await waitFor('the queued message', () => s.page.tab().queued.length === 1);
    await s.controller.handleMessage({ type: 'stop', loopId: s.page.state.activeLoopId });
    const slow = await settledTurn(s, 'slow one');
    // "Stopping…" from the click until the interrupted turn settled.
    const events = s.page.events();
    const stopping = events.findIndex((e) => e.type === 'stopping');
    const settled = events.findIndex((e) => e.type === 'registry' && e.event.type === 'TurnSettled' && e.event.commandId === slow.commandId);
    expect(stopping).toBeGreaterThanOrEqual(0);
    expect(stopping).toBeLessThan(settled);
    // The model never answers the slow request: Stop closed it.
    await waitFor('the slow request to be closed', () => s.server.aborted.includes(0));
    expect(slow.outcome).toMatchObject({ kind: 'interrupted', text: 'Interrupted by user' });
    expect((await settledTurn(s, 'quick one')).outcome?.text).toBe('quick');
    expect(s.page.tab().stopping).toBe(false);
    expect(s.env.running[0]).toBe(true);
    expect(s.env.running.at(-1)).toBe(false);
    expectAgreement(s);
  });

  it('Stop all interrupts every running conversation; Stop on one tab leaves the other running', async () => {
    const s = await setup(() => ({ hold: true }));
    const first = s.page.state.activeLoopId!;
    await s.controller.handleMessage({ type: 'newConversation' });
    const second = await waitFor('the second tab to be active', () => (s.page.state.activeLoopId !== first ? s.page.state.activeLoopId : null));
    await send(s, 'one', first);
    await send(s, 'two', second);
    await send(s, 'three', first);
    await waitFor('two requests', () => s.server.requests.length === 2);
    await s.controller.handleMessage({ type: 'stop', loopId: second });
    expect((await settledTurn(s, 'two', second)).outcome?.kind).toBe('interrupted');
    expect(s.page.tab(first).runningCommandId).not.toBeNull();
    await s.controller.handleMessage({ type: 'stopAll' });
    expect((await settledTurn(s, 'one', first)).outcome?.kind).toBe('interrupted');
    // The queued message survives the stop and starts after the interrupted turn settled.
    await waitFor('the queued message to start', () => s.page.tab(first).turns.find((t) => t.text === 'three')?.status === 'running');
    await s.controller.handleMessage({ type: 'stopAll' });
    expect((await settledTurn(s, 'three', first)).outcome?.kind).toBe('interrupted');
    expect(await s.controller.stopAll()).toBe(false);
    expectAgreement(s);
  });
});

describe('chat controller: results that arrive after Stop', () => {
  /** A read-only skill that starts, then waits for the test to let it finish. */
  function lateSkill() {
    let release!: (text: string) => void;
    const gate = new Promise<string>((resolve) => (release = resolve));
    let entered = false;
    const skills = testSkills({ slow_read: { description: 'Reads slowly', sideEffects: false, run: async () => ((entered = true), gate) } });
    return { skills, release: (text: string) => release(text), entered: () => entered };
  }

  const stateEvents = (s: Setup, variable: string) => s.page.events().flatMap((e) => (
    e.type === 'registry' && e.event.type === 'SessionProgress' && e.event.event.type === 'variable_status' && e.event.event.variable === variable ? [e.event.event.state] : []));

  it('a plan step that resolves after Stop never shows as success: the event says canceled and the turn is interrupted', async () => {
    const late = lateSkill();
    const s = await setup(() => '@page slow_read x\n@lastAnswer final_answer $page', { skills: late.skills });
    await send(s, 'read it');
    await waitFor('the step to run', () => late.entered() && stateEvents(s, 'page').includes('running'));
    await s.controller.handleMessage({ type: 'stop', loopId: s.page.state.activeLoopId });
    late.release('the late page');
    const turn = await settledTurn(s, 'read it');
    expect(turn.outcome).toMatchObject({ kind: 'interrupted', text: 'Interrupted by user' });
    expect(stateEvents(s, 'page')).toEqual(['running', 'canceled']);
    const row = turn.attempts[0]!.variables.find((v) => v.variable === 'page')!;
    expect(row.state).toBe('canceled');
    expect(row.value).toContain('after the interrupt');
    expect(JSON.stringify(s.page.events())).not.toContain('the late page');
    // The session agrees: the late value is not among the variables of the interrupted execution.
    const sessions = s.controller.registry!.sessionsOf(s.page.state.activeLoopId as never)!;
    expect(sessions.sop.lastExecution).toEqual({ variables: { lastAnswer: 'waiting for page' }, lastAnswer: 'Interrupted by user' });
    expectAgreement(s);
  });

  it('a loop step whose tool resolves after Stop is not reported ok', async () => {
    const late = lateSkill();
    const s = await setup((r) => (isLoopRequest(r) ? loopReply('slow_read', 'x', 'read it') : '@x no_such_command\n@lastAnswer final_answer $x'), { skills: late.skills });
    await send(s, 'read it');
    await waitFor('the loop step to run', () => late.entered());
    await s.controller.handleMessage({ type: 'stop', loopId: s.page.state.activeLoopId });
    late.release('the late page');
    const turn = await settledTurn(s, 'read it');
    expect(turn.outcome).toMatchObject({ kind: 'interrupted' });
    const outcomes = s.page.events().flatMap((e) => (e.type === 'registry' && e.event.type === 'SessionProgress' && e.event.event.type === 'tool_settled' ? [e.event.event.outcome] : []));
    expect(outcomes).not.toContain('ok');
    expect(turn.steps.find((st) => st.tool === 'slow_read')?.outcome).not.toBe('ok');
    expectAgreement(s);
  });
});

describe('chat controller: fallback and loop mode', () => {
  it('falls back to the loop session in the same turn when no plan validates, and shows its steps', async () => {
    const s = await setup((r) => {
      if (!isLoopRequest(r)) return '@x no_such_command hi\n@lastAnswer final_answer $x';
      return r.messages[0]!.content.includes('shout-res-1') ? loopReply('final_answer', 'It says HI.') : loopReply('shout', 'hi', 'make it loud');
    });
    await send(s, 'shout hi');
    const turn = await settledTurn(s, 'shout hi');
    expect(turn.attempts).toHaveLength(3);
    expect(turn.attempts.every((a) => a.failures.some((f) => f.code === 'unknown-command'))).toBe(true);
    expect(turn.outcome).toMatchObject({ kind: 'answered', regime: 'loop', text: 'It says HI.', fellBack: { sopReason: 'plan_invalid' } });
    expect(turn.phase).toBe('loop');
    expect(turn.steps[0]).toMatchObject({ tool: 'shout', reason: 'make it loud', input: 'hi', approval: 'approved', outcome: 'ok', resultRef: 'shout-res-1', preview: 'HI' });
    expect(s.skills.log).toEqual(['shout hi']);
    expectAgreement(s);
  });

  it('after an execution failure offers "Continue in loop mode", which sends the restated request in the loop regime', async () => {
    const s = await setup((r) => {
      if (!isLoopRequest(r)) return '@x failer\n@lastAnswer final_answer $x';
      return loopReply('final_answer', 'Done the other way.');
    });
    await send(s, 'do the thing');
    const failed = await settledTurn(s, 'do the thing');
    expect(failed.outcome).toMatchObject({ kind: 'failed', regime: 'sop', reason: 'execution_failed' });
    expect(failed.outcome?.failures).toEqual([expect.objectContaining({ variable: 'x', reason: expect.stringContaining('the failer failed') })]);
    expect(s.server.requests.filter(isLoopRequest)).toHaveLength(0);
    await s.controller.handleMessage({ type: 'continueInLoop', loopId: s.page.state.activeLoopId, commandId: failed.commandId });
    const text = continueInLoopText('do the thing', failed.outcome as OutcomeView);
    const cont = await settledTurn(s, text);
    expect(cont.regime).toBe('loop');
    expect(cont.outcome).toMatchObject({ kind: 'answered', regime: 'loop', text: 'Done the other way.' });
    expect(text).toContain('Request: do the thing');
    expect(text).toContain('@x failer');
    expect(text).toContain('- x: ');
    expect(lastUser(s.server.requests.find(isLoopRequest)!)).toContain('Failed plan:');
    expectAgreement(s);
  });
});

describe('chat controller: tabs and pickers', () => {
  it('new conversation, switch and close follow the registry: the highlight moves on ActiveLoopChanged; close hides, activity shows again', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const s = await setup(async (r) => {
      if (lastUser(r) === 'wait') await gate;
      return '@lastAnswer final_answer "ok"';
    });
    const first = s.page.state.activeLoopId!;
    await s.controller.handleMessage({ type: 'newConversation' });
    const second = await waitFor('the new tab', () => (s.page.state.tabs.length === 2 ? s.page.state.tabs[1]!.id : null));
    expect(s.page.state.activeLoopId).toBe(second);
    const changes = s.page.events().filter((e) => e.type === 'registry' && e.event.type === 'ActiveLoopChanged');
    expect(changes).toHaveLength(1);
    await s.controller.handleMessage({ type: 'selectTab', loopId: first });
    await waitFor('the highlight to follow ActiveLoopChanged', () => s.page.state.activeLoopId === first);

    await send(s, 'wait', first);
    await waitFor('the turn to run', () => s.server.requests.length === 1);
    await send(s, 'queued', first);
    await s.controller.handleMessage({ type: 'closeTab', loopId: first });
    await waitFor('the closed tab to hide and the other to be active', () => s.page.tab(first).hidden && s.page.state.activeLoopId === second);
    // The loop is still there and still running.
    expect(s.controller.registry!.loop(first as never)).toBeDefined();
    release();
    await waitFor('the hidden tab to reappear when its queued message starts', () => !s.page.tab(first).hidden);
    await settledTurn(s, 'queued', first);
    expectAgreement(s);
  });

  it('a refused tab switch is shown inline and the highlight stays', async () => {
    const s = await setup(() => 'unused');
    const first = s.page.state.activeLoopId!;
    await s.controller.handleMessage({ type: 'newConversation' });
    const second = await waitFor('the new tab', () => (s.page.state.activeLoopId !== first ? s.page.state.activeLoopId : null));
    await s.controller.registry!.shutdown();
    await s.controller.handleMessage({ type: 'selectTab', loopId: first });
    await waitFor('the refusal', () => s.page.tab(second).notice?.text === 'Cannot switch to that conversation: closing');
    expect(s.page.state.activeLoopId).toBe(second);
    expect(s.page.tab(first).state).toBe('exited');
    expectAgreement(s);
  });

  it('mode and model pickers show a new value only after the change is committed; a refused change keeps the old value and says why', async () => {
    const s = await setup((r) => (isLoopRequest(r) ? loopReply('final_answer', `loop answer with ${r.model}`) : '@lastAnswer final_answer "sop"'));
    const id = s.page.state.activeLoopId!;
    await s.controller.handleMessage({ type: 'setMode', loopId: id, mode: 'loop' });
    await waitFor('the committed mode', () => s.page.tab().mode === 'loop' && s.page.tab().picker.pending === null);
    const order = s.page.events().flatMap((e) => (e.type === 'picker' ? [`picker:${e.pending ? 'pending' : 'done'}`] : e.type === 'registry' && e.event.type === 'LoopModeChanged' ? ['committed'] : []));
    expect(order).toEqual(['picker:pending', 'committed', 'picker:done']);
    await s.controller.handleMessage({ type: 'setMode', loopId: id, mode: 'nonsense' });
    await waitFor('the refusal', () => s.page.tab().picker.error);
    expect(s.page.tab()).toMatchObject({ mode: 'loop', picker: { pending: null, error: 'mode not changed: invalid_mode' } });

    await s.controller.handleMessage({ type: 'setInference', loopId: id, model: 'other-model', effort: 'low' });
    await waitFor('the committed model', () => s.page.tab().model.name === 'other-model' && s.page.tab().picker.pending === null);
    expect(s.page.tab().model).toEqual({ name: 'other-model', effort: 'low' });
    expect(s.page.tab().picker.error).toBeNull();
    await send(s, 'hi');
    expect((await settledTurn(s, 'hi')).outcome).toMatchObject({ regime: 'loop', text: 'loop answer with other-model' });
    expect(s.server.requests[0]).toMatchObject({ model: 'other-model', reasoning_effort: 'low' });
    expect(s.page.state.models.map((m) => m.name)).toEqual(['default', 'test-model', 'other-model']);
    expectAgreement(s);
  });
});

describe('chat controller: skills and persistence', () => {
  it('refreshes every conversation\'s commands when the workspace skills change', async () => {
    const s = await setup((r) => (r.messages[0]!.content.includes('- wave:') ? '@w wave\n@lastAnswer final_answer $w' : '@lastAnswer final_answer "no wave yet"'));
    await send(s, 'wave');
    expect((await settledTurn(s, 'wave')).outcome?.text).toBe('no wave yet');
    const next = testSkills({ wave: { description: 'Waves', sideEffects: false, run: () => 'o/' } });
    s.env.skills = { registry: next.registry, note: null, stamp: 'v2' };
    await send(s, 'wave again');
    expect((await settledTurn(s, 'wave again')).outcome?.text).toBe('o/');
    expect(s.env.logs).toContain('skills refreshed: +1 ~0 -0');
  });

  it('standard skills stay inside the workspace root and ask before writing', async () => {
    const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'lightsop-chat-')));
    const s = await setup((r) => {
      if (lastUser(r) === 'write') return '@w write_file notes.txt "from the chat"\n@lastAnswer final_answer $w';
      return r.messages[0]!.content.includes('Failed variables') ? '@lastAnswer final_answer "gave up"' : '@w write_file ../outside.txt "escape"\n@lastAnswer final_answer $w';
    }, { root, settings: { standardSkills: true } });
    await send(s, 'write');
    const card = await waitFor('the approval card for write_file', () => s.page.lastTurn().approvals.find((a) => a.state === 'open'));
    expect(card).toMatchObject({ tool: 'write_file', sideEffects: true });
    await s.controller.handleMessage({ type: 'approval', id: card.id, decision: 'approve' });
    expect((await settledTurn(s, 'write')).outcome?.kind).toBe('answered');
    expect(readFileSync(path.join(root, 'notes.txt'), 'utf8')).toBe('from the chat');
    await send(s, 'escape');
    const escape = await waitFor('the second card', () => s.page.lastTurn().approvals.find((a) => a.state === 'open'));
    await s.controller.handleMessage({ type: 'approval', id: escape.id, decision: 'approve' });
    const turn = await settledTurn(s, 'escape');
    expect(turn.attempts[0]!.variables.find((v) => v.variable === 'w')).toMatchObject({ state: 'fail', value: expect.stringMatching(/outside|leave|root/i) });
  });

  it('saves conversations (no secrets) and restores them in a new window: shown as restored, given to the sessions as earlier conversation', async () => {
    const store = new Map<string, unknown>();
    const script: Script = (r) => {
      if (isLoopRequest(r)) return loopReply('final_answer', 'loop remembers');
      return lastUser(r) === 'What is the code word?' ? '@lastAnswer final_answer "The code word is heron."' : '@lastAnswer final_answer "noted"';
    };
    const s = await setup(script, { store });
    await send(s, 'What is the code word?');
    await settledTurn(s, 'What is the code word?');
    await s.controller.handleMessage({ type: 'setMode', loopId: s.page.state.activeLoopId, mode: 'plan' });
    await waitFor('the saved conversation', () => readSaved(store.get(STORAGE_KEY)).length === 1);
    await s.controller.shutdown();
    const saved = JSON.stringify(store.get(STORAGE_KEY));
    expect(saved).not.toContain(API_KEY);
    expect(saved).not.toContain(s.server.url);
    expect(readSaved(store.get(STORAGE_KEY))).toEqual([{ mode: 'plan', model: 'default', turns: [{ user: 'What is the code word?', answer: 'The code word is heron.', kind: 'answered' }] }]);

    // A new window: a new controller over the same workspace storage.
    const t = await setup(script, { store });
    const tab = await waitFor('the restored turns', () => (t.page.tab().restored.length > 0 ? t.page.tab() : null));
    expect(tab.restored).toEqual([{ user: 'What is the code word?', answer: 'The code word is heron.', kind: 'answered' }]);
    expect(tab.turns).toEqual([]);
    expect(tab.mode).toBe('plan');
    await t.controller.handleMessage({ type: 'setMode', loopId: tab.id, mode: 'sop' });
    const before = t.server.requests.length;
    await send(t, 'Remember it?');
    await settledTurn(t, 'Remember it?');
    const sopRequest = t.server.requests[before]!;
    expect(sopRequest.messages[0]!.content).toContain('restored from a previous VS Code window');
    expect(sopRequest.messages[0]!.content).toContain('answer: The code word is heron.');
    await t.controller.handleMessage({ type: 'setMode', loopId: tab.id, mode: 'loop' });
    await send(t, 'And in loop mode?');
    await settledTurn(t, 'And in loop mode?');
    const loopRequest = t.server.requests.find(isLoopRequest)!;
    expect(loopRequest.messages.slice(1, 3)).toEqual([
      { role: 'user', content: 'What is the code word?' },
      { role: 'assistant', content: 'The code word is heron.' },
    ]);
    expect(JSON.stringify(t.controller.state)).not.toContain(API_KEY);
    expectAgreement(t);
  });
});
