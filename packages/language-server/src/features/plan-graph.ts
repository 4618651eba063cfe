/**
 * The dependency graph of a plan for the editor's graph view (`lightsop/planGraph`): the core's
 * graph data, plus each declaration's range so the view can reveal it.
 */
import { planGraphData, type PlanGraph } from '@lightsop/core';
import type { AnalyzedDocument } from '../documents';
import type { PlanGraphResult } from '../shared-protocol';

export function getPlanGraph(doc: AnalyzedDocument): PlanGraphResult {
  const graph: PlanGraph = planGraphData(doc.analysis.symbols);
  const ranges = graph.nodes.map((n) => doc.positions.range(doc.analysis.symbols.declarations.get(n.name)!.nameRange));
  return {
    version: doc.version,
    nodes: graph.nodes.map((n, i) => ({ ...n, range: ranges[i]! })),
    edges: [...graph.edges],
  };
}
