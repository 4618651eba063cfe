/**
 * The outline of a plan for a client's own UI (`lightsop/planOutline`): the declarations that
 * can run with their ranges, the `#!english` header, and the errors, all converted by `to-lsp.ts`.
 * The VS Code extension places its CodeLens, inline results and variables view from it, and asks
 * it before Run Plan, instead of parsing the plan again.
 */
import type { AnalyzedDocument } from '../documents';
import type { PlanOutlineDeclaration, PlanOutlineResult } from '../shared-protocol';

export function getPlanOutline(doc: AnalyzedDocument): PlanOutlineResult {
  const { plan, diagnostics } = doc.analysis;
  const seen = new Set<string>();
  const declarations: PlanOutlineDeclaration[] = [];
  for (const d of plan.declarations) {
    // The first declaration of a name wins (4.3); later duplicates never run.
    if (d.name === '' || seen.has(d.name)) continue;
    seen.add(d.name);
    declarations.push({ name: d.name, command: d.command?.name ?? null, nameRange: doc.positions.range(d.nameRange), range: doc.positions.range(d.range) });
  }
  return {
    version: doc.version,
    english: plan.english ? doc.positions.range(plan.english.headerRange) : null,
    declarations,
    errors: diagnostics.filter((d) => d.severity === 'error').map((d) => ({ code: d.code, message: d.message, range: doc.positions.range(d.range) })),
  };
}
