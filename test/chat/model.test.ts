// The chat panel's pure parts: the shared reducer (both sides build the same view model from the
// same events), the plan diff, the checks on messages from the page, the Markdown reader and plan
// highlighting (text only, never markup), and the page's Content Security Policy.
import { describe, expect, it } from 'vitest';
import { chatHtml } from '../../extension/src/chat/html';
import { expectLockedDownPage } from '../webview/page-html';
import { displayHref, linkShowsDestination, parseInline, parseMarkdown, planTokens, safeHref } from '../../extension/src/chat/markdown';
import {
  applyPanelEvent, diffPlanSteps, emptyState, offersLoop, offersRetry, openApprovals, tabTitle, type ChatState, type PanelEvent, type PlanStep, type RegistryEventView,
} from '../../extension/src/chat/model';
import { parseFromChatWebview } from '../../extension/src/chat/protocol';
import { outcomeView, planSteps, readSaved, restoredHistory } from '../../extension/src/chat/controller';

type WithoutSeq<T> = T extends unknown ? Omit<T, 'seq'> : never;
const reg = (event: WithoutSeq<RegistryEventView>): PanelEvent => ({ type: 'registry', event: { seq: 1, ...event } as RegistryEventView });
const apply = (state: ChatState, ...events: PanelEvent[]) => events.reduce(applyPanelEvent, state);

const started = (id: string, parent: string | null = null) => reg({ type: 'LoopStarted', loopId: id, parentLoopId: parent, name: 'chat', displayName: 'Chat', mode: 'sop', model: { name: 'default' } });

