/**
 * The chat page script (bundled for the browser into dist/chat-webview.js). It keeps a copy of
 * the view model, applies the host's panel events with the shared reducer, renders the focused
 * conversation and posts the user's intents. It never decides anything the host owns: the tab
 * highlight follows ActiveLoopChanged, pickers show committed values, cards close when the host
 * says so. Every text from a model or a user is put in the DOM with `textContent`; Markdown is
 * read by markdown.ts into data and built from elements, never from HTML strings.
 */
import {
  applyPanelEvent, diffPlanSteps, emptyState, hasHidden, offersLoop, offersRetry, openApprovals, tabTitle, visibleParts,
  type ApprovalView, type AttemptView, type ChatState, type OutcomeView, type PlanStep, type ReviewView, type StepView, type TabView, type TurnView,
} from './model';
import { displayHref, linkShowsDestination, parseMarkdown, planTokens, safeHref, type Block, type Inline } from './markdown';
import type { FromChatWebview, ToChatWebview } from './protocol';

interface VsCodeApi {
  postMessage(message: FromChatWebview): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
let state: ChatState = emptyState();

/** Page-only state: what is expanded, what was typed into cards, the composer draft. */
const ui = {
  open: new Map<string, boolean>(),
  diff: new Set<string>(),
  expanded: new Set<string>(),
  inputs: new Map<string, string>(),
  /** Scroll positions of the scrollable boxes in cards, kept across re-renders. */
  scroll: new Map<string, number>(),
};

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | undefined> = {}, ...children: (Node | string | null | undefined)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) node.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined) node.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return node;
}

function button(label: string, action: string, data: Record<string, string> = {}, cls = ''): HTMLButtonElement {
  const attrs: Record<string, string> = { type: 'button', 'data-action': action };
  if (cls) attrs.class = cls;
  for (const [k, v] of Object.entries(data)) attrs[`data-${k}`] = v;
  return el('button', attrs, label);
}

function post(message: FromChatWebview): void {
  vscode.postMessage(message);
}

const activeTab = (): TabView | undefined => state.tabs.find((t) => t.id === state.activeLoopId);

// ------------------------------------------------------------------ markdown and plans

function inlineNodes(items: readonly Inline[], parent: HTMLElement): void {
  for (const item of items) {
    switch (item.t) {
      case 'text':
        parent.append(document.createTextNode(item.v));
        break;
      case 'br':
        parent.append(el('br'));
        break;
      case 'code':
        parent.append(el('code', {}, item.v));
        break;
      case 'strong': {
        const s = el('strong');
        inlineNodes(item.c, s);
        parent.append(s);
        break;
      }
      case 'em': {
        const s = el('em');
        inlineNodes(item.c, s);
        parent.append(s);
        break;
      }
      case 'link': {
        if (!safeHref(item.href)) {
          inlineNodes(item.c, parent);
          break;
        }
        const a = el('a', { href: item.href, title: displayHref(item.href), rel: 'noreferrer noopener' });
        inlineNodes(item.c, a);
        parent.append(a);
        // A link always shows where it goes: its label alone could say anything.
        if (!linkShowsDestination(item)) parent.append(el('span', { class: 'link-dest' }, ` (${displayHref(item.href)})`));
        break;
      }
    }
  }
}

function markdownNodes(blocks: readonly Block[], parent: HTMLElement): void {
  for (const b of blocks) {
    switch (b.t) {
      case 'p': {
        const p = el('p');
        inlineNodes(b.c, p);
        parent.append(p);
        break;
      }
      case 'h': {
        const h = el(`h${Math.min(6, Math.max(1, b.level))}` as 'h1');
        inlineNodes(b.c, h);
        parent.append(h);
        break;
      }
      case 'code':
        parent.append(el('pre', {}, el('code', b.lang ? { 'data-lang': b.lang } : {}, b.v)));
        break;
      case 'list': {
        const list = b.ordered ? el('ol', b.start !== 1 ? { start: String(b.start) } : {}) : el('ul');
        for (const item of b.items) {
          const li = el('li');
          inlineNodes(item, li);
          list.append(li);
        }
        parent.append(list);
        break;
      }
      case 'quote': {
        const q = el('blockquote');
        markdownNodes(b.c, q);
        parent.append(q);
        break;
      }
      case 'hr':
        parent.append(el('hr'));
        break;
    }
  }
}

