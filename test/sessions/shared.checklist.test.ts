// sessions.md section 7, items 1-9: reserved names and the shared contracts of both regimes.
import { describe, expect, it } from 'vitest';
import {
  CLARIFY_UNAVAILABLE, LoopSession, ReservedNameError, SessionBusyError, SopSession, createStandardSkills, toolsFromRegistry,
} from '@lightsop/sessions';
import { testRegistry } from '../helpers/registry';
import { decision, deferred, recordingTool, stubAgent, waitFor } from './helpers';

const sopInit = (agent = stubAgent({ plans: ['@lastAnswer final_answer ok'] })) => ({ agent, skillsDescription: { emit: 'emits' }, commandsRegistry: testRegistry() });

describe('reserved names and shared contracts', () => {
  it.each(['final_answer', 'cannot_complete', 'clarify_context'])('1: a loop session with a user tool named %s throws ReservedNameError', (name) => {
    const { tool } = recordingTool();
    expect(() => new LoopSession({ agent: stubAgent(), tools: { [name]: tool } })).toThrow(ReservedNameError);
    try {
      new LoopSession({ agent: stubAgent(), tools: { [name]: tool } });
    } catch (error) {
      expect((error as ReservedNameError).toolName).toBe(name);
    }
  });

  it.each(['final_answer', 'cannot_complete', 'clarify_context'])('2: a SOP session whose skills description contains %s throws', (name) => {
    expect(() => new SopSession({ agent: stubAgent(), skillsDescription: { [name]: 'x' }, commandsRegistry: testRegistry() })).toThrow(ReservedNameError);
  });

  it('3: replaceTools / replaceSkillSurface with a reserved name throw and change nothing', () => {
    const { tool } = recordingTool();
    const loop = new LoopSession({ agent: stubAgent(), tools: { t: tool } });
    const toolsBefore = loop.tools;
    const historyBefore = loop.history.length;
    expect(() => loop.replaceTools({ final_answer: tool })).toThrow(ReservedNameError);
    expect(loop.tools).toBe(toolsBefore);
    expect(loop.history.length).toBe(historyBefore);

    const sop = new SopSession(sopInit());
    const before = sop.skillsDescription;
    expect(() => sop.replaceSkillSurface({ skillsDescription: { cannot_complete: 'x' }, commandsRegistry: testRegistry() })).toThrow(ReservedNameError);
    expect(sop.skillsDescription).toBe(before);
    expect(sop.history).toHaveLength(0);
  });

  it('4: every loop session tool set and SOP surface includes final_answer and cannot_complete', () => {
    const loop = new LoopSession({ agent: stubAgent(), tools: {} });
    expect(Object.keys(loop.tools)).toEqual(expect.arrayContaining(['final_answer', 'cannot_complete']));
    const sop = new SopSession(sopInit());
    expect(Object.keys(sop.skillsDescription)).toEqual(expect.arrayContaining(['emit', 'final_answer', 'cannot_complete']));
    const listed = (sop.commandsRegistry!.listCommands() as { name: string }[]).map((c) => c.name);
    expect(listed).toEqual(expect.arrayContaining(['emit', 'final_answer', 'cannot_complete']));
  });

  it('5: clarify_context is absent from normal sessions even with a parent context and the enabling flag', () => {
    const parentContext = { type: 'loop', status: 'active', lastAnswer: null, history: [] };
    const loop = new LoopSession({ agent: stubAgent(), tools: {}, options: { enableClarifyContextTool: true, parentContext } });
    expect(Object.keys(loop.tools)).not.toContain('clarify_context');
    const sop = new SopSession({ ...sopInit(), options: { enableClarifyContextCommand: true, parentContext } });
    expect(Object.keys(sop.skillsDescription)).not.toContain('clarify_context');
  });

  it('6: in a loop preparation session with a parent context, clarify_context answers through executePrompt', async () => {
    const parentContext = { type: 'loop', status: 'active', lastAnswer: 'blue', history: [{ type: 'user', prompt: 'my favourite colour is blue' }] };
    const agent = stubAgent({
      decide: [decision('clarify_context', 'What is the favourite colour?'), decision('final_answer', '@context_colour := "$$clarify_context-res-1"')],
      clarify: ['The favourite colour is blue.'],
    });
    const child = new LoopSession({ agent, tools: {}, options: { preparationSession: true, enableClarifyContextTool: true, parentContext } });
    expect(Object.keys(child.tools)).toContain('clarify_context');
    const result = await child.newPrompt('gather');
    const clarify = agent.of('clarify_context');
    expect(clarify).toHaveLength(1);
    expect(clarify[0]!.prompt).toContain('my favourite colour is blue');
    expect(clarify[0]!.prompt).toContain('What is the favourite colour?');
    expect(clarify[0]!.prompt).toContain(CLARIFY_UNAVAILABLE);
    expect(result.answer).toBe('@context_colour := "The favourite colour is blue."');
  });

  it('7: in a SOP preparation session without a parent context, clarify_context returns the unavailable sentence without a model call', async () => {
    const agent = stubAgent({ plans: ['@info clarify_context "Which file?"\n@lastAnswer final_answer $info'] });
    const child = new SopSession({ agent, skillsDescription: {}, commandsRegistry: testRegistry(), options: { preparationSession: true } });
    expect(Object.keys(child.skillsDescription)).toContain('clarify_context');
    const result = await child.newPrompt('gather');
    expect(result.kind).toBe('answered');
    expect(result.answer).toBe(CLARIFY_UNAVAILABLE);
    expect(agent.of('clarify_context')).toHaveLength(0);
  });

  it('8: getConversationSnapshot returns type, status, last answer and a deep copy of history without tool results (loop and SOP)', async () => {
    const { tool } = recordingTool(() => ({ secret: 'tool value' }));
    const loop = new LoopSession({ agent: stubAgent({ decide: [decision('t', 'x'), decision('final_answer', 'done')] }), tools: { t: tool } });
    await loop.newPrompt('go');
    const snap = loop.getConversationSnapshot();
    expect(snap).toMatchObject({ type: 'loop', status: 'active', lastAnswer: 'done' });
    expect(JSON.stringify(snap)).not.toContain('tool value');
    (snap.history as { type: string }[])[0]!.type = 'mutated';
    snap.history.push({ extra: true });
    expect(loop.history[0]!.type).toBe('user');
    expect(loop.getConversationSnapshot().history).toHaveLength(snap.history.length - 1);

    const sop = new SopSession({ agent: stubAgent({ plans: ['@v emit "hidden value"\n@lastAnswer final_answer ok'] }), skillsDescription: { emit: 'e' }, commandsRegistry: testRegistry() });
    await sop.newPrompt('go');
    const s = sop.getConversationSnapshot();
    expect(s).toMatchObject({ type: 'sop', status: 'active', lastAnswer: 'ok' });
    expect(JSON.stringify(s.history)).not.toContain('"variables"');
    (s.history as { type: string }[])[0]!.type = 'mutated';
    expect(sop.history[0]!.type).toBe('plan');
  });

  it('9: newPrompt while a prompt is in flight rejects with SessionBusyError and changes nothing', async () => {
    const gate = deferred<string>();
    const planGate = deferred<string>();
    const agent = stubAgent({ decide: [() => gate.promise], plans: [() => planGate.promise] });
    const loop = new LoopSession({ agent, tools: {} });
    const first = loop.newPrompt('one');
    await waitFor(() => agent.calls.length === 1);
    const turns = loop.turns.length;
    const history = loop.history.length;
    await expect(loop.newPrompt('two')).rejects.toBeInstanceOf(SessionBusyError);
    expect(loop.turns.length).toBe(turns);
    expect(loop.history.length).toBe(history);
    expect(loop.status).toBe('running');

    const sop = new SopSession({ agent, skillsDescription: {}, commandsRegistry: testRegistry() });
    const sopFirst = sop.newPrompt('one');
    await waitFor(() => agent.calls.length === 2);
    await expect(sop.newPrompt('two')).rejects.toBeInstanceOf(SessionBusyError);
    expect(sop.history).toHaveLength(0);
    gate.resolve(decision('final_answer', 'fine'));
    planGate.resolve('@lastAnswer final_answer fine');
    expect((await first).answer).toBe('fine');
    expect((await sopFirst).answer).toBe('fine');
  });

  it('standard skills adapt to loop tools with their side-effect flags', () => {
    const tools = toolsFromRegistry(createStandardSkills({ root: process.cwd() }));
    expect(tools.read_file!.sideEffects).toBe(false);
    expect(tools.run_shell!.sideEffects).toBe(true);
  });
});