describe('the panel reducer', () => {
  it('builds tabs and turns from registry events, in order, without changing the old state', () => {
    const s0 = emptyState();
    const s1 = apply(s0, started('a'), started('b'), reg({ type: 'ActiveLoopChanged', previousLoopId: null, activeLoopId: 'b' }));
    expect(s0.tabs).toEqual([]);
    expect(s1.tabs.map((t) => t.id)).toEqual(['a', 'b']);
    expect(s1.activeLoopId).toBe('b');
    const s2 = apply(s1,
      reg({ type: 'TurnStarted', loopId: 'a', commandId: 'c1', regime: 'sop' }),
      { type: 'user_message', loopId: 'a', commandId: 'c1', text: 'hello' },
      reg({ type: 'InputQueued', loopId: 'a', commandId: 'c2' }),
      { type: 'user_message', loopId: 'a', commandId: 'c2', text: 'later' },
      reg({ type: 'SessionProgress', loopId: 'a', commandId: 'c1', event: { type: 'prompt_started', promptIndex: 0 } }),
      reg({ type: 'SessionProgress', loopId: 'a', commandId: 'c1', event: { type: 'plan_generated', attempt: 1, plan: '@x shout hi', previousPlan: '', steps: [] } }),
      reg({ type: 'SessionProgress', loopId: 'a', commandId: 'c1', event: { type: 'variable_status', attempt: 1, variable: 'x', command: 'shout', state: 'running' } }),
      reg({ type: 'SessionProgress', loopId: 'a', commandId: 'c1', event: { type: 'variable_status', attempt: 1, variable: 'x', command: 'shout', state: 'success', value: 'HI' } }),
    );
    const a = s2.tabs[0]!;
    expect(a).toMatchObject({ state: 'running', runningCommandId: 'c1', queued: ['c2'] });
    expect(a.turns.map((t) => [t.commandId, t.text, t.status])).toEqual([['c1', 'hello', 'running'], ['c2', 'later', 'queued']]);
    expect(a.turns[0]!.attempts[0]!.variables).toEqual([{ variable: 'x', command: 'shout', state: 'success', value: 'HI' }]);
    const s3 = apply(s2,
      { type: 'stopping', loopIds: ['a', 'b'] },
      reg({ type: 'TurnSettled', loopId: 'a', commandId: 'c1', outcome: { kind: 'interrupted', text: 'Interrupted by user', regime: null } }),
    );
    expect(s2.tabs[0]!.stopping).toBe(false);
    expect(s3.tabs[0]).toMatchObject({ stopping: false, runningCommandId: null });
    // b was not running: Stop does not mark it.
    expect(apply(s2, { type: 'stopping', loopIds: ['b'] }).tabs[1]!.stopping).toBe(false);
    expect(apply(s2, { type: 'stopping', loopIds: ['a'] }).tabs[0]!.stopping).toBe(true);
    const s4 = apply(s3, reg({ type: 'TurnStarted', loopId: 'a', commandId: 'c2', regime: 'loop' }));
    expect(s4.tabs[0]!.queued).toEqual([]);
    expect(s4.tabs[0]!.turns[1]).toMatchObject({ status: 'running', phase: 'loop' });
  });

  it('an approval card opens on the running turn, badges the tab, and closes as cancelled when the turn settles', () => {
    const s = apply(emptyState(), started('a'),
      reg({ type: 'TurnStarted', loopId: 'a', commandId: 'c1', regime: 'sop' }),
      { type: 'approval_opened', loopId: 'a', commandId: null, approval: { id: 'p1', tool: 'save_note', origin: 'sop', input: 'x', key: 'k', sideEffects: null } },
    );
    expect(s.tabs[0]!.turns[0]!.approvals).toEqual([expect.objectContaining({ id: 'p1', state: 'open' })]);
    expect(openApprovals(s.tabs[0]!)).toBe(1);
    const closed = apply(s, reg({ type: 'TurnSettled', loopId: 'a', commandId: 'c1', outcome: { kind: 'interrupted', text: 'Interrupted by user', regime: null } }));
    expect(closed.tabs[0]!.turns[0]!.approvals[0]!.state).toBe('cancelled');
    expect(openApprovals(closed.tabs[0]!)).toBe(0);
    const denied = apply(s, { type: 'approval_closed', loopId: 'a', id: 'p1', state: 'denied', reason: 'no' });
    expect(denied.tabs[0]!.turns[0]!.approvals[0]).toMatchObject({ state: 'denied', denyReason: 'no' });
  });

  it('hidden tabs come back with new activity; notices count the same on both sides', () => {
    const s = apply(emptyState(), started('a'), { type: 'tab_hidden', loopId: 'a', hidden: true });
    expect(s.tabs[0]!.hidden).toBe(true);
    expect(apply(s, reg({ type: 'InputQueued', loopId: 'a', commandId: 'c' })).tabs[0]!.hidden).toBe(false);
    expect(apply(s, reg({ type: 'TurnStarted', loopId: 'a', commandId: 'c', regime: 'sop' })).tabs[0]!.hidden).toBe(false);
    const n = apply(s, { type: 'notice', loopId: null, level: 'error', text: 'x' }, { type: 'notice', loopId: 'a', level: 'info', text: 'y' });
    expect(n.notice).toEqual({ level: 'error', text: 'x', serial: 1 });
    expect(n.tabs[0]!.notice).toEqual({ level: 'info', text: 'y', serial: 2 });
    expect(apply(n, { type: 'user_message', loopId: 'a', commandId: 'c', text: 'hi' }).tabs[0]!.notice).toBeNull();
  });

  it('builds the loop step list from loop events only, after a fallback', () => {
    const progress = (event: object) => reg({ type: 'SessionProgress', loopId: 'a', commandId: 'c', event: event as never });
    const s = apply(emptyState(), started('a'), reg({ type: 'TurnStarted', loopId: 'a', commandId: 'c', regime: 'sop' }),
      progress({ type: 'prompt_started', promptIndex: 0 }),
      progress({ type: 'tool_reason', tool: 'shout', reason: 'comment of the plan', stepIndex: 2 }),
      progress({ type: 'prompt_started', promptIndex: 0 }),
      progress({ type: 'tool_reason', tool: 'shout', reason: 'make it loud', stepIndex: 1 }),
      progress({ type: 'approval_requested', tool: 'shout', origin: 'loop', input: 'hi' }),
      progress({ type: 'approval_resolved', tool: 'shout', origin: 'loop', input: 'hi', verdict: 'approve' }),
      progress({ type: 'tool_started', tool: 'shout', origin: 'loop', input: 'hi' }),
      progress({ type: 'tool_settled', tool: 'shout', outcome: 'ok', resultRef: 'shout-res-1', preview: 'HI' }),
    );
    const turn = s.tabs[0]!.turns[0]!;
    expect(turn.phase).toBe('loop');
    expect(turn.progress).toEqual(['comment of the plan']);
    expect(turn.steps).toEqual([{ reason: 'make it loud', tool: 'shout', input: 'hi', approval: 'approved', outcome: 'ok', resultRef: 'shout-res-1', preview: 'HI' }]);
  });

  it('titles tabs by their first message and offers actions only where the spec says', () => {
    const s = apply(emptyState(), started('a'), { type: 'user_message', loopId: 'a', commandId: 'c', text: 'Please summarise the quarterly report for the board' });
    expect(tabTitle(s.tabs[0]!)).toBe('Please summarise the quarte…');
    expect(offersLoop({ kind: 'failed', text: '', regime: 'sop', reason: 'execution_failed' })).toBe(true);
    for (const reason of ['no_plan', 'plan_invalid', 'plan_rejected']) expect(offersLoop({ kind: 'failed', text: '', regime: 'sop', reason })).toBe(false);
    expect(offersLoop({ kind: 'failed', text: '', regime: 'loop', reason: 'tool_failure' })).toBe(false);
    expect(offersRetry({ kind: 'error', text: 'x', regime: null })).toBe(true);
    expect(offersRetry({ kind: 'interrupted', text: 'x', regime: null })).toBe(false);
  });
});