function planCode(plan: string): HTMLElement {
  const pre = el('pre', { class: 'code' });
  const lines = plan.split('\n');
  lines.forEach((line, i) => {
    for (const tok of planTokens(line)) pre.append(tok.cls === 'plain' ? document.createTextNode(tok.text) : el('span', { class: `tok-${tok.cls}` }, tok.text));
    if (i < lines.length - 1) pre.append('\n');
  });
  return pre;
}

function diffView(previous: readonly PlanStep[], next: readonly PlanStep[]): HTMLElement {
  const box = el('pre', { class: 'code diff' });
  for (const d of diffPlanSteps(previous, next)) {
    const text = (d.after ?? d.before)!.text.split('\n')[0] ?? '';
    box.append(el('div', { class: d.change, 'data-change': d.change }, el('span', { class: 'mark' }, d.change), text));
  }
  return box;
}

const STATE_LABEL: Record<string, string> = {
  pending: '○ not run', undefined: '○ not run', running: '… running', success: '✓ success', fail: '✗ fail', canceled: '⊘ canceled', awaiting_input: '? awaiting input',
};

function variablesTable(turn: TurnView, a: AttemptView): HTMLElement {
  const table = el('table', { class: 'vars' }, el('thead', {}, el('tr', {}, el('th', {}, 'Variable'), el('th', {}, 'Command'), el('th', {}, 'State'), el('th', {}, 'Value'))));
  const body = el('tbody');
  const rows = new Map(a.variables.map((v) => [v.variable, v]));
  const names = [...a.steps.map((s) => s.name), ...a.variables.map((v) => v.variable).filter((n) => !a.steps.some((s) => s.name === n))];
  for (const name of names) {
    const row = rows.get(name);
    const step = a.steps.find((s) => s.name === name);
    const st = row?.state ?? 'pending';
    const key = `value:${turn.commandId}:${a.attempt}:${name}`;
    const value = row?.value ?? '';
    const expanded = ui.expanded.has(key);
    const shown = !expanded && value.length > 160 ? `${value.slice(0, 159)}…` : value;
    const valueCell = el('td', { class: `value${expanded ? '' : ' collapsed'}`, 'data-action': 'toggleValue', 'data-key': key, title: value.length > 160 ? 'Click to show all' : undefined }, shown);
    body.append(el('tr', { 'data-variable': name, 'data-state': st },
      el('td', { class: 'name' }, `@${name}`), el('td', {}, row?.command ?? step?.command ?? ''), el('td', { class: `state ${st}` }, STATE_LABEL[st] ?? st), valueCell));
  }
  table.append(body);
  return table;
}

function attemptView(turn: TurnView, a: AttemptView, last: boolean): HTMLElement {
  const key = `plan:${turn.commandId}:${a.attempt}`;
  const open = ui.open.get(key) ?? last;
  const details = el('details', { class: 'plan', 'data-key': key, 'data-attempt': String(a.attempt), 'data-default-open': String(last) });
  details.open = open;
  const summary = el('summary', {}, el('span', {}, `Plan · attempt ${a.attempt}`), el('span', { class: 'note' }, `${a.steps.length} declaration${a.steps.length === 1 ? '' : 's'}`), el('span', { class: 'grow' }));
  const diffKey = `diff:${turn.commandId}:${a.attempt}`;
  if (a.attempt > 1) summary.append(button(ui.diff.has(diffKey) ? 'Show plan' : 'Show changes', 'toggleDiff', { key: diffKey }, 'link'));
  summary.append(button('Open in editor', 'openPlan', { loop: state.activeLoopId ?? '', command: turn.commandId, attempt: String(a.attempt) }, 'link'));
  details.append(summary);
  const body = el('div', { class: 'plan-body' });
  const previous = turn.attempts.find((x) => x.attempt === a.attempt - 1);
  body.append(ui.diff.has(diffKey) && previous ? diffView(previous.steps, a.steps) : planCode(a.plan));
  const side = el('div');
  if (a.failures.length > 0) {
    side.append(el('div', { class: 'note' }, 'Rejected before anything ran:'));
    const ul = el('ul', { class: 'failures' });
    for (const f of a.failures) ul.append(el('li', {}, `${f.variable}${f.code ? ` [${f.code}]` : ''}: ${f.reason}`));
    side.append(ul);
  }
  if (a.steps.length > 0 || a.variables.length > 0) side.append(variablesTable(turn, a));
  body.append(side);
  details.append(body);
  return details;
}

