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
  const data = planGraphData(symbols);
  const ids = new Map<string, string>();
  for (const n of data.nodes) {
    ids.set(n.name, n.id);
    g.setNode(n.id, n);
  }
  for (const e of data.edges) g.setEdge(ids.get(e.from)!, ids.get(e.to)!, e);
  return g;
}

/**
 * The graph as plain data (stable order: declarations in source order, then each declaration's
 * dependencies in order, each pair once). Built with maps rather than a graphlib graph, which
 * costs seconds at 200k declarations.
 */
export function planGraphData(symbols: Symbols): PlanGraph {
  const nodes: GraphNode[] = [];
  const index = new Map<string, number>();
  for (const [name, d] of symbols.declarations) {
    const id = `n${nodes.length}`;
    index.set(name, nodes.length);
    nodes.push({ id, name, command: d.command?.name ?? null, line: d.lineNumber, comment: d.comment });
  }
  const edges: GraphEdge[] = [];
  const seen = new Set<number>();
  for (const [name, d] of symbols.declarations) {
    seen.clear();
    for (const dep of d.dependencies) {
      const from = index.get(dep);
      if (from === undefined || seen.has(from)) continue;
      seen.add(from);
      edges.push({ from: dep, to: name });
    }
  }
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