describe('plans', () => {
  it('reads declarations with core and diffs two plans by variable', () => {
    const before = planSteps('# greet\n@name assign "Ada"\n@greeting greet $name\n@old emit x\n@lastAnswer final_answer $greeting');
    const after = planSteps('@name assign "Ada"\n@greeting greet $name loudly\n@extra shout $greeting\n@lastAnswer final_answer $greeting');
    expect(before.map((s) => [s.name, s.command, s.deps, s.line])).toEqual([['name', 'assign', [], 2], ['greeting', 'greet', ['name'], 3], ['old', 'emit', [], 4], ['lastAnswer', 'final_answer', ['greeting'], 5]]);
    expect(before[0]!.comment).toBe('greet');
    expect(diffPlanSteps(before, after).map((d) => `${d.name}:${d.change}`)).toEqual(['name:unchanged', 'greeting:changed', 'extra:added', 'lastAnswer:unchanged', 'old:removed']);
    expect(planSteps('')).toEqual([]);
    expect(planSteps('not a plan at all')).toEqual([]);
    const whitespace: PlanStep[] = planSteps('@a emit   x');
    expect(diffPlanSteps(whitespace, planSteps('@a emit x'))[0]!.change).toBe('unchanged');
  });

  it('shows outcomes: fallback, failures, loop limits', () => {
    const turn = { answer: 'loop says hi', turn: {} } as never;
    expect(outcomeView({ kind: 'sop', result: { kind: 'failed', plan: 'p', answer: null, reason: 'plan_invalid', failures: [], attempts: 3 }, fellBackToLoop: { kind: 'answer', ...(turn as object) } as never }))
      .toEqual({ kind: 'answered', text: 'loop says hi', regime: 'loop', fellBack: { sopReason: 'plan_invalid' }, plan: 'p' });
    expect(outcomeView({ kind: 'sop', result: { kind: 'answered', plan: 'p', answer: { n: 1 }, variables: {} } })).toEqual({ kind: 'answered', text: '{\n  "n": 1\n}', regime: 'sop', plan: 'p' });
    expect(outcomeView({ kind: 'loop', result: { kind: 'limit', limit: 'steps', answer: 'too many', turn: {} as never } })).toEqual({ kind: 'failed', text: 'too many', regime: 'loop', reason: 'limit:steps' });
    expect(outcomeView({ kind: 'error', message: 'planning failed: x' })).toEqual({ kind: 'error', text: 'planning failed: x', regime: null });
  });
});

