// The chat page (extension/src/chat: html.ts + webview.ts) in a real Chromium: the exact HTML the
// extension serves, with its nonce CSP, and the page script bundled by esbuild as
// scripts/build.mjs does. A stub `acquireVsCodeApi` records the intents the page posts; the test
// plays the host, posting the state and panel events the controller would post.
import type { Page } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectOnlyTheNoncedScriptRuns, useWebviewPages } from './page-harness';
import { chatHtml } from '../../extension/src/chat/html';
import { applyPanelEvent, emptyState, type ChatState, type PanelEvent, type ProgressView, type RegistryEventView } from '../../extension/src/chat/model';
import type { ToChatWebview } from '../../extension/src/chat/protocol';
import { planSteps } from '../../extension/src/chat/controller';

const A = 'aaaaaaaa-0000-4000-8000-000000000001';
const B = 'bbbbbbbb-0000-4000-8000-000000000002';

declare global {
  interface Window {
    xssHit?: number;
  }
}

const pages = useWebviewPages({ entry: 'extension/src/chat/webview.ts', html: chatHtml, viewport: { width: 1000, height: 800 }, timeout: 8000 });
let page: Page;
let seq = 0;

type WithoutSeq<T> = T extends unknown ? Omit<T, 'seq'> : never;
const reg = (event: WithoutSeq<RegistryEventView>): PanelEvent => ({ type: 'registry', event: { ...event, seq: ++seq } as RegistryEventView });
const progress = (loopId: string, commandId: string, event: ProgressView) => reg({ type: 'SessionProgress', loopId, commandId, event });
const started = (id: string) => reg({ type: 'LoopStarted', loopId: id, parentLoopId: null, name: 'chat', displayName: 'Chat', mode: 'sop', model: { name: 'default' } });

/** A state as the host would send it: two conversations, A active, a configured provider. */
function baseState(): ChatState {
  let s = emptyState();
  for (const e of [started(A), started(B), reg({ type: 'ActiveLoopChanged', previousLoopId: null, activeLoopId: A })]) s = applyPanelEvent(s, e);
  s = applyPanelEvent(s, {
    type: 'config', provider: { ready: true, label: 'test-model at http://127.0.0.1:1/v1', message: null }, skillsNote: null,
    models: [{ name: 'default', label: 'Default (test-model)' }, { name: 'other-model', label: 'other-model' }], reviewPlans: 'off',
  });
  return s;
}

async function host(message: ToChatWebview): Promise<void> {
  const before = await page.evaluate(() => Number(document.body.dataset.rendered ?? '0'));
  await page.evaluate((m) => window.postMessage(m, '*'), JSON.parse(JSON.stringify(message)) as ToChatWebview);
  await page.waitForFunction((n) => Number(document.body.dataset.rendered ?? '0') > n, before, { timeout: 5000 });
}
const events = (...list: PanelEvent[]) => host({ type: 'events', events: list });
const posted = () => page.evaluate(() => window.__posted.filter((m) => m.type !== 'ready'));
const clearPosted = () => page.evaluate(() => void (window.__posted = []));

beforeEach(async () => {
  page = await pages.open();
  await host({ type: 'state', state: baseState() });
});