const APPROVAL_ICON: Record<string, string> = { pending: '?', approved: '✓', always: '✓✓', denied: '⊘', cached: '✓' };
const OUTCOME_ICON: Record<string, string> = { running: '…', ok: '✓', error: '✗', denied: '⊘', needs_input: '?' };

function stepsView(steps: readonly StepView[]): HTMLElement {
  const ol = el('ol', { class: 'steps' });
  for (const s of steps) {
    const li = el('li', { 'data-tool': s.tool });
    li.append(el('span', { class: 'tool' }, s.tool));
    if (s.approval) li.append(' ', el('span', { class: 'chip', title: `approval: ${s.approval}` }, `${APPROVAL_ICON[s.approval] ?? ''} ${s.approval}`));
    if (s.outcome) li.append(' ', el('span', { class: `chip state ${s.outcome === 'ok' ? 'success' : s.outcome === 'error' ? 'fail' : s.outcome}` }, `${OUTCOME_ICON[s.outcome] ?? ''} ${s.outcome}`));
    if (s.reason) li.append(el('div', { class: 'note' }, s.reason));
    if (s.input) li.append(el('div', { class: 'input' }, s.input.length > 300 ? `${s.input.slice(0, 299)}…` : s.input));
    if (s.resultRef) li.append(el('div', { class: 'preview' }, `${s.resultRef}${s.preview ? ` = ${s.preview.length > 300 ? `${s.preview.slice(0, 299)}…` : s.preview}` : ''}`));
    ol.append(li);
  }
  return ol;
}

/** Appends a text with its hidden and control characters as marked, visible escapes. */
function appendVisible(parent: HTMLElement, text: string): HTMLElement {
  for (const p of visibleParts(text)) {
    parent.append(p.escape ? el('span', { class: 'esc', title: 'a control or invisible character' }, p.text) : document.createTextNode(p.text));
  }
  return parent;
}

function visibleSpan(text: string): HTMLElement {
  return appendVisible(el('span'), text);
}

/** The whole of a text in a box that scrolls when it is long; its scroll position survives re-renders. */
function wholeText(key: string, text: string, label: string): HTMLElement {
  const pre = el('pre', { class: 'whole', 'data-scroll-key': key, tabindex: '0', 'aria-label': label });
  if (text === '') pre.append(el('span', { class: 'empty' }, '(empty)'));
  else appendVisible(pre, text);
  return pre;
}

function approvalCard(a: ApprovalView): HTMLElement {
  if (a.state !== 'open') {
    const text = a.state === 'approved' ? `✓ Approved ${a.tool}` : a.state === 'always' ? `✓ Always approved this exact call of ${a.tool}`
      : a.state === 'denied' ? `⊘ Denied ${a.tool}${a.denyReason ? `: ${a.denyReason}` : ''}` : `Cancelled: the approval for ${a.tool} was closed because the turn was interrupted`;
    return el('div', { class: 'closed-card approval', 'data-approval': a.id, 'data-state': a.state }, text);
  }
  const card = el('div', { class: 'card approval', 'data-approval': a.id, 'data-state': 'open', role: 'group', 'aria-label': `Approval for ${a.tool}` });
  card.append(el('h3', {}, `Allow ${a.tool} to run?`));
  const fields = el('div', { class: 'fields' });
  const field = (k: string, v: Node | string) => fields.append(el('span', { class: 'k' }, k), el('span', {}, v));
  field('Command', visibleSpan(a.tool));
  if (a.variable) field('Variable', visibleSpan(`@${a.variable}`));
  if (a.reason) field('Reason', visibleSpan(a.reason));
  field('Side effects', a.destructive === true ? 'yes, destructive' : a.sideEffects === null ? 'unknown (treated as yes)' : a.sideEffects ? 'yes' : 'no');
  // Every argument whole and in its own box, so where one ends and the next begins is plain.
  if (a.args && a.args.length === 0) field('Arguments', 'none');
  else if (a.args) {
    const list = el('ol', { class: 'args' });
    a.args.forEach((arg, i) => list.append(el('li', {}, wholeText(`${a.id}:arg:${i}`, arg, `Argument ${i + 1}`))));
    field(a.args.length === 1 ? 'Argument' : `Arguments (${a.args.length})`, list);
  } else field('Input', wholeText(`${a.id}:input`, a.input, 'Input'));
  card.append(fields);
  if ((a.args ?? [a.input]).some((t) => hasHidden(t)) || hasHidden(a.tool)) {
    card.append(el('div', { class: 'note' }, 'The input contains control or invisible characters; they are shown marked, as escapes such as \\u202e.'));
  }
  const reasonKey = `deny:${a.id}`;
  const reason = el('input', { type: 'text', placeholder: 'Reason for denying (optional)', 'data-input': reasonKey, 'data-focus-key': reasonKey, 'aria-label': 'Reason for denying' });
  reason.value = ui.inputs.get(reasonKey) ?? '';
  // A destructive tool is asked about every time: its card offers no "always".
  card.append(el('div', { class: 'buttons' },
    button('Approve', 'approve', { id: a.id }),
    a.destructive === true ? null : button('Always approve this exact call', 'alwaysApprove', { id: a.id }, 'secondary'),
    button('Deny', 'deny', { id: a.id }, 'secondary'),
    reason));
  card.append(a.destructive === true
    ? el('div', { class: 'note' }, 'This tool is marked destructive: it is asked about every time.')
    : el('div', { class: 'note', title: a.key }, '"Always" remembers this command with exactly this input, for this conversation only.'));
  return card;
}