describe('saved conversations', () => {
  it('reads only well-formed entries and seeds a valid initialHistory', () => {
    expect(readSaved(undefined)).toEqual([]);
    expect(readSaved({ version: 2, conversations: [] })).toEqual([]);
    const saved = readSaved({
      version: 1,
      conversations: [
        { mode: 'weird', model: '', turns: [{ user: 'q', answer: 'a', kind: 'answered' }, { user: 1 }, null] },
        { mode: 'loop', model: 'm', turns: [] },
        'junk',
      ],
    });
    expect(saved).toEqual([{ mode: 'sop', model: 'default', turns: [{ user: 'q', answer: 'a', kind: 'answered' }] }]);
    expect(restoredHistory([{ user: 'q', answer: 'a', kind: 'answered' }, { user: 'interrupted one', answer: ' ', kind: 'interrupted' }]))
      .toEqual([{ role: 'user', message: 'q' }, { role: 'assistant', message: 'a' }]);
  });
});

describe('messages from the chat page', () => {
  const id = '0f8e7c1a-1b2c-4d5e-8f90-123456789abc';
  it('accepts well-formed intents only', () => {
    const good: unknown[] = [
      { type: 'ready' }, { type: 'send', loopId: id, text: 'hi' }, { type: 'cancelQueued', loopId: id, commandId: id }, { type: 'stop', loopId: id },
      { type: 'stopAll' }, { type: 'selectTab', loopId: id }, { type: 'newConversation' }, { type: 'closeTab', loopId: id },
      { type: 'setMode', loopId: id, mode: 'loop' }, { type: 'setInference', loopId: id, model: 'qwen2.5:7b' }, { type: 'setInference', loopId: id, effort: 'high' },
      { type: 'approval', id, decision: 'deny', reason: 'no' }, { type: 'review', id, decision: 'edit' }, { type: 'continueInLoop', loopId: id, commandId: id },
      { type: 'retry', loopId: id, commandId: id }, { type: 'openPlan', loopId: id, commandId: id, attempt: 2 }, { type: 'configure', what: 'apiKey' },
    ];
    for (const m of good) expect(parseFromChatWebview(m), JSON.stringify(m)).toEqual(m);
    const bad: unknown[] = [
      null, [], 'ready', { type: 'send', loopId: id }, { type: 'send', loopId: id, text: ' \n ' }, { type: 'send', loopId: 'a b', text: 'x' },
      { type: 'send', loopId: id, text: 'x'.repeat(100_001) }, { type: 'setMode', loopId: id, mode: '' }, { type: 'setInference', loopId: id },
      { type: 'setInference', loopId: id, effort: 'extreme' }, { type: 'approval', id, decision: 'yes' }, { type: 'approval', id, decision: 'deny', reason: 5 },
      { type: 'review', id, decision: 'approve' }, { type: 'openPlan', loopId: id, commandId: id, attempt: 0 }, { type: 'configure', what: 'everything' },
      { type: 'eval', code: 'x' }, { type: '__proto__' },
    ];
    for (const m of bad) expect(parseFromChatWebview(m), JSON.stringify(m)).toBeNull();
    // Extra fields are dropped, not passed on.
    expect(parseFromChatWebview({ type: 'stop', loopId: id, evil: true })).toEqual({ type: 'stop', loopId: id });
  });
});

