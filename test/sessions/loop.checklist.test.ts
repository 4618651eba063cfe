// sessions.md section 7, items 10-41: the loop session's options, decisions, history, tools,
// approval, limits and history compression, with a scripted agent.
import { describe, expect, it } from 'vitest';
import {
  ERROR_LIMIT_ANSWER, FINALIZE_FAILURES_REASON, LoopSession, stableStringify, type LoopHistoryEntry, type ProgressItem,
} from '@lightsop/sessions';
// Internals of the package, tested directly.
import { parseDecision } from '../../packages/sessions/src/decision';
import { resolveLoopOptions } from '../../packages/sessions/src/loop-session';
import { decision, recordingSupervisor, recordingTool, stubAgent } from './helpers';

const noCompression = { historyCompressionEnabled: false } as const;

describe('loop session: options, decisions, history', () => {
  it('10: default options', () => {
    const o = resolveLoopOptions();
    expect(o).toMatchObject({
      maxStepsPerTurn: 8, maxErrors: 5, maxRetriesPerTurn: 3, historyCompressionEnabled: true, historyCompressionThresholdTokens: 6000,
      historyCompressionKeepRecentEntries: 8, historyCompressionMaxSummaryTokens: 1200,
    });
    const odd = resolveLoopOptions({ maxStepsPerTurn: Number.NaN, historyCompressionMaxSummaryTokens: 50, historyCompressionKeepRecentEntries: -3, historyCompressionThresholdTokens: 0.5 });
    expect(odd).toMatchObject({ maxStepsPerTurn: 8, historyCompressionMaxSummaryTokens: 200, historyCompressionKeepRecentEntries: 0, historyCompressionThresholdTokens: 1 });
    const session = new LoopSession({ agent: stubAgent(), tools: {}, options: { historyCompressionEnabled: 0 as unknown as boolean } });
    expect(session.options.historyCompressionEnabled).toBe(true);
  });

  it('11: a final_answer decision ends the turn: answer, session active, turn done, history user then final_answer', async () => {
    const session = new LoopSession({ agent: stubAgent({ decide: [decision('final_answer', 'Hello!')] }), tools: {}, options: noCompression });
    const result = await session.newPrompt('say hello');
    expect(result).toMatchObject({ kind: 'answer', answer: 'Hello!' });
    expect(session.status).toBe('active');
    expect(result.turn.status).toBe('done');
    expect(session.lastAnswer).toBe('Hello!');
    const types = session.history.map((e) => e.type);
    expect(types[0]).toBe('user');
    expect(types[types.length - 1]).toBe('final_answer');
  });

  it('12: newPrompt(p, { model }) uses the new model for every planner call of the turn and stores it', async () => {
    const { tool } = recordingTool();
    const agent = stubAgent({ decide: [decision('t', 'a'), decision('final_answer', 'one'), decision('t', 'b'), decision('final_answer', 'two')] });
    const session = new LoopSession({ agent, tools: { t: tool }, options: { model: 'base', ...noCompression } });
    await session.newPrompt('first');
    await session.newPrompt('second', { model: 'other', reasoningEffort: 'high', tags: ['fast'] });
    const decides = agent.of('loop.decide');
    expect(decides.slice(0, 2).map((c) => c.options.model)).toEqual(['base', 'base']);
    expect(decides.slice(2).map((c) => c.options.model)).toEqual(['other', 'other']);
    expect(decides[3]!.options).toMatchObject({ reasoningEffort: 'high', tags: ['fast'] });
    expect(session.options.model).toBe('other');
  });

  it('13: the planner history starts with one system message without the prompt; earlier turns follow as user/assistant pairs', async () => {
    const agent = stubAgent({ decide: [decision('final_answer', 'A1'), decision('final_answer', 'A2')] });
    const session = new LoopSession({ agent, tools: {}, options: noCompression });
    await session.newPrompt('first question');
    await session.newPrompt('second question');
    const call = agent.of('loop.decide')[1]!;
    expect(call.prompt).toBe('second question');
    expect(call.history[0]!.role).toBe('system');
    expect(call.history.filter((m) => m.role === 'system')).toHaveLength(1);
    expect(call.history[0]!.message).not.toContain('second question');
    expect(call.history.slice(1)).toEqual([{ role: 'user', message: 'first question' }, { role: 'assistant', message: 'A1' }]);
    expect(session.history.every((e) => !('role' in e))).toBe(true);
  });

  it('14: a valid initialHistory appears as prior messages and as user/final_answer entries', async () => {
    const agent = stubAgent({ decide: [decision('final_answer', 'ok')] });
    const session = new LoopSession({
      agent, tools: {},
      options: { initialHistory: [{ role: 'user', message: 'earlier' }, { role: 'assistant', message: 'earlier answer' }], ...noCompression },
    });
    expect(session.history.slice(0, 2)).toEqual([{ type: 'user', prompt: 'earlier' }, { type: 'final_answer', answer: 'earlier answer' }]);
    await session.newPrompt('now');
    expect(agent.calls[0]!.history.slice(1)).toEqual([{ role: 'user', message: 'earlier' }, { role: 'assistant', message: 'earlier answer' }]);
  });

  it('15: a malformed initialHistory throws TypeError naming the index and the rule', () => {
    const make = (initialHistory: unknown) => () => new LoopSession({ agent: stubAgent(), tools: {}, options: { initialHistory: initialHistory as never } });
    expect(make([{ role: 'system', message: 'x' }])).toThrow(/initialHistory\[0\]: role must be user or assistant/);
    expect(make([{ role: 'user', message: 'ok' }, { role: 'user', message: '  ' }])).toThrow(/initialHistory\[1\]: message must be a non-empty string/);
    expect(make('nope')).toThrow(/must be an array/);
    expect(make([null])).toThrow(/initialHistory\[0\]: element must be an object/);
  });

  it('16: unstructured planner prose becomes the final answer', async () => {
    const session = new LoopSession({ agent: stubAgent({ decide: ['The capital of France is Paris.'] }), tools: {}, options: noCompression });
    const result = await session.newPrompt('capital?');
    expect(result).toMatchObject({ kind: 'answer', answer: 'The capital of France is Paris.' });
  });

  it('17: a decision without a prompt section passes the empty string to the tool', async () => {
    const t = recordingTool(() => 'listed');
    const session = new LoopSession({ agent: stubAgent({ decide: [decision('t'), decision('final_answer', 'done')] }), tools: { t: t.tool }, options: noCompression });
    await session.newPrompt('please list everything');
    expect(t.inputs).toEqual(['']);
  });

  describe('18: decision parser', () => {
    it.each([
      ['headings', '# tool\nsearch\n### prompt\ncats', { tool: 'search', prompt: 'cats' }],
      ['Label: lines with text after the colon', 'Tool: search\nPrompt: cats and dogs\nReason: because', { tool: 'search', prompt: 'cats and dogs', reason: 'because' }],
      ['bold labels', '**Tool:** search\n**Prompt**: cats', { tool: 'search', prompt: 'cats' }],
      ['aliases and spelling variants', 'TOOL_NAME: search\nprompt-name: cats\n**Final Answer**: ignored?', { tool: 'final_answer', prompt: 'ignored?' }],
      ['CRLF line endings', '## tool\r\nsearch\r\n## prompt\r\ncats\r\n', { tool: 'search', prompt: 'cats' }],
      ['one outer fence', '```markdown\n## tool\nsearch\n## prompt\ncats\n```', { tool: 'search', prompt: 'cats' }],
      ['literal inner fences', '## tool\nwrite\n## prompt\n```\n## tool\nnot a field\n```', { tool: 'write', prompt: '```\n## tool\nnot a field\n```' }],
      ['last duplicate wins', '## tool\na\n## tool\nb', { tool: 'b', prompt: '' }],
      ['JSON decisions', '{"tool":"search","prompt":{"q":"cats"}}', { tool: 'search', prompt: '{"q":"cats"}' }],
      ['JSON in a json fence', '```json\n{"finalAnswer":"done"}\n```', { tool: 'final_answer', prompt: 'done' }],
      ['prompt without tool', '## prompt\nJust this.', { tool: 'final_answer', prompt: 'Just this.' }],
      ['reason only', '## reason\nNothing to do.', { tool: 'final_answer', prompt: 'Nothing to do.' }],
      ['multi-line values', '## tool\nwrite\n## prompt\nline 1\nline 2', { tool: 'write', prompt: 'line 1\nline 2' }],
    ])('%s', (_name, reply, expected) => {
      expect(parseDecision(reply)).toMatchObject(expected);
    });
    it.each([
      ['null', null], ['empty', ''], ['whitespace', '  \n '], ['a JSON array', '[1,2]'], ['a JSON string', '"text"'],
      ['an object without fields', '{"other":1}'], ['malformed JSON in a json fence', '```json\n{"tool": \n```'],
    ])('%s is unusable', (_name, reply) => {
      expect(parseDecision(reply)).toBeNull();
    });
  });

  it('19: an unusable reply counts one planner error; reaching maxErrors ends the turn with limit errors', async () => {
    const agent = stubAgent({ decide: ['', '[]', decision('final_answer', 'late')] });
    const session = new LoopSession({ agent, tools: {}, options: { maxErrors: 2, ...noCompression } });
    const result = await session.newPrompt('go');
    expect(result).toMatchObject({ kind: 'limit', limit: 'errors', answer: ERROR_LIMIT_ANSWER });
    expect(session.errorCount).toBe(2);
    expect(result.turn.steps.map((s) => s.type)).toEqual(['planner_error', 'planner_error']);
    expect(result.turn.status).toBe('failed');
    expect(session.status).toBe('failed');
  });

  it('20: tool descriptions are summarised to 240 characters; stored results are cut to 1,200 with a marker', async () => {
    const long = recordingTool(() => 'x'.repeat(5000), { description: `## Summary\n${'word '.repeat(100)}\n\n## Input Format\nA query.\n\n## Details\nnot shown` });
    const agent = stubAgent({ decide: [decision('long', 'q'), decision('final_answer', 'done')] });
    const session = new LoopSession({ agent, tools: { long: long.tool }, options: noCompression });
    await session.newPrompt('go');
    const system = agent.of('loop.decide')[1]!.history[0]!.message;
    const line = system.split('\n').find((l) => l.startsWith('- long: '))!;
    expect(line.length - '- long: '.length).toBeLessThanOrEqual(240);
    expect(system).not.toContain('not shown');
    expect(system).toContain('x'.repeat(1200) + '… [truncated');
    expect(system).not.toContain('x'.repeat(1201));
  });
});