function reviewCard(r: ReviewView): HTMLElement {
  if (r.state !== 'open' && r.state !== 'editing') {
    const text = r.state === 'run' ? `✓ Plan (attempt ${r.attempt}) approved to run` : r.state === 'edited' ? `✓ Edited plan (attempt ${r.attempt}) sent to run`
      : r.state === 'rejected' ? `⊘ Plan rejected${r.reason ? `: ${r.reason}` : ''}` : 'Cancelled: the review was closed because the turn was interrupted';
    return el('div', { class: 'closed-card review', 'data-review': r.id, 'data-state': r.state }, text);
  }
  const card = el('div', { class: 'card review', 'data-review': r.id, 'data-state': r.state, role: 'group', 'aria-label': 'Plan review' });
  card.append(el('h3', {}, `Review the plan before it runs (attempt ${r.attempt})`));
  card.append(planCode(r.plan));
  const deps = r.steps.filter((s) => s.deps.length > 0).map((s) => `@${s.name} ← ${s.deps.map((d) => `$${d}`).join(', ')}`);
  if (deps.length > 0) card.append(el('div', { class: 'note' }, `Graph: ${deps.join(' · ')}`));
  if (r.previousSteps.length > 0) {
    card.append(el('div', { class: 'note' }, 'Changes from the previous attempt:'));
    card.append(diffView(r.previousSteps, r.steps));
  }
  const reasonKey = `reject:${r.id}`;
  const reason = el('input', { type: 'text', placeholder: 'Reason for rejecting (optional)', 'data-input': reasonKey, 'data-focus-key': reasonKey, 'aria-label': 'Reason for rejecting' });
  reason.value = ui.inputs.get(reasonKey) ?? '';
  const buttons = el('div', { class: 'buttons' });
  if (r.state === 'editing') {
    buttons.append(el('span', { class: 'note' }, 'Editing in an editor: save the file to run your version.'), button('Cancel edit', 'reviewCancelEdit', { id: r.id }, 'secondary'));
  } else {
    buttons.append(button('Run', 'reviewRun', { id: r.id }), button('Edit', 'reviewEdit', { id: r.id }, 'secondary'), button('Reject', 'reviewReject', { id: r.id }, 'secondary'), reason);
  }
  card.append(buttons);
  return card;
}

const OUTCOME_HEAD: Record<string, string> = {
  answered: 'Answer', awaiting_input: 'Waiting for your reply', plan_only: 'Plan only', cannot_complete: 'Cannot complete', failed: 'Failed', interrupted: 'Interrupted', error: 'Error',
};

function outcomeView(turn: TurnView, o: OutcomeView, loopId: string): HTMLElement {
  const box = el('div', { class: `answer ${o.kind}`, 'data-outcome': o.kind });
  const head = [OUTCOME_HEAD[o.kind] ?? o.kind];
  if (o.regime) head.push(o.regime === 'sop' ? 'plan' : 'loop');
  if (o.reason) head.push(o.reason.replace(/_/g, ' '));
  box.append(el('div', { class: 'head' }, head.join(' · ')));
  if (o.fellBack) box.append(el('div', { class: 'note' }, `No plan passed validation (${o.fellBack.sopReason.replace(/_/g, ' ')}), so the loop session answered, one tool at a time.`));
  if (o.kind === 'plan_only') box.append(el('div', { class: 'note' }, 'The plan above was written but not executed.'));
  if (o.text) {
    const body = el('div', { class: 'text' });
    if (o.kind === 'answered' || o.kind === 'awaiting_input') markdownNodes(parseMarkdown(o.text), body);
    else body.append(el('p', {}, o.text));
    box.append(body);
  }
  if (o.kind === 'awaiting_input') box.append(el('div', { class: 'note' }, 'Your next message answers this.'));
  if (o.failures && o.failures.length > 0 && o.kind === 'failed') {
    const ul = el('ul', { class: 'failures' });
    for (const f of o.failures) ul.append(el('li', {}, `${f.variable}: ${f.reason}`));
    box.append(ul);
  }
  const actions = el('div', { class: 'buttons' });
  if (offersLoop(o)) actions.append(button('Continue in loop mode', 'continueInLoop', { loop: loopId, command: turn.commandId }));
  if (offersRetry(o)) actions.append(button('Retry', 'retry', { loop: loopId, command: turn.commandId }));
  if (actions.childNodes.length > 0) box.append(actions);
  return box;
}