describe('Markdown and plan highlighting', () => {
  it('reads blocks and inlines as data; HTML stays text', () => {
    const blocks = parseMarkdown('# Title\n\nSome **bold** and *em* and `code` <img src=x onerror=alert(1)>\n\n- one\n- two\n\n```js\nlet a = "<b>";\n```\n\n> quoted\n\n---\n\n3. three');
    expect(blocks.map((b) => b.t)).toEqual(['h', 'p', 'list', 'code', 'quote', 'hr', 'list']);
    expect(blocks[1]).toEqual({ t: 'p', c: [{ t: 'text', v: 'Some ' }, { t: 'strong', c: [{ t: 'text', v: 'bold' }] }, { t: 'text', v: ' and ' }, { t: 'em', c: [{ t: 'text', v: 'em' }] }, { t: 'text', v: ' and ' }, { t: 'code', v: 'code' }, { t: 'text', v: ' <img src=x onerror=alert(1)>' }] });
    expect(blocks[3]).toEqual({ t: 'code', lang: 'js', v: 'let a = "<b>";' });
    expect(blocks[6]).toMatchObject({ t: 'list', ordered: true, start: 3 });
  });

  it('keeps only http(s) and mailto links', () => {
    expect(parseInline('[site](https://example.org/a?b=1)')).toEqual([{ t: 'link', href: 'https://example.org/a?b=1', c: [{ t: 'text', v: 'site' }] }]);
    expect(parseInline('[click](javascript:alert(1))')).toEqual([{ t: 'text', v: 'click' }]);
    expect(parseInline('[x](data:text/html,<b>)')).toEqual([{ t: 'text', v: 'x' }]);
    expect(safeHref('mailto:a@b.c')).toBe(true);
    expect(safeHref('https://a.b/"onmouseover=x')).toBe(false);
    expect(parseInline('snake_case_name and 2 * 3 * 4')).toEqual([{ t: 'text', v: 'snake_case_name and 2 * 3 * 4' }]);
    expect(parseInline('a\\*b')).toEqual([{ t: 'text', v: 'a*b' }]);
  });

  it('a link whose text looks like another URL shows its real destination, never the forged one as a link', () => {
    // The label stays text; the link that follows shows (and goes to) where it really points.
    expect(parseInline('[https://github.com/login](https://evil.example)')).toEqual([
      { t: 'text', v: 'https://github.com/login (' }, { t: 'link', href: 'https://evil.example', c: [{ t: 'text', v: 'https://evil.example/' }] }, { t: 'text', v: ')' },
    ]);
    for (const label of ['github.com/login', 'www.github.com', '**https://github.com**', 'mailto:admin@github.com', 'admin@github.com', 'HTTPS://GITHUB.COM']) {
      const nodes = parseInline(`[${label}](https://evil.example/x)`);
      const links = nodes.filter((n) => n.t === 'link');
      expect(links, label).toEqual([{ t: 'link', href: 'https://evil.example/x', c: [{ t: 'text', v: 'https://evil.example/x' }] }]);
    }
    // A URL-like label that names the same place stays the link's text.
    expect(parseInline('[https://example.org/a](https://example.org/a)')).toEqual([{ t: 'link', href: 'https://example.org/a', c: [{ t: 'text', v: 'https://example.org/a' }] }]);
    expect(parseInline('[example.org](https://example.org/)')).toEqual([{ t: 'link', href: 'https://example.org/', c: [{ t: 'text', v: 'example.org' }] }]);
    // An internationalised host is shown in its ASCII form, so a look-alike cannot pass for the original.
    expect(displayHref('https://gіthub.com/login')).toBe('https://xn--gthub-n2e.com/login');
    // Every other link shows its destination after its text.
    expect(linkShowsDestination({ t: 'link', href: 'https://example.org', c: [{ t: 'text', v: 'site' }] })).toBe(false);
    expect(linkShowsDestination({ t: 'link', href: 'https://example.org', c: [{ t: 'text', v: 'https://example.org/' }] })).toBe(true);
  });

  it('splits plan lines like the grammar: name, command, references, strings, inline comments', () => {
    expect(planTokens('@greeting greet $name "a # b" # hello')).toEqual([
      { cls: 'name', text: '@greeting' }, { cls: 'plain', text: ' ' }, { cls: 'command', text: 'greet' }, { cls: 'plain', text: ' ' },
      { cls: 'ref', text: '$name' }, { cls: 'plain', text: ' ' }, { cls: 'string', text: '"a # b"' }, { cls: 'plain', text: ' ' }, { cls: 'comment', text: '# hello' },
    ]);
    expect(planTokens('# a comment')).toEqual([{ cls: 'comment', text: '# a comment' }]);
    expect(planTokens('  continuation text')).toEqual([{ cls: 'text', text: '  continuation text' }]);
    expect(planTokens('')).toEqual([]);
    expect(planTokens('@x emit "unterminated').map((t) => t.cls)).toEqual(['name', 'plain', 'command', 'plain', 'string']);
  });
});

describe('the chat page HTML', () => {
  it('allows only the nonce for scripts and styles, and nothing by default', () => {
    expectLockedDownPage(chatHtml, 'chat-webview.js');
  });
});
