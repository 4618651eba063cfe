// The chat panel's approval card as the host builds it (issue 11.7): the input is never cut, and a
// plan step's arguments arrive one by one, so the page can show where each begins and ends.
import { describe, expect, it } from 'vitest';
import type { Script } from '../helpers/llm-server';
import { isLoopRequest, loopReply, testEnvironment, testSkills, useChats, waitFor } from './helpers';

const chats = useChats();

async function setup(script: Script, settings: Record<string, unknown> = {}) {
  const server = await chats.serve(script);
  const skills = testSkills();
  const env = testEnvironment({ server, skills, settings });
  const { controller, page } = await chats.start(env);
  return { controller, page, skills };
}

const LONG = `${'x'.repeat(10_000)}; echo TAIL`;

describe('the approval card', () => {
  it('carries the whole input and each argument of a plan step, however long', async () => {
    const s = await setup(() => `@note save_note "${LONG}" "a b" c\n@lastAnswer final_answer $note`);
    await s.controller.handleMessage({ type: 'send', loopId: s.page.state.activeLoopId, text: 'save it' });
    const card = await waitFor('the approval card', () => s.page.lastTurn().approvals.find((a) => a.state === 'open'));
    expect(card.args).toEqual([LONG, 'a b', 'c']);
    expect(card.input).toContain(LONG);
    expect(JSON.parse(card.input)).toEqual({ args: [LONG, 'a b', 'c'], raw: `save_note ${LONG} a b c` });
    await s.controller.handleMessage({ type: 'approval', id: card.id, decision: 'deny' });
    expect(s.skills.log).toEqual([]);
  });

  it('carries the whole input of a loop tool', async () => {
    const s = await setup((req, i) => (isLoopRequest(req) && i === 0 ? loopReply('save_note', LONG) : loopReply('final_answer', 'done')), { reviewPlans: 'off' });
    await s.controller.handleMessage({ type: 'setMode', loopId: s.page.state.activeLoopId, mode: 'loop' });
    await waitFor('loop mode', () => s.page.tab().mode === 'loop');
    await s.controller.handleMessage({ type: 'send', loopId: s.page.state.activeLoopId, text: 'save it' });
    const card = await waitFor('the approval card', () => s.page.lastTurn().approvals.find((a) => a.state === 'open'));
    expect(card.origin).toBe('loop');
    expect(card.input).toBe(LONG);
    expect(card.args).toBeUndefined();
    await s.controller.handleMessage({ type: 'approval', id: card.id, decision: 'deny' });
  });
});