function turnView(tab: TabView, turn: TurnView): HTMLElement {
  const box = el('section', { class: 'turn', 'data-command': turn.commandId, 'data-status': turn.status });
  const user = el('div', { class: `user ${turn.status}` });
  if (turn.status === 'queued') user.append(el('span', { class: 'chip' }, 'queued'), button('Remove', 'cancelQueued', { loop: tab.id, command: turn.commandId }, 'link'));
  else if (turn.status === 'cancelled') user.append(el('span', { class: 'chip' }, 'removed'));
  else if (turn.status === 'running') user.append(el('span', { class: `chip${tab.stopping ? ' stopping' : ''}` }, tab.stopping ? 'Stopping…' : 'running…'));
  user.append(el('div', { class: 'bubble' }, turn.text ?? ''));
  box.append(user);
  if (turn.regime) box.append(el('div', { class: 'regime' }, turn.regime === 'loop' ? 'loop: one tool at a time' : turn.regime === 'plan' ? 'plan only' : 'plan (SOP)'));
  turn.attempts.forEach((a, i) => box.append(attemptView(turn, a, i === turn.attempts.length - 1)));
  if (turn.progress.length > 0) {
    const ul = el('ul', { class: 'progress' });
    for (const p of turn.progress) ul.append(el('li', {}, p));
    box.append(ul);
  }
  if (turn.steps.length > 0) {
    if (turn.attempts.length > 0) box.append(el('div', { class: 'regime' }, 'loop: one tool at a time'));
    box.append(stepsView(turn.steps));
  }
  if (turn.status === 'running' && turn.attempts.length === 0 && turn.steps.length === 0 && turn.approvals.length === 0 && turn.reviews.length === 0) {
    box.append(el('div', { class: 'note waiting' }, tab.stopping ? 'Stopping: waiting for the model call to end…' : 'Waiting for the model…'));
  }
  if (turn.compressed) box.append(el('div', { class: 'note' }, `Older history was compressed (${turn.compressed} entries).`));
  for (const r of turn.reviews) box.append(reviewCard(r));
  for (const a of turn.approvals) box.append(approvalCard(a));
  if (turn.outcome) box.append(outcomeView(turn, turn.outcome, tab.id));
  return box;
}

// ------------------------------------------------------------------ the page

function renderTabs(): void {
  const tabs = $('tabs');
  tabs.replaceChildren();
  const visible = state.tabs.filter((t) => !t.hidden);
  const ordered: TabView[] = [];
  const add = (t: TabView) => {
    ordered.push(t);
    for (const c of visible) if (c.parentId === t.id) add(c);
  };
  for (const t of visible) if (t.parentId === null || !visible.some((p) => p.id === t.parentId)) add(t);
  for (const t of ordered) {
    const selected = t.id === state.activeLoopId;
    const approvals = openApprovals(t);
    const tab = el('div', {
      class: `tab${t.parentId ? ' child' : ''}`, role: 'tab', tabindex: '0', 'aria-selected': String(selected), 'data-action': 'selectTab', 'data-loop': t.id,
      'data-state': t.state, title: `${t.displayName}: ${t.state}, mode ${t.mode}, model ${t.model.name}${t.queued.length ? `, ${t.queued.length} queued` : ''}`,
    });
    tab.append(el('span', { class: `dot ${t.state}` }));
    tab.append(el('span', { class: 'title' }, tabTitle(t)));
    if (t.parentId) tab.append(el('span', { class: 'badge' }, 'delegated'));
    tab.append(el('span', { class: 'meta' }, `${t.state} · ${t.mode} · ${t.model.name}${t.model.effort ? ` (${t.model.effort})` : ''}`));
    if (t.queued.length > 0) tab.append(el('span', { class: 'badge', title: 'queued messages' }, `${t.queued.length} queued`));
    if (approvals > 0) tab.append(el('span', { class: 'badge approval', title: 'waiting for your approval' }, `${approvals} approval${approvals === 1 ? '' : 's'}`));
    tab.append(button('×', 'closeTab', { loop: t.id }, 'close'));
    tabs.append(tab);
  }
  ($('stop-all') as HTMLButtonElement).disabled = !state.tabs.some((t) => t.runningCommandId);
}