describe('the chat page in Chromium', () => {
  it('loads its script under the nonce CSP, says ready, and runs no inline script', async () => {
    await expectOnlyTheNoncedScriptRuns(page);
  });

  it('tabs: the highlight follows ActiveLoopChanged only; close asks the host; the composer sends to the focused tab', async () => {
    expect(await page.locator('.tab').count()).toBe(2);
    expect(await page.getAttribute(`.tab[data-loop="${A}"]`, 'aria-selected')).toBe('true');
    await page.click(`.tab[data-loop="${B}"] .title`);
    expect(await posted()).toEqual([{ type: 'selectTab', loopId: B }]);
    // No local guess: A stays highlighted until the host says otherwise.
    expect(await page.getAttribute(`.tab[data-loop="${A}"]`, 'aria-selected')).toBe('true');
    await events(reg({ type: 'ActiveLoopChanged', previousLoopId: A, activeLoopId: B }));
    expect(await page.getAttribute(`.tab[data-loop="${B}"]`, 'aria-selected')).toBe('true');
    await page.fill('#input', 'Hello there');
    await page.press('#input', 'Shift+Enter');
    await page.type('#input', 'second line');
    await page.press('#input', 'Enter');
    expect(await posted()).toEqual([{ type: 'selectTab', loopId: B }, { type: 'send', loopId: B, text: 'Hello there\nsecond line' }]);
    await clearPosted();
    await page.fill('#input', 'To B');
    await page.press('#input', 'Enter');
    expect(await posted()).toEqual([{ type: 'send', loopId: B, text: 'To B' }]);
    expect(await page.inputValue('#input')).toBe('');
    await clearPosted();
    await page.click(`.tab[data-loop="${A}"] .close`);
    expect(await posted()).toEqual([{ type: 'closeTab', loopId: A }]);
    await events({ type: 'tab_hidden', loopId: A, hidden: true });
    expect(await page.locator('.tab').count()).toBe(1);
  });

  it('shows the plan with its attempt, live variable states, expandable values and the change from the previous attempt', async () => {
    const plan1 = '# Shout it\n@loud shout hello\n@n count_words $loud\n@lastAnswer final_answer $loud';
    const plan2 = '@loud shout hello world\n@n count_words $loud\n@lastAnswer final_answer $loud';
    const long = 'x'.repeat(400);
    await events(
      reg({ type: 'TurnStarted', loopId: A, commandId: 'c1', regime: 'sop' }),
      { type: 'user_message', loopId: A, commandId: 'c1', text: 'shout hello' },
      progress(A, 'c1', { type: 'prompt_started', promptIndex: 0 }),
      progress(A, 'c1', { type: 'plan_generated', attempt: 1, plan: plan1, previousPlan: '', steps: planSteps(plan1) }),
      progress(A, 'c1', { type: 'variable_status', attempt: 1, variable: 'loud', command: 'shout', state: 'running' }),
    );
    expect(await page.textContent('details.plan summary')).toContain('Plan · attempt 1');
    expect(await page.locator('details.plan pre.code .tok-name').allTextContents()).toEqual(['@loud', '@n', '@lastAnswer']);
    expect(await page.locator('details.plan pre.code .tok-comment').allTextContents()).toEqual(['# Shout it']);
    const states = () => page.$$eval('table.vars tbody tr', (rows) => rows.map((r) => `${r.getAttribute('data-variable')}:${r.getAttribute('data-state')}`));
    expect(await states()).toEqual(['loud:running', 'n:pending', 'lastAnswer:pending']);
    expect(await page.textContent('tr[data-variable="n"] .state')).toBe('○ not run');
    await events(
      progress(A, 'c1', { type: 'variable_status', attempt: 1, variable: 'loud', command: 'shout', state: 'success', value: 'HELLO' }),
      progress(A, 'c1', { type: 'variable_status', attempt: 1, variable: 'n', command: 'count_words', state: 'fail', value: long }),
    );
    expect(await states()).toEqual(['loud:success', 'n:fail', 'lastAnswer:pending']);
    const cell = page.locator('tr[data-variable="n"] td.value');
    expect((await cell.textContent())!.length).toBe(160);
    await cell.click();
    await page.waitForFunction(() => document.querySelector('tr[data-variable="n"] td.value')!.textContent!.length === 400);
    await events(
      progress(A, 'c1', { type: 'plan_generated', attempt: 2, plan: plan2, previousPlan: plan1, steps: planSteps(plan2) }),
      progress(A, 'c1', { type: 'variable_status', attempt: 2, variable: 'loud', command: 'shout', state: 'success', value: 'HELLO WORLD' }),
    );
    expect(await page.locator('details.plan').count()).toBe(2);
    // The newest attempt is open, the older one collapsed.
    expect(await page.$$eval('details.plan', (d) => d.map((x) => (x as HTMLDetailsElement).open))).toEqual([false, true]);
    await page.click('details.plan[data-attempt="2"] button[data-action="toggleDiff"]');
    await page.waitForSelector('details.plan[data-attempt="2"] .diff');
    expect(await page.$$eval('details.plan[data-attempt="2"] .diff > div', (d) => d.map((x) => x.getAttribute('data-change')))).toEqual(['changed', 'unchanged', 'unchanged']);
    await clearPosted();
    await page.click('details.plan[data-attempt="2"] button[data-action="openPlan"]');
    expect(await posted()).toEqual([{ type: 'openPlan', loopId: A, commandId: 'c1', attempt: 2 }]);
  });

  it('approval cards: Approve and Always post the decision; Deny sends the typed reason, which survives re-renders; closed cards say how they ended', async () => {
    await events(
      reg({ type: 'TurnStarted', loopId: A, commandId: 'c1', regime: 'sop' }),
      { type: 'user_message', loopId: A, commandId: 'c1', text: 'save a note' },
      { type: 'approval_opened', loopId: A, commandId: 'c1', approval: { id: 'ap1', tool: 'save_note', origin: 'sop', variable: 'note', reason: 'Keep it', input: '{\n  "args": ["hi"]\n}', key: 'save_note {"args":["hi"]}', sideEffects: null } },
    );
    const card = page.locator('.card.approval[data-approval="ap1"]');
    expect(await card.textContent()).toContain('Allow save_note to run?');
    expect(await card.textContent()).toContain('unknown (treated as yes)');
    expect(await page.textContent(`.tab[data-loop="${A}"] .badge.approval`)).toBe('1 approval');
    await card.locator('input').click();
    await page.keyboard.type('not now');
    // A render while typing (a variable update) keeps the text and the focus.
    await events(progress(A, 'c1', { type: 'tool_reason', tool: 'save_note', reason: 'Keep it', stepIndex: 2 }));
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.focusKey)).toBe('deny:ap1');
    await page.keyboard.type(', thanks');
    await card.locator('button[data-action="deny"]').click();
    expect(await posted()).toEqual([{ type: 'approval', id: 'ap1', decision: 'deny', reason: 'not now, thanks' }]);
    await events({ type: 'approval_closed', loopId: A, id: 'ap1', state: 'denied', reason: 'not now, thanks' });
    expect(await page.textContent('.closed-card.approval')).toBe('⊘ Denied save_note: not now, thanks');
    expect(await page.locator(`.tab[data-loop="${A}"] .badge.approval`).count()).toBe(0);

    await clearPosted();
    await events({ type: 'approval_opened', loopId: A, commandId: 'c1', approval: { id: 'ap2', tool: 'write_file', origin: 'sop', input: 'x', key: 'k', sideEffects: true } });
    await page.click('.card.approval[data-approval="ap2"] button[data-action="alwaysApprove"]');
    expect(await posted()).toEqual([{ type: 'approval', id: 'ap2', decision: 'alwaysApprove' }]);
    await events(reg({ type: 'TurnSettled', loopId: A, commandId: 'c1', outcome: { kind: 'interrupted', text: 'Interrupted by user', regime: null } }));
    expect(await page.getAttribute('[data-approval="ap2"]', 'data-state')).toBe('cancelled');
    expect(await page.textContent('[data-approval="ap2"]')).toContain('Cancelled');
  });

  it('a destructive tool\'s card (an MCP tool\'s destructiveHint) offers no "Always" and says why', async () => {
    await events(
      reg({ type: 'TurnStarted', loopId: A, commandId: 'd1', regime: 'sop' }),
      { type: 'user_message', loopId: A, commandId: 'd1', text: 'write it' },
      { type: 'approval_opened', loopId: A, commandId: 'd1', approval: { id: 'apd', tool: 'fs.write_file', origin: 'sop', input: 'x', key: 'k', sideEffects: true, destructive: true } },
    );
    const card = page.locator('.card.approval[data-approval="apd"]');
    expect(await card.textContent()).toContain('yes, destructive');
    expect(await card.textContent()).toContain('it is asked about every time');
    expect(await card.locator('button[data-action="alwaysApprove"]').count()).toBe(0);
    expect(await card.locator('button[data-action="approve"]').count()).toBe(1);
  });

  it('approval cards show the whole input, each argument in its own box, hidden characters as marked escapes, and keep the scroll on re-render', async () => {
    const long = `${'x'.repeat(20_000)}; echo TAIL`;
    const open = (id: string, args: string[] | undefined, input: string) => ({
      type: 'approval_opened' as const, loopId: A, commandId: 'c1', approval: { id, tool: 'write_file', origin: args ? 'sop' as const : 'loop' as const, input, key: 'k', sideEffects: true, ...(args ? { args } : {}) },
    });
    await events(
      reg({ type: 'TurnStarted', loopId: A, commandId: 'c1', regime: 'sop' }),
      open('one', ['a b', 'c'], ''),
      open('two', ['a', 'b c'], ''),
      open('long', ['notes.txt', long], ''),
      open('hidden', ['ls \u202eevil\x1b[8m', ''], ''),
      open('loop', undefined, long),
    );
    const args = (id: string) => page.locator(`[data-approval="${id}"] ol.args > li pre`).allTextContents();
    expect(await args('one')).toEqual(['a b', 'c']);
    expect(await args('two')).toEqual(['a', 'b c']);
    expect(await args('long')).toEqual(['notes.txt', long]);
    expect(await page.textContent('[data-approval="loop"] pre.whole')).toBe(long);
    // Hidden characters: marked escapes, never rendered; an empty argument says so.
    expect(await args('hidden')).toEqual(['ls \\u202eevil\\x1b[8m', '(empty)']);
    expect(await page.locator('[data-approval="hidden"] .esc').allTextContents()).toEqual(['\\u202e', '\\x1b']);
    expect(await page.textContent('[data-approval="hidden"]')).toContain('control or invisible characters');
    expect(await page.textContent('[data-approval="one"]')).not.toContain('control or invisible characters');
    // A long argument scrolls inside its box, and the position survives a re-render.
    const box = page.locator('[data-approval="long"] ol.args > li:nth-child(2) pre');
    expect(await box.evaluate((n) => n.scrollHeight > n.clientHeight + 100)).toBe(true);
    await box.evaluate((n) => void (n.scrollTop = n.scrollHeight));
    const bottom = await box.evaluate((n) => n.scrollTop);
    expect(bottom).toBeGreaterThan(100);
    await events(progress(A, 'c1', { type: 'tool_reason', tool: 'write_file', reason: 'a render', stepIndex: 1 }));
    expect(await box.evaluate((n) => n.scrollTop)).toBe(bottom);
  });

  it('renders answers as safe Markdown: markup in model text stays text, only http(s) links', async () => {
    const evil = 'Here is **bold**, `code` and <img src=x onerror="window.xssHit=1"> and [bad](javascript:window.xssHit=2) and [good](https://example.org).\n\n```\n<script>window.xssHit=3</script>\n```';
    await events(
      reg({ type: 'TurnStarted', loopId: A, commandId: 'c1', regime: 'sop' }),
      { type: 'user_message', loopId: A, commandId: 'c1', text: '<b>not bold</b>' },
      reg({ type: 'TurnSettled', loopId: A, commandId: 'c1', outcome: { kind: 'answered', text: evil, regime: 'sop' } }),
    );
    expect(await page.locator('.answer img, .answer script, .bubble b').count()).toBe(0);
    expect(await page.textContent('.bubble')).toBe('<b>not bold</b>');
    expect(await page.textContent('.answer strong')).toBe('bold');
    expect(await page.textContent('.answer p')).toContain('<img src=x onerror="window.xssHit=1">');
    expect(await page.$$eval('.answer a', (a) => a.map((x) => [x.textContent, x.getAttribute('href')]))).toEqual([['good', 'https://example.org']]);
    expect(await page.textContent('.answer pre code')).toBe('<script>window.xssHit=3</script>');
    expect(await page.evaluate(() => window.xssHit)).toBeUndefined();
    expect(await page.evaluate(() => window.__violations)).toEqual([]);
  });

  it('a link shows its real destination: a URL-like label pointing elsewhere is text followed by the real URL', async () => {
    const text = 'Log in at [https://github.com/login](https://evil.example/steal) or read [the docs](https://example.org/docs) or [example.org](https://example.org).';
    await events(
      reg({ type: 'TurnStarted', loopId: A, commandId: 'c1', regime: 'sop' }),
      reg({ type: 'TurnSettled', loopId: A, commandId: 'c1', outcome: { kind: 'answered', text, regime: 'sop' } }),
    );
    // No anchor reads as one URL and goes to another; every anchor's destination is on screen.
    const anchors = await page.$$eval('.answer a', (a) => a.map((x) => [x.textContent, x.getAttribute('href')]));
    expect(anchors).toEqual([['https://evil.example/steal', 'https://evil.example/steal'], ['the docs', 'https://example.org/docs'], ['example.org', 'https://example.org']]);
    const shown = await page.innerText('.answer p');
    expect(shown).toBe('Log in at https://github.com/login (https://evil.example/steal) or read the docs (https://example.org/docs) or example.org (https://example.org/).');
    expect(await page.locator('.answer a[href^="https://github.com"]').count()).toBe(0);
  });

  it('queued messages have a Remove button; Stop shows while running, then Stopping… until the turn settles', async () => {
    await events(
      reg({ type: 'TurnStarted', loopId: A, commandId: 'c1', regime: 'sop' }),
      { type: 'user_message', loopId: A, commandId: 'c1', text: 'slow' },
      reg({ type: 'InputQueued', loopId: A, commandId: 'c2' }),
      { type: 'user_message', loopId: A, commandId: 'c2', text: 'next' },
    );
    expect(await page.textContent(`.tab[data-loop="${A}"]`)).toContain('1 queued');
    expect(await page.textContent('section[data-command="c1"] .waiting')).toBe('Waiting for the model…');
    expect(await page.isVisible('#stop')).toBe(true);
    expect(await page.isDisabled('#stop-all')).toBe(false);
    await page.click('section[data-command="c2"] button[data-action="cancelQueued"]');
    await page.click('#stop');
    expect(await posted()).toEqual([{ type: 'cancelQueued', loopId: A, commandId: 'c2' }, { type: 'stop', loopId: A }]);
    await events({ type: 'stopping', loopIds: [A] }, reg({ type: 'InputCancelled', loopId: A, commandId: 'c2', reason: 'cancelled' }));
    expect(await page.textContent('#status')).toBe('Stopping…');
    expect(await page.isVisible('#stop')).toBe(false);
    expect(await page.textContent('section[data-command="c1"] .chip')).toBe('Stopping…');
    expect(await page.textContent('section[data-command="c1"] .waiting')).toBe('Stopping: waiting for the model call to end…');
    expect(await page.getAttribute('section[data-command="c2"]', 'data-status')).toBe('cancelled');
    await events(reg({ type: 'TurnSettled', loopId: A, commandId: 'c1', outcome: { kind: 'interrupted', text: 'Interrupted by user', regime: null } }), reg({ type: 'LoopIdle', loopId: A }));
    expect(await page.textContent('section[data-command="c1"] .answer')).toContain('Interrupted by user');
    expect(await page.textContent('#status')).toBe('idle');
    expect(await page.isVisible('#stop')).toBe(false);
    expect(await page.isDisabled('#stop-all')).toBe(true);
  });

  it('pickers keep the committed value until the host reports the change, and show a refusal', async () => {
    await page.selectOption('#mode', 'loop');
    expect(await posted()).toEqual([{ type: 'setMode', loopId: A, mode: 'loop' }]);
    expect(await page.inputValue('#mode')).toBe('sop');
    await events({ type: 'picker', loopId: A, pending: { what: 'mode', value: 'loop' }, error: null });
    expect(await page.isDisabled('#mode')).toBe(true);
    expect(await page.textContent('#picker-status')).toBe('changing mode to loop…');
    await events(reg({ type: 'LoopModeChanged', loopId: A, mode: 'loop', model: { name: 'default' } }), { type: 'picker', loopId: A, pending: null, error: null });
    expect(await page.inputValue('#mode')).toBe('loop');
    expect(await page.isDisabled('#mode')).toBe(false);
    await clearPosted();
    await page.selectOption('#model', 'other-model');
    await page.selectOption('#effort', 'high');
    expect(await posted()).toEqual([{ type: 'setInference', loopId: A, model: 'other-model' }, { type: 'setInference', loopId: A, effort: 'high' }]);
    expect(await page.inputValue('#model')).toBe('default');
    await events({ type: 'picker', loopId: A, pending: null, error: 'model not changed: invalid_model' });
    expect(await page.textContent('#picker-status')).toBe('model not changed: invalid_model');
    expect(await page.inputValue('#model')).toBe('default');
  });

  it('offers Continue in loop mode after an execution failure, Retry after an error, and notes a fallback', async () => {
    await events(
      reg({ type: 'TurnStarted', loopId: A, commandId: 'c1', regime: 'sop' }),
      { type: 'user_message', loopId: A, commandId: 'c1', text: 'do it' },
      reg({ type: 'TurnSettled', loopId: A, commandId: 'c1', outcome: { kind: 'failed', text: '', regime: 'sop', reason: 'execution_failed', failures: [{ variable: 'x', reason: 'boom' }], plan: '@x failer' } }),
      reg({ type: 'TurnStarted', loopId: A, commandId: 'c2', regime: 'sop' }),
      { type: 'user_message', loopId: A, commandId: 'c2', text: 'again' },
      reg({ type: 'TurnSettled', loopId: A, commandId: 'c2', outcome: { kind: 'error', text: 'planning failed: 500', regime: null } }),
      reg({ type: 'TurnStarted', loopId: A, commandId: 'c3', regime: 'sop' }),
      { type: 'user_message', loopId: A, commandId: 'c3', text: 'fallback' },
      reg({ type: 'TurnSettled', loopId: A, commandId: 'c3', outcome: { kind: 'answered', text: 'loop answer', regime: 'loop', fellBack: { sopReason: 'plan_invalid' } } }),
    );
    expect(await page.textContent('section[data-command="c1"] ul.failures')).toBe('x: boom');
    expect(await page.textContent('section[data-command="c3"] .answer .note')).toContain('No plan passed validation (plan invalid)');
    expect(await page.locator('button[data-action="continueInLoop"]').count()).toBe(1);
    await page.click('button[data-action="continueInLoop"]');
    await page.click('button[data-action="retry"]');
    expect(await posted()).toEqual([{ type: 'continueInLoop', loopId: A, commandId: 'c1' }, { type: 'retry', loopId: A, commandId: 'c2' }]);
  });

  it('shows what is missing: no model (with settings buttons), skills not loaded, restored turns', async () => {
    let s = baseState();
    s = applyPanelEvent(s, { type: 'config', provider: { ready: false, label: '', message: 'No language model is configured for the chat.' }, skillsNote: 'The skills module skills.mjs was not loaded because this workspace is not trusted.', models: s.models, reviewPlans: 'off' });
    s = applyPanelEvent(s, { type: 'restored', loopId: A, turns: [{ user: 'earlier question', answer: 'earlier **answer**', kind: 'answered' }] });
    await host({ type: 'state', state: s });
    const banners = await page.locator('.banner').allTextContents();
    expect(banners[0]).toContain('No language model is configured');
    expect(banners[1]).toContain('not trusted');
    expect(await page.textContent('.restored .note')).toContain('nothing in them ran in this window');
    expect(await page.textContent('.restored strong')).toBe('answer');
    await page.click('.banner button[data-what="apiKey"]');
    expect(await posted()).toEqual([{ type: 'configure', what: 'apiKey' }]);
  });
});
