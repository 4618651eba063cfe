/**
 * `unused-variable` (4.5): a warning for an `assign` nothing reads, info for other steps, which
 * may exist for their side effects. Final steps and `lastAnswer` are exempt.
 */
import type { Plan } from '../../../../packages/core/src/ast';
import type { Diagnostic } from '../../../../packages/core/src/diagnostics/diagnostic';
import { isFinalCommand } from '../../../../packages/core/src/commands/surface';
import type { Symbols } from './symbols';

export function checkUnused(plan: Plan, symbols: Symbols): Diagnostic[] {
  // Mark the declarations that some `$` reference uses (any declaration's, duplicates included).
  const used = new Uint8Array(symbols.declarations.size);
  for (const d of plan.declarations) {
    for (const name of d.dependencies) {
      const i = symbols.indexOf.get(name);
      if (i !== undefined) used[i] = 1;
    }
  }
  const out: Diagnostic[] = [];
  let i = 0;
  for (const [name, d] of symbols.declarations) {
    if (used[i++] || name === 'lastAnswer') continue;
    if (d.command && isFinalCommand(d.command.name)) continue;
    const isAssign = d.command?.name === 'assign';
    out.push({
      code: 'unused-variable',
      severity: isAssign ? 'warning' : 'info',
      message: `Variable '${name}' is never used`,
      range: d.nameRange,
      data: { name },
    });
  }
  return out;
}