function banner(level: 'warn' | 'error' | 'info', text: string, ...extra: Node[]): HTMLElement {
  const box = el('div', { class: `banner ${level}`, role: level === 'error' ? 'alert' : 'status' }, text);
  for (const node of extra) box.append(node);
  return box;
}

function renderBanners(): void {
  const box = $('banners');
  box.replaceChildren();
  if (!state.provider.ready && state.provider.message) {
    box.append(banner('error', state.provider.message, button('Open Settings', 'configure', { what: 'settings' }, 'secondary'), button('Set LLM API Key', 'configure', { what: 'apiKey' }, 'secondary')));
  }
  if (state.skillsNote) box.append(banner('warn', state.skillsNote));
  if (state.faulted) box.append(banner('error', `The session registry stopped accepting changes: ${state.faulted}. Stop still works; reload the window to start over.`));
  if (state.stopped) box.append(banner('info', 'The chat was shut down.'));
  if (state.notice) box.append(banner(state.notice.level === 'error' ? 'error' : 'info', state.notice.text));
  renderUsage();
}

/** The small usage line: the tokens the provider reported for this panel's requests. */
function renderUsage(): void {
  const line = $('usage');
  const usage = state.usage;
  line.hidden = usage === null;
  line.textContent = usage ? `tokens: ${usage.inputTokens} in · ${usage.outputTokens} out` : '';
  line.title = 'Tokens used by this chat\'s model requests, as the provider reported them';
}

function renderToolbar(tab: TabView | undefined): void {
  const mode = $<HTMLSelectElement>('mode');
  const model = $<HTMLSelectElement>('model');
  const effort = $<HTMLSelectElement>('effort');
  const pending = tab?.picker.pending ?? null;
  const fill = (select: HTMLSelectElement, options: { value: string; label: string }[], value: string) => {
    const signature = JSON.stringify([options, value]);
    if (select.dataset.signature === signature && select.value === value) return;
    // A loop, not replaceChildren(...options): an endpoint can list more models than a call has arguments.
    select.replaceChildren();
    for (const o of options) select.append(el('option', { value: o.value }, o.label));
    select.value = value;
    select.dataset.signature = signature;
  };
  const modes = [...state.modes];
  if (tab && !modes.includes(tab.mode)) modes.push(tab.mode);
  fill(mode, modes.map((m) => ({ value: m, label: m })), tab?.mode ?? 'sop');
  const models = state.models.map((m) => ({ value: m.name, label: m.label }));
  if (tab && !models.some((m) => m.value === tab.model.name)) models.push({ value: tab.model.name, label: tab.model.name });
  fill(model, models, tab?.model.name ?? 'default');
  fill(effort, [{ value: '', label: 'default' }, ...state.efforts.map((e) => ({ value: e, label: e }))], tab?.model.effort ?? '');
  for (const s of [mode, model, effort]) s.disabled = !tab || pending !== null || tab.state === 'closing' || tab.state === 'exited';
  const status = $('picker-status');
  status.className = tab?.picker.error ? 'error' : '';
  status.textContent = pending ? `changing ${pending.what === 'mode' ? 'mode' : 'model'} to ${pending.value}…` : tab?.picker.error ?? '';
  const running = Boolean(tab?.runningCommandId);
  $('status').textContent = !tab ? '' : tab.stopping ? 'Stopping…' : `${tab.state}${tab.queued.length ? ` · ${tab.queued.length} queued` : ''}`;
  $('status').className = tab?.stopping ? 'stopping' : '';
  $('stop').hidden = !running || Boolean(tab?.stopping);
  const notice = $('tab-notice');
  if (tab?.notice) {
    notice.hidden = false;
    notice.className = tab.notice.level;
    notice.textContent = tab.notice.text;
  } else {
    notice.hidden = true;
    notice.textContent = '';
  }
  const usable = Boolean(tab) && !tab!.hidden && tab!.state !== 'closing' && tab!.state !== 'exited' && !state.stopped;
  $<HTMLTextAreaElement>('input').disabled = !usable;
  $<HTMLButtonElement>('send').disabled = !usable;
}

