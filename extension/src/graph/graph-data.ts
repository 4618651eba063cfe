/**
 * The graph the Plan Graph page draws, in the page's terms (protocol.ts): from the language
 * server's `lightsop/planGraph` answer for a plan in an editor, or, for the plan a model wrote
 * for an `#!english` script (a text in no editor and unknown to the server), from core. Node
 * lines are the editor's, 1-based as the page shows them. No `vscode` here.
 */
import { analyzePlan, planGraphData } from '@lightsop/core';
import { displayPosition, displayPositionAt, textDocument } from '../positions';
import type { PlanGraphResult } from '../server-protocol';
import type { GraphEdgeData, GraphNodeData } from './protocol';

export interface PageGraph {
  readonly nodes: readonly GraphNodeData[];
  readonly edges: readonly GraphEdgeData[];
  /** Where a click on a node goes: the 0-based editor line of its `@name`; empty when the plan is not the document's. */
  readonly reveal: ReadonlyMap<string, number>;
}

/** The server's graph of an open plan. */
export function graphFromServer(result: PlanGraphResult): PageGraph {
  const reveal = new Map<string, number>();
  const nodes = result.nodes.map((n) => {
    reveal.set(n.name, n.range.start.line);
    return { name: n.name, command: n.command, line: displayPosition(n.range.start).line, comment: n.comment };
  });
  return { nodes, edges: result.edges.map((e) => ({ from: e.from, to: e.to })), reveal };
}

/**
 * The graph of a plan a model generated: not a document, so nothing to ask the server about (as
 * the chat panel does for its plans, it is analysed here). Its nodes reveal nothing: their lines
 * are the generated plan's, not the script's.
 */
export function graphOfGeneratedPlan(text: string): PageGraph {
  const analysis = analyzePlan(text);
  const positions = textDocument(text);
  const data = planGraphData(analysis.symbols);
  const nodes = data.nodes.map((n) => {
    const at = analysis.symbols.declarations.get(n.name)?.nameRange.start;
    return { name: n.name, command: n.command, line: at === undefined ? 0 : displayPositionAt(positions, at).line, comment: n.comment };
  });
  return { nodes, edges: data.edges.map((e) => ({ from: e.from, to: e.to })), reveal: new Map() };
}
