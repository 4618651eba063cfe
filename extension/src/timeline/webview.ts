/**
 * The Run Timeline page script (bundled for the browser into dist/timeline-webview.js): one row
 * per command call, a bar from its start to its end on a shared time axis, coloured by status,
 * the critical path outlined; clicking a bar (or Enter on it) asks the extension to reveal the
 * declaration. All text goes in through textContent and attributes, never as HTML.
 */
import type { FromTimelineWebview, ToTimelineWebview } from './protocol';
import { axisTicks, formatMs, type Timeline, type TimelineBar } from './timeline-data';

interface VsCodeApi {
  postMessage(message: FromTimelineWebview): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const $ = (id: string) => document.getElementById(id)!;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls: string, text?: string, parent?: Element): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  parent?.appendChild(e);
  return e;
}

function tooltip(b: TimelineBar): string {
  const lines = [`@${b.variable} ${b.command}`, `${formatMs(b.start)} → ${formatMs(b.end)} (${formatMs(b.end - b.start)})`, b.status === 'running' ? 'unfinished in the record' : b.status];
  if (b.value) lines.push(b.value);
  if (b.critical) lines.push('on the critical path');
  if (b.line !== null) lines.push(`line ${b.line}`);
  return lines.join('\n');
}

function render(t: Timeline, source: string): void {
  $('title').textContent = `Run Timeline: ${t.title}`;
  const counts = new Map<string, number>();
  for (const b of t.bars) counts.set(b.status, (counts.get(b.status) ?? 0) + 1);
  const parts = [`${t.bars.length} command${t.bars.length === 1 ? '' : 's'}`, formatMs(t.durationMs)];
  if (t.criticalPath.length > 0) parts.push(`critical path ${t.criticalPath.map((v) => `@${v}`).join(' → ')} (${formatMs(t.criticalMs)})`);
  if (t.unfinished) parts.push('the record stops before the run ended');
  else if (t.aborted) parts.push('stopped');
  $('summary').textContent = parts.join(' · ');
  $('source').textContent = source;
  const note = $('note');
  const chart = $('chart');
  chart.replaceChildren();
  if (t.bars.length === 0) {
    note.hidden = false;
    note.textContent = 'No command ran in this run.';
    return;
  }
  note.hidden = true;
  const span = Math.max(t.durationMs, 1);
  const pct = (ms: number) => `${Math.min(100, Math.max(0, (ms / span) * 100))}%`;
  // About one label per 90 pixels of the track (the label column takes up to 35%).
  const ticks = axisTicks(span, Math.max(1, Math.min(10, Math.floor((chart.clientWidth * 0.65 - 24) / 90))));
  const axisRow = el('div', 'row', undefined, chart);
  el('div', 'label', '', axisRow);
  const axis = el('div', 'axis', undefined, axisRow);
  for (const tick of ticks) {
    if (tick > span) break;
    // A label near the right end ends at its tick, so that it stays inside the page.
    const s = el('span', tick / span > 0.9 ? 'end' : '', formatMs(tick), axis);
    s.style.left = pct(tick);
  }
  const step = ticks.length > 1 ? (ticks[1]! / span) * 100 : 100;
  for (const b of t.bars) {
    const row = el('div', `row${b.critical ? ' critical' : ''}`, undefined, chart);
    const label = el('div', 'label', undefined, row);
    el('span', 'name', `@${b.variable}`, label);
    el('span', 'command', b.command, label);
    label.title = b.raw;
    const track = el('div', 'track', undefined, row);
    track.style.backgroundSize = `${step}% 100%`;
    const bar = el('button', `bar status-${b.status}${b.critical ? ' critical' : ''}`, undefined, track);
    bar.type = 'button';
    bar.style.left = `min(${pct(b.start)}, calc(100% - 3px))`;
    bar.style.width = `max(3px, ${pct(b.end - b.start)})`;
    bar.title = tooltip(b);
    bar.setAttribute('aria-label', tooltip(b).replace(/\n/g, ', '));
    bar.dataset.seq = String(b.seq);
    bar.addEventListener('click', () => vscode.postMessage({ type: 'reveal', seq: b.seq }));
  }
}

window.addEventListener('message', (event: MessageEvent<ToTimelineWebview>) => {
  const m = event.data;
  if (m.type === 'timeline') render(m.timeline, m.source);
  else if (m.type === 'empty') {
    $('chart').replaceChildren();
    $('summary').textContent = '';
    $('source').textContent = '';
    const note = $('note');
    note.hidden = false;
    note.textContent = m.note;
  }
});
vscode.postMessage({ type: 'ready' });