function renderTranscript(tab: TabView | undefined): void {
  const box = $('transcript');
  const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
  const top = box.scrollTop;
  box.querySelectorAll<HTMLElement>('[data-scroll-key]').forEach((n) => void ui.scroll.set(n.dataset.scrollKey!, n.scrollTop));
  box.replaceChildren();
  if (!tab || tab.hidden) {
    box.append(el('div', { class: 'empty' }, 'No conversation is open. ', button('Start a new conversation', 'newConversation', {}, 'link')));
  } else {
    if (tab.restored.length > 0) {
      const r = el('div', { class: 'restored' }, el('div', { class: 'note' }, 'Restored from an earlier window. These turns are shown for reference: nothing in them ran in this window; the assistant sees them as earlier conversation.'));
      for (const t of tab.restored) {
        r.append(el('div', { class: 'user' }, el('div', { class: 'bubble' }, t.user)));
        const answer = el('div', { class: `answer ${t.kind}` });
        markdownNodes(parseMarkdown(t.answer), answer);
        r.append(answer);
      }
      box.append(r);
    }
    if (tab.turns.length === 0 && tab.restored.length === 0) {
      box.append(el('div', { class: 'empty' }, 'Ask for something: a plan is written with your workspace\'s skills, checked, and run, with approval before anything has side effects. Switch the mode to "loop" to work one tool at a time.'));
    }
    for (const turn of tab.turns) box.append(turnView(tab, turn));
  }
  box.querySelectorAll<HTMLElement>('[data-scroll-key]').forEach((n) => void (n.scrollTop = ui.scroll.get(n.dataset.scrollKey!) ?? 0));
  box.scrollTop = atBottom ? box.scrollHeight : top;
}

let scheduled = false;
function render(): void {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    const active = document.activeElement as HTMLElement | null;
    const focusKey = active?.dataset.focusKey;
    const selection = active instanceof HTMLInputElement ? ([active.selectionStart, active.selectionEnd] as const) : null;
    const tab = activeTab();
    renderTabs();
    renderBanners();
    renderToolbar(tab);
    renderTranscript(tab);
    if (focusKey) {
      const again = document.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focusKey)}"]`);
      if (again) {
        again.focus();
        if (again instanceof HTMLInputElement && selection) again.setSelectionRange(selection[0], selection[1]);
      }
    }
    document.body.dataset.rendered = String(Number(document.body.dataset.rendered ?? '0') + 1);
  });
}

// ------------------------------------------------------------------ input

function send(): void {
  const input = $<HTMLTextAreaElement>('input');
  const text = input.value;
  const loopId = state.activeLoopId;
  if (!text.trim() || !loopId) return;
  post({ type: 'send', loopId, text });
  input.value = '';
  vscode.setState({ draft: '' });
}

document.addEventListener('click', (event) => {
  const target = (event.target as HTMLElement | null)?.closest<HTMLElement>('[data-action]');
  if (!target) return;
  const d = target.dataset;
  switch (d.action) {
    case 'selectTab':
      // The highlight moves only when the host reports ActiveLoopChanged.
      if (d.loop && d.loop !== state.activeLoopId) post({ type: 'selectTab', loopId: d.loop });
      return;
    case 'closeTab':
      event.stopPropagation();
      if (d.loop) post({ type: 'closeTab', loopId: d.loop });
      return;
    case 'newConversation':
      post({ type: 'newConversation' });
      return;
    case 'cancelQueued':
      if (d.loop && d.command) post({ type: 'cancelQueued', loopId: d.loop, commandId: d.command });
      return;
    case 'approve':
    case 'alwaysApprove':
      if (d.id) post({ type: 'approval', id: d.id, decision: d.action });
      return;
    case 'deny':
      if (d.id) post({ type: 'approval', id: d.id, decision: 'deny', reason: (ui.inputs.get(`deny:${d.id}`) ?? '').trim() });
      return;
    case 'reviewRun':
      if (d.id) post({ type: 'review', id: d.id, decision: 'run' });
      return;
    case 'reviewEdit':
      if (d.id) post({ type: 'review', id: d.id, decision: 'edit' });
      return;
    case 'reviewCancelEdit':
      if (d.id) post({ type: 'review', id: d.id, decision: 'cancelEdit' });
      return;
    case 'reviewReject':
      if (d.id) post({ type: 'review', id: d.id, decision: 'reject', reason: (ui.inputs.get(`reject:${d.id}`) ?? '').trim() });
      return;
    case 'continueInLoop':
      if (d.loop && d.command) post({ type: 'continueInLoop', loopId: d.loop, commandId: d.command });
      return;
    case 'retry':
      if (d.loop && d.command) post({ type: 'retry', loopId: d.loop, commandId: d.command });
      return;
    case 'openPlan':
      event.preventDefault();
      if (d.loop && d.command && d.attempt) post({ type: 'openPlan', loopId: d.loop, commandId: d.command, attempt: Number(d.attempt) });
      return;
    case 'toggleDiff':
      event.preventDefault();
      if (d.key) {
        if (ui.diff.has(d.key)) ui.diff.delete(d.key);
        else ui.diff.add(d.key);
        render();
      }
      return;
    case 'toggleValue':
      if (d.key) {
        if (ui.expanded.has(d.key)) ui.expanded.delete(d.key);
        else ui.expanded.add(d.key);
        render();
      }
      return;
    case 'configure':
      if (d.what === 'settings' || d.what === 'apiKey') post({ type: 'configure', what: d.what });
      return;
    default:
      return;
  }
});