describe('loop session: tools, approval, limits', () => {
  it('21: each executed call increments toolVarCounter and stores <tool>-res-<n> with matching records', async () => {
    const t = recordingTool((i) => `result of ${i}`);
    const session = new LoopSession({ agent: stubAgent({ decide: [decision('t', 'a'), decision('t', 'b'), decision('final_answer', 'done')] }), tools: { t: t.tool }, options: noCompression });
    await session.newPrompt('go');
    expect(session.toolVarCounter).toBe(3);
    expect([...session.toolVars.entries()]).toEqual([['t-res-1', 'result of a'], ['t-res-2', 'result of b'], ['final_answer-res-3', 'done']]);
    expect(session.toolCalls).toEqual([{ tool: 't', prompt: 'a', resultRef: 't-res-1' }, { tool: 't', prompt: 'b', resultRef: 't-res-2' }, { tool: 'final_answer', prompt: 'done', resultRef: 'final_answer-res-3' }]);
    expect(session.history.filter((e) => e.type === 'tool')).toHaveLength(3);
  });

  it('22: $$<ref> is replaced by the stored value; an unknown ref is a counted tool error', async () => {
    const t = recordingTool((i) => (i === 'obj' ? { n: 1 } : `got ${i}`));
    const agent = stubAgent({ decide: [decision('t', 'obj'), decision('t', 'use $$t-res-1 here'), decision('t', '$$missing-ref'), decision('final_answer', '$$t-res-2')] });
    const session = new LoopSession({ agent, tools: { t: t.tool }, options: noCompression });
    const result = await session.newPrompt('go');
    expect(t.inputs).toEqual(['obj', 'use {"n":1} here']);
    expect(session.errorCount).toBe(1);
    expect(result.turn.steps.find((s) => s.type === 'tool_error')).toMatchObject({ error: expect.stringContaining('missing-ref') });
    expect(result.answer).toBe('got use {"n":1} here');
    expect(session.toolCalls[1]!.prompt).toBe('use $$t-res-1 here');
  });

  it('23: alwaysApprove skips approve() on the identical later call and passes the cached approval; other params ask again; approve is not cached', async () => {
    const t = recordingTool();
    const supervisor = recordingSupervisor((choice) => (choice.params === 'same' ? { decision: 'alwaysApprove', approval: { token: 42 } } : 'approve'));
    const agent = stubAgent({ decide: [decision('t', 'same'), decision('t', 'same'), decision('t', 'other'), decision('t', 'other'), decision('final_answer', 'done')] });
    const session = new LoopSession({ agent, tools: { t: t.tool }, options: { supervisor, ...noCompression } });
    await session.newPrompt('go');
    expect(supervisor.choices.map((c) => c.params)).toEqual(['same', 'other', 'other']);
    expect(t.contexts.map((c) => c.approval)).toEqual([{ token: 42 }, { token: 42 }, null, null]);
    expect(session.alwaysApproveCacheSize).toBe(1);
  });

  it('24: the cache key ignores object key order and differs when any value differs', () => {
    expect(stableStringify({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: 'z' } })).toBe(stableStringify({ a: { c: 'z', d: [1, { x: 1, y: 2 }] }, b: 1 }));
    expect(stableStringify({ a: 1, b: 2 })).not.toBe(stableStringify({ a: 1, b: 3 }));
    expect(stableStringify([1, 2])).not.toBe(stableStringify([2, 1]));
  });

  it('25: a denial skips the handler, stores the denial text as the result, and the next planner call sees it', async () => {
    const t = recordingTool();
    const supervisor = recordingSupervisor(() => ({ decision: 'deny', reason: 'not on Fridays' }));
    const agent = stubAgent({ decide: [decision('t', 'delete everything'), decision('final_answer', 'I could not.')] });
    const session = new LoopSession({ agent, tools: { t: t.tool }, options: { supervisor, ...noCompression } });
    await session.newPrompt('go');
    expect(t.inputs).toEqual([]);
    const stored = session.toolVars.get('t-res-1') as string;
    expect(stored).toContain('tool "t" was not run');
    expect(stored).toContain('Input: "delete everything"');
    expect(stored).toContain('Reason: not on Fridays');
    expect(agent.of('loop.decide')[1]!.history[0]!.message).toContain('not on Fridays');
    expect(session.errorCount).toBe(0);
  });

  it('26: reserved tools are never passed to approve()', async () => {
    const supervisor = recordingSupervisor();
    const session = new LoopSession({ agent: stubAgent({ decide: [decision('final_answer', 'x')] }), tools: {}, options: { supervisor, ...noCompression } });
    await session.newPrompt('go');
    const second = new LoopSession({ agent: stubAgent({ decide: [decision('cannot_complete', 'no')] }), tools: {}, options: { supervisor, ...noCompression } });
    await second.newPrompt('go');
    expect(supervisor.choices).toEqual([]);
  });

  it('27: a tool_reason item with the step index is written before the handler runs, never for reserved tools', async () => {
    const order: string[] = [];
    const writes: ProgressItem[] = [];
    const supervisor = {
      async approve() {
        return 'approve' as const;
      },
      getOutputWriter: () => ({ write: async (item: ProgressItem) => void (writes.push(item), order.push(`write:${item.type}`)) }),
    };
    const tool = { description: 't', handler: async () => { order.push('handler'); return 'r'; } };
    const agent = stubAgent({ decide: [decision('t', 'x', 'I need the data'), decision('final_answer', 'done', 'All set')] });
    const session = new LoopSession({ agent, tools: { t: tool }, options: { supervisor, ...noCompression } });
    const events: string[] = [];
    session.onEvent((e) => events.push(e.type));
    await session.newPrompt('go');
    expect(writes[0]).toEqual({ type: 'tool_reason', tool: 't', reason: 'I need the data', stepIndex: 0 });
    expect(order).toEqual(['write:tool_reason', 'write:tool_started', 'handler']);
    expect(writes.filter((w) => w.type === 'tool_reason')).toHaveLength(1);
    expect(events.filter((e) => e === 'tool_reason')).toHaveLength(1);
  });

  it('28: cannot_complete ends the turn: session failed, turn failed, failedTurns +1, answer = reason', async () => {
    const session = new LoopSession({ agent: stubAgent({ decide: [decision('cannot_complete', 'No access to that system.')] }), tools: {}, options: noCompression });
    const result = await session.newPrompt('go');
    expect(result).toMatchObject({ kind: 'cannot_complete', answer: 'No access to that system.' });
    expect(session.status).toBe('failed');
    expect(result.turn.status).toBe('failed');
    expect(session.failedTurns).toHaveLength(1);
    const empty = new LoopSession({ agent: stubAgent({ decide: [decision('cannot_complete', '')] }), tools: {}, options: noCompression });
    expect((await empty.newPrompt('go')).answer).toBe('The agent cannot complete the task.');
  });

  it('29: a throwing tool increments errorCount; at maxErrors the turn ends failed with limit errors', async () => {
    const tool = { description: 'b', handler: async () => { throw new Error('boom'); } };
    const session = new LoopSession({ agent: stubAgent({ decide: [decision('b', '1'), decision('b', '2'), decision('b', '3')] }), tools: { b: tool }, options: { maxErrors: 3, ...noCompression } });
    const result = await session.newPrompt('go');
    expect(result).toMatchObject({ kind: 'limit', limit: 'errors' });
    expect(session.errorCount).toBe(3);
    expect(result.turn.steps.filter((s) => s.type === 'tool_error')).toHaveLength(3);
    expect(session.status).toBe('failed');
  });

  it('30: reaching maxStepsPerTurn ends the turn failed with limit steps, a timeout entry and failedTurns +1', async () => {
    const t = recordingTool((i) => `r${i}`);
    let n = 0;
    const session = new LoopSession({ agent: stubAgent({ decide: [() => decision('t', String(n++))] }), tools: { t: t.tool }, options: { maxStepsPerTurn: 3, ...noCompression } });
    const result = await session.newPrompt('go');
    expect(result).toMatchObject({ kind: 'limit', limit: 'steps' });
    expect(t.inputs).toHaveLength(3);
    expect(session.history[session.history.length - 1]).toMatchObject({ type: 'timeout' });
    expect(session.failedTurns).toHaveLength(1);
    expect(result.turn.status).toBe('failed');
  });

  it('31: an expected mismatch records validation_failed and continues; after maxRetries the turn fails with limit retries, session active', async () => {
    const agent = stubAgent({ decide: [decision('final_answer', '41'), decision('final_answer', '40'), decision('final_answer', '39')] });
    const session = new LoopSession({ agent, tools: {}, options: noCompression });
    const result = await session.newPrompt('what is 6*7?', { expected: 42, maxRetries: 2 });
    expect(result).toMatchObject({ kind: 'limit', limit: 'retries', answer: '40' });
    expect(session.history.filter((e) => e.type === 'validation_failed')).toHaveLength(2);
    expect(session.history[session.history.length - 1]).toMatchObject({ type: 'final_answer', validationFailed: true });
    expect(session.status).toBe('active');
    expect(result.turn.status).toBe('failed');
    expect(session.failedTurns).toHaveLength(1);
    const ok = new LoopSession({ agent: stubAgent({ decide: [decision('final_answer', ' Paris ')] }), tools: {}, options: noCompression });
    expect((await ok.newPrompt('capital', { expected: 'paris' })).kind).toBe('answer');
  });

  it('32: three consecutive identical calls with identical results end the turn with that result', async () => {
    const t = recordingTool(() => ({ value: 7 }));
    const session = new LoopSession({ agent: stubAgent({ decide: [decision('t', 'same')] }), tools: { t: t.tool }, options: noCompression });
    const result = await session.newPrompt('go');
    expect(t.inputs).toHaveLength(3);
    expect(result).toMatchObject({ kind: 'answer', answer: JSON.stringify({ value: 7 }, null, 2) });
  });

  it('33: finalizeFailures returns a cannot_complete result and sets lastAnswer when turns failed, null otherwise', async () => {
    const clean = new LoopSession({ agent: stubAgent({ decide: [decision('final_answer', 'ok')] }), tools: {}, options: noCompression });
    await clean.newPrompt('go');
    expect(clean.hasFailedTurns()).toBe(false);
    expect(await clean.finalizeFailures()).toBeNull();
    const failing = new LoopSession({ agent: stubAgent({ decide: [decision('cannot_complete', 'nope')] }), tools: {}, options: noCompression });
    await failing.newPrompt('go');
    expect(failing.hasFailedTurns()).toBe(true);
    expect(await failing.finalizeFailures()).toBe(FINALIZE_FAILURES_REASON);
    expect(failing.lastAnswer).toBe(FINALIZE_FAILURES_REASON);
  });

  it('34: a result with requiresInput settles awaiting_input with its message and an awaiting_input entry', async () => {
    const t = recordingTool(() => JSON.stringify({ requiresConfirmation: true, message: 'Delete 3 files?', step: 'confirm' }));
    const session = new LoopSession({ agent: stubAgent({ decide: [decision('t', 'cleanup')] }), tools: { t: t.tool }, options: noCompression });
    const result = await session.newPrompt('clean up');
    expect(result).toMatchObject({ kind: 'awaiting_input', answer: 'Delete 3 files?', tool: 't' });
    expect(session.status).toBe('awaiting_input');
    expect(result.turn.status).toBe('awaiting_input');
    expect(session.history[session.history.length - 1]).toEqual({ type: 'awaiting_input', tool: 't', answer: 'Delete 3 files?', step: 'confirm' });
  });

  it('35: the next prompt (not a fresh instruction) is routed to the pending tool without a planner call, only on the first step', async () => {
    const t = recordingTool((i) => (i === 'cleanup' ? { requiresInput: true, message: 'Which folder?' } : `cleaned ${i}`));
    const agent = stubAgent({ decide: [decision('t', 'cleanup'), decision('final_answer', 'Cleaned.')] });
    const session = new LoopSession({ agent, tools: { t: t.tool }, options: noCompression });
    await session.newPrompt('clean up');
    const result = await session.newPrompt('the tmp folder');
    expect(t.inputs).toEqual(['cleanup', 'the tmp folder']);
    expect(agent.of('loop.decide')).toHaveLength(2);
    expect(result.turn.steps[0]).toMatchObject({ type: 'planner_decision', decision: { tool: 't', routeReason: 'pending_awaiting_input' } });
    expect(session.history.some((e) => e.type === 'input_provided')).toBe(true);
    expect(result.answer).toBe('Cleaned.');

    const classified = new LoopSession({
      agent: stubAgent({ decide: [decision('t', 'cleanup'), decision('final_answer', 'ok')], interpret: () => ({ intent: 'update', confidence: 0.9 }) }),
      tools: { t: recordingTool((i) => (i === 'cleanup' ? { requiresInput: true, message: 'Which?' } : 'done')).tool }, options: noCompression,
    });
    await classified.newPrompt('clean');
    const r = await classified.newPrompt('change it to the logs folder');
    expect(r.turn.steps[0]).toMatchObject({ decision: { routeReason: 'pending_awaiting_input' } });
  });

  it('35: a fresh instruction (verb rule) while a tool waits goes to the planner', async () => {
    const t = recordingTool(() => ({ requiresInput: true, message: 'Which?' }));
    const agent = stubAgent({ decide: [decision('t', 'cleanup'), decision('final_answer', 'Here is the list.')] });
    const session = new LoopSession({ agent, tools: { t: t.tool }, options: noCompression });
    await session.newPrompt('clean');
    const result = await session.newPrompt('list the files instead');
    expect(agent.of('loop.decide')).toHaveLength(2);
    expect(result.answer).toBe('Here is the list.');
  });

  it('36: a prompt naming a different tool bypasses pending routing', async () => {
    const t = recordingTool(() => ({ requiresInput: true, message: 'Which?' }));
    const other = recordingTool();
    const agent = stubAgent({ decide: [decision('t', 'x'), decision('other', 'y'), decision('final_answer', 'done')] });
    const session = new LoopSession({ agent, tools: { t: t.tool, other: other.tool }, options: noCompression });
    await session.newPrompt('go');
    await session.newPrompt('please use other for this');
    expect(other.inputs).toEqual(['y']);
    expect(t.inputs).toEqual(['x']);
  });
});

