/** `lightsop graph`: the dependency DAG of a plan as DOT, Mermaid or JSON. */
import { analyzePlan, planGraphData, toDot, toMermaid } from '@lightsop/core';
import { CliError } from '../errors';
import { expandPaths, readPlanFile, stripBom } from '../files';
import type { Io } from '../io';

const USAGE = 2;

export async function graphCommand(plan: string, options: { format: 'dot' | 'mermaid' | 'json' }, io: Io): Promise<number> {
  const files = expandPaths([plan], io.cwd, USAGE);
  if (files.length !== 1) throw new CliError(`${plan}: give exactly one plan file`, USAGE);
  const file = files[0]!;
  const { text } = stripBom(readPlanFile(file, USAGE));
  const analysis = analyzePlan(text);
  if (analysis.plan.english) throw new CliError(`${file.display}: an english script has no dependency graph until a plan is generated from it`, USAGE);
  for (const d of analysis.diagnostics) {
    if (d.severity === 'error') io.stderr(`${file.display}:${d.range.line}:${d.range.column}: warning: the plan has errors (${d.code}); the graph shows what parsed\n`);
    if (d.severity === 'error') break;
  }
  if (options.format === 'dot') io.stdout(toDot(analysis.symbols));
  else if (options.format === 'mermaid') io.stdout(toMermaid(analysis.symbols));
  else io.stdout(JSON.stringify(planGraphData(analysis.symbols), null, 2) + '\n');
  return 0;
}