document.addEventListener('keydown', (event) => {
  const target = event.target as HTMLElement | null;
  if (event.key === 'Enter' && target?.classList.contains('tab')) {
    target.click();
    event.preventDefault();
  }
});

document.addEventListener('toggle', (event) => {
  const details = event.target as HTMLElement;
  if (!(details instanceof HTMLDetailsElement) || !details.dataset.key) return;
  // Only what the user changed is remembered; otherwise the newest attempt stays the open one.
  if (String(details.open) === details.dataset.defaultOpen) ui.open.delete(details.dataset.key);
  else ui.open.set(details.dataset.key, details.open);
}, true);

document.addEventListener('input', (event) => {
  const target = event.target as HTMLElement;
  if (target instanceof HTMLInputElement && target.dataset.input) ui.inputs.set(target.dataset.input, target.value);
  if (target.id === 'input') vscode.setState({ draft: (target as HTMLTextAreaElement).value });
});

$('composer').addEventListener('submit', (event) => {
  event.preventDefault();
  send();
});
$('input').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send();
  }
});
$('new').addEventListener('click', () => post({ type: 'newConversation' }));
$('stop-all').addEventListener('click', () => post({ type: 'stopAll' }));
$('stop').addEventListener('click', () => {
  if (state.activeLoopId) post({ type: 'stop', loopId: state.activeLoopId });
});
$('mode').addEventListener('change', () => {
  const tab = activeTab();
  const select = $<HTMLSelectElement>('mode');
  if (!tab) return;
  const value = select.value;
  // The picker keeps showing the committed mode until the host reports the change.
  select.value = tab.mode;
  if (value !== tab.mode) post({ type: 'setMode', loopId: tab.id, mode: value });
});
$('model').addEventListener('change', () => {
  const tab = activeTab();
  const select = $<HTMLSelectElement>('model');
  if (!tab) return;
  const value = select.value;
  select.value = tab.model.name;
  if (value !== tab.model.name) post({ type: 'setInference', loopId: tab.id, model: value });
});
$('effort').addEventListener('change', () => {
  const tab = activeTab();
  const select = $<HTMLSelectElement>('effort');
  if (!tab) return;
  const value = select.value;
  select.value = tab.model.effort ?? '';
  if (value && value !== (tab.model.effort ?? '')) post({ type: 'setInference', loopId: tab.id, effort: value as 'low' });
});

function isToWebview(x: unknown): x is ToChatWebview {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as { type?: unknown; state?: unknown; events?: unknown };
  return (m.type === 'state' && typeof m.state === 'object' && m.state !== null) || (m.type === 'events' && Array.isArray(m.events));
}

window.addEventListener('message', (event: MessageEvent) => {
  const message: unknown = event.data;
  if (!isToWebview(message)) return;
  if (message.type === 'state') state = message.state;
  else for (const e of message.events) state = applyPanelEvent(state, e);
  render();
});

const saved = vscode.getState() as { draft?: unknown } | undefined;
if (saved && typeof saved.draft === 'string') $<HTMLTextAreaElement>('input').value = saved.draft;
render();
post({ type: 'ready' });
