/**
 * The dependency DAG of a plan as a graphlib graph, and its DOT, Mermaid and JSON renderings
 * (`lightsop graph`, the editor's graph view). Node ids are `n<index>` because variable names
 * may be any text, including names such as `__proto__` that plain-object maps cannot hold.
 */
import { Graph } from '@dagrejs/graphlib';
import type { Symbols } from '../validate/symbols';

export interface GraphNode {
  readonly id: string;
  readonly name: string;
  readonly command: string | null;
  /** 1-based line of the declaration. */
  readonly line: number;
  readonly comment: string;
}

export interface GraphEdge {
  /** The dependency. */
  readonly from: string;
  /** The declaration that uses it. */
  readonly to: string;
}

export interface PlanGraph {
  readonly nodes: readonly GraphNode[];
  readonly edges: readonly GraphEdge[];
}

/** Builds the dependency graph: one node per declared name, an edge from each dependency to its user. */
export function buildPlanGraph(symbols: Symbols): Graph<unknown, GraphNode, GraphEdge> {
  const g = new Graph<unknown, GraphNode, GraphEdge>({ directed: true });
  const ids = new Map<string, string>();
  let i = 0;
  for (const [name, d] of symbols.declarations) {
    const id = `n${i++}`;
    ids.set(name, id);
    g.setNode(id, { id, name, command: d.command?.name ?? null, line: d.lineNumber, comment: d.comment });
  }
  for (const [name, d] of symbols.declarations) {
    for (const dep of d.dependencies) {
      const from = ids.get(dep);
      if (from) g.setEdge(from, ids.get(name)!, { from: dep, to: name });
    }
  }
  return g;
}

/** The graph as plain data (stable order: declarations in source order). */
export function planGraphData(symbols: Symbols): PlanGraph {
  const g = buildPlanGraph(symbols);
  const nodes = g.nodes().map((id) => g.node(id)!);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const edges = g.edges().map((e) => ({ from: byId.get(e.v)!.name, to: byId.get(e.w)!.name }));
  return { nodes, edges };
}

function dotString(s: string): string {
  return '"' + s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r?\n/g, '\\n') + '"';
}

/** Graphviz DOT. */
export function toDot(symbols: Symbols): string {
  const data = planGraphData(symbols);
  const out = ['digraph plan {', '  rankdir=LR;', '  node [shape=box, fontname="Helvetica"];'];
  for (const n of data.nodes) out.push(`  ${dotString(n.name)} [label=${dotString(`@${n.name}\n${n.command ?? ''}`)}];`);
  for (const e of data.edges) out.push(`  ${dotString(e.from)} -> ${dotString(e.to)};`);
  out.push('}');
  return out.join('\n') + '\n';
}

function mermaidText(s: string): string {
  return s.replace(/&/g, '#amp;').replace(/"/g, '#quot;').replace(/</g, '#lt;').replace(/>/g, '#gt;');
}

/** Mermaid flowchart. */
export function toMermaid(symbols: Symbols): string {
  const data = planGraphData(symbols);
  const id = new Map(data.nodes.map((n) => [n.name, n.id]));
  const out = ['flowchart TD'];
  for (const n of data.nodes) out.push(`  ${n.id}["@${mermaidText(n.name)}<br/>${mermaidText(n.command ?? '')}"]`);
  for (const e of data.edges) out.push(`  ${id.get(e.from)} --> ${id.get(e.to)}`);
  return out.join('\n') + '\n';
}
