/**
 * The Plan Graph page script (bundled for the browser into dist/graph-webview.js). It lays out
 * the plan's dependency DAG with dagre, draws it as SVG, colours nodes by status, and asks the
 * extension to reveal a declaration when its node is clicked (or activated with Enter). It keeps
 * the last states per variable name, so a graph update after an edit keeps the colours.
 */
import dagre from '@dagrejs/dagre';
import type { FromWebview, GraphEdgeData, GraphNodeData, NodeState, NodeStatus, ToWebview } from './protocol';

interface VsCodeApi {
  postMessage(message: FromWebview): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const SVG_NS = 'http://www.w3.org/2000/svg';
const NODE_HEIGHT = 46;
const CHAR_WIDTH = 7.4;
const MIN_WIDTH = 110;
const MAX_WIDTH = 280;
const MARGIN = 16;

const vscode = acquireVsCodeApi();
const states = new Map<string, NodeState>();
let nodes: readonly GraphNodeData[] = [];
let edges: readonly GraphEdgeData[] = [];
let note: string | undefined;

const $ = (id: string) => document.getElementById(id)!;

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, parent?: Element): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  parent?.appendChild(el);
  return el;
}

function shorten(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

function nodeWidth(n: GraphNodeData): number {
  const text = Math.max(n.name.length + 1, (n.command ?? '').length);
  return Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, Math.round(text * CHAR_WIDTH) + 24));
}

function statusOf(name: string): NodeStatus {
  return states.get(name)?.status ?? 'pending';
}

function tooltip(n: GraphNodeData): string {
  const parts = [`@${n.name} ${n.command ?? ''}`.trim(), `line ${n.line}`];
  if (n.comment) parts.push(n.comment);
  const s = states.get(n.name);
  if (s && s.status !== 'pending') parts.push(`${s.status}${s.value ? `: ${s.value}` : ''}`);
  return parts.join('\n');
}

function applyStatus(g: SVGGElement, n: GraphNodeData): void {
  const status = statusOf(n.name);
  g.setAttribute('class', `node status-${status}`);
  g.setAttribute('data-status', status);
  g.querySelector('title')!.textContent = tooltip(n);
  g.setAttribute('aria-label', `${n.name}: ${status}`);
}

function summary(): string {
  if (nodes.length === 0) return '';
  const counts = new Map<NodeStatus, number>();
  for (const n of nodes) counts.set(statusOf(n.name), (counts.get(statusOf(n.name)) ?? 0) + 1);
  const parts = [`${nodes.length} declaration${nodes.length === 1 ? '' : 's'}`];
  for (const s of ['running', 'success', 'fail', 'canceled', 'undefined'] as const) {
    if (counts.get(s)) parts.push(`${counts.get(s)} ${s}`);
  }
  return parts.join(' · ');
}

/** Lays out and draws the whole graph. */
function render(): void {
  const canvas = $('canvas');
  canvas.replaceChildren();
  $('summary').textContent = summary();
  const noteEl = $('note');
  noteEl.hidden = !note;
  noteEl.textContent = note ?? '';
  if (nodes.length === 0) return;

  const g = new dagre.graphlib.Graph<object, { width: number; height: number; x?: number; y?: number }, { points?: { x: number; y: number }[] }>();
  g.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 46, marginx: MARGIN, marginy: MARGIN });
  g.setDefaultEdgeLabel(() => ({}));
  // Node ids are indexes: variable names may be any text (even "__proto__").
  const index = new Map<string, string>();
  nodes.forEach((n, i) => {
    index.set(n.name, `n${i}`);
    g.setNode(`n${i}`, { width: nodeWidth(n), height: NODE_HEIGHT });
  });
  for (const e of edges) {
    const from = index.get(e.from);
    const to = index.get(e.to);
    if (from && to) g.setEdge(from, to);
  }
  dagre.layout(g);
  const { width = 0, height = 0 } = g.graph() as { width?: number; height?: number };

  const root = svg('svg', { width: Math.ceil(width), height: Math.ceil(height), viewBox: `0 0 ${Math.ceil(width)} ${Math.ceil(height)}`, role: 'img', 'aria-label': 'Plan dependency graph' }, canvas);
  const defs = svg('defs', {}, root);
  const marker = svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, defs);
  svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrow' }, marker);

  const edgeLayer = svg('g', { class: 'edges' }, root);
  for (const id of g.edges()) {
    const points = g.edge(id)?.points ?? [];
    if (points.length < 2) continue;
    const d = points.map((p, i) => `${i === 0 ? 'M' : 'L'} ${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join(' ');
    const path = svg('path', { d, class: 'edge', 'marker-end': 'url(#arrow)' }, edgeLayer);
    path.setAttribute('data-from', nodes[Number(id.v.slice(1))]!.name);
    path.setAttribute('data-to', nodes[Number(id.w.slice(1))]!.name);
  }

  const nodeLayer = svg('g', { class: 'nodes' }, root);
  nodes.forEach((n, i) => {
    const box = g.node(`n${i}`);
    const w = box.width;
    const x = (box.x ?? 0) - w / 2;
    const y = (box.y ?? 0) - NODE_HEIGHT / 2;
    const group = svg('g', { transform: `translate(${x.toFixed(1)} ${y.toFixed(1)})`, tabindex: 0, role: 'button', 'data-name': n.name, 'data-line': n.line }, nodeLayer);
    svg('title', {}, group);
    svg('rect', { width: w, height: NODE_HEIGHT, rx: 7, ry: 7 }, group);
    const maxChars = Math.floor((w - 16) / CHAR_WIDTH);
    svg('text', { x: w / 2, y: 19, 'text-anchor': 'middle', class: 'name' }, group).textContent = shorten(`@${n.name}`, maxChars);
    svg('text', { x: w / 2, y: 36, 'text-anchor': 'middle', class: 'command' }, group).textContent = shorten(n.command ?? '(no command)', maxChars);
    const reveal = () => vscode.postMessage({ type: 'reveal', name: n.name, line: n.line });
    group.addEventListener('click', reveal);
    group.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        reveal();
      }
    });
    applyStatus(group, n);
  });
}

/** Updates the colours of drawn nodes without a new layout. */
function refreshStates(): void {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  for (const el of Array.from(document.querySelectorAll<SVGGElement>('g.nodes > g'))) {
    const n = byName.get(el.getAttribute('data-name') ?? '');
    if (n) applyStatus(el, n);
  }
  $('summary').textContent = summary();
}

function setStates(list: readonly NodeState[], reset: boolean): void {
  if (reset) states.clear();
  for (const s of list) states.set(s.name, s);
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const m = event.data;
  if (!m || typeof m !== 'object') return;
  if (m.type === 'graph') {
    $('title').textContent = `Plan Graph: ${m.title}`;
    nodes = m.nodes;
    edges = m.edges;
    note = m.note;
    setStates(m.states, true);
    render();
  } else if (m.type === 'states') {
    setStates(m.states, m.reset === true);
    refreshStates();
  }
});

vscode.postMessage({ type: 'ready' });