describe('loop session: history compression', () => {
  const big = (n: number): { role: 'user' | 'assistant'; message: string }[] =>
    Array.from({ length: n }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', message: `message ${i} ${'padding '.repeat(20)}` }));

  it('37: above the threshold, one history_summary entry comes first and the newest N entries stay verbatim', async () => {
    const agent = stubAgent({ compress: ['## summary\nThe user asked many things.\n## keepResultRefs\n'], decide: [decision('final_answer', 'ok')] });
    const initialHistory = big(12);
    const session = new LoopSession({ agent, tools: {}, options: { initialHistory, historyCompressionThresholdTokens: 100, historyCompressionKeepRecentEntries: 4 } });
    const tail = session.history.slice(-4);
    const events: unknown[] = [];
    session.onEvent((e) => e.type === 'history_compressed' && events.push(e));
    await session.newPrompt('next');
    expect(session.history[0]).toMatchObject({ type: 'history_summary', summary: 'The user asked many things.', compressedFromCount: 8 });
    expect(session.history.slice(1, 5)).toEqual(tail);
    expect(events).toEqual([{ type: 'history_compressed', compressedFromCount: 8 }]);
  });

  it('38: no compression at or below the threshold, when disabled, or while an interaction is pending', async () => {
    const below = stubAgent({ decide: [decision('final_answer', 'ok')] });
    await new LoopSession({ agent: below, tools: {}, options: { initialHistory: big(2), historyCompressionThresholdTokens: 100000 } }).newPrompt('x');
    expect(below.of('loop.compress')).toHaveLength(0);
    const disabled = stubAgent({ decide: [decision('final_answer', 'ok')] });
    await new LoopSession({ agent: disabled, tools: {}, options: { initialHistory: big(12), historyCompressionThresholdTokens: 10, historyCompressionEnabled: false } }).newPrompt('x');
    expect(disabled.of('loop.compress')).toHaveLength(0);
    const t = recordingTool((i) => (i === 'ask' ? { requiresInput: true, message: 'Which?' } : 'done'));
    const pending = stubAgent({ decide: [decision('t', 'ask'), decision('final_answer', 'ok')], compress: ['## summary\nS'] });
    const session = new LoopSession({ agent: pending, tools: { t: t.tool }, options: { historyCompressionThresholdTokens: 1, historyCompressionKeepRecentEntries: 0 } });
    await session.newPrompt('first');
    const compressedBefore = pending.of('loop.compress').length;
    await session.newPrompt('the answer');
    expect(pending.of('loop.compress').length).toBe(compressedBefore);
  });

  it('39: a failed compression call or a reply without a summary leaves history untouched and the turn continues', async () => {
    for (const compress of [() => Promise.reject(new Error('provider down')), '## keepResultRefs\n- x', 'just prose']) {
      const agent = stubAgent({ compress: [compress as never], decide: [decision('final_answer', 'still answered')] });
      const session = new LoopSession({ agent, tools: {}, options: { initialHistory: big(12), historyCompressionThresholdTokens: 10, logger: () => undefined } });
      const before = session.history.slice();
      const result = await session.newPrompt('go');
      expect(result.answer).toBe('still answered');
      expect(session.history.slice(0, before.length)).toEqual(before);
      expect(agent.of('loop.compress')).toHaveLength(1);
    }
  });

  it('40: compression uses historyCompressionModel when set and the planner model otherwise', async () => {
    const withModel = stubAgent({ compress: ['## summary\nS'], decide: [decision('final_answer', 'ok')] });
    await new LoopSession({ agent: withModel, tools: {}, options: { model: 'planner', historyCompressionModel: 'cheap', initialHistory: big(12), historyCompressionThresholdTokens: 10 } }).newPrompt('go');
    expect(withModel.of('loop.compress')[0]!.options.model).toBe('cheap');
    const fallback = stubAgent({ compress: ['## summary\nS'], decide: [decision('final_answer', 'ok')] });
    await new LoopSession({ agent: fallback, tools: {}, options: { model: 'planner', initialHistory: big(12), historyCompressionThresholdTokens: 10 } }).newPrompt('go');
    expect(fallback.of('loop.compress')[0]!.options.model).toBe('planner');
  });

  it('41: after compression toolVars and toolCalls keep only recent refs and keepResultRefs; the prompt lists refs with values', async () => {
    const t = recordingTool((i) => `value-${i}`);
    const agent = stubAgent({
      decide: [decision('t', 'a'), decision('t', 'b'), decision('t', 'c'), decision('final_answer', 'first done'), decision('final_answer', 'second done')],
      compress: ['## summary\nThree lookups were made.\n## keepResultRefs\n- t-res-1\n- not-a-ref'],
    });
    const session = new LoopSession({ agent, tools: { t: t.tool }, options: { historyCompressionThresholdTokens: 1, historyCompressionKeepRecentEntries: 2 } });
    // The first prompt has too little history to compress anything useful; force it with a tiny threshold.
    await session.newPrompt('look things up');
    const refsBefore = [...session.toolVars.keys()];
    expect(refsBefore).toEqual(['t-res-1', 't-res-2', 't-res-3', 'final_answer-res-4']);
    await session.newPrompt('again');
    const compressCall = agent.of('loop.compress').at(-1)!;
    expect(compressCall.prompt).toContain('- t-res-2: value-b');
    const recent = (session.history.slice(1, 3) as LoopHistoryEntry[]).filter((e) => e.type === 'tool').map((e) => (e as { resultRef: string }).resultRef);
    expect([...session.toolVars.keys()].sort()).toEqual([...new Set(['t-res-1', ...recent, 'final_answer-res-5'])].sort());
    expect(session.toolCalls.map((c) => c.resultRef)).not.toContain('t-res-2');
    expect(session.toolVarCounter).toBe(5);
  });
});
