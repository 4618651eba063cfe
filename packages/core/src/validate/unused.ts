/**
 * `unused-variable` (4.5): a warning for an `assign` nothing reads, info for other steps, which
 * may exist for their side effects. Final steps and `lastAnswer` are exempt.
 */
import type { Diagnostic } from '../diagnostics/diagnostic';
import type { Symbols } from './symbols';

const EXEMPT_COMMANDS = new Set(['final_answer', 'cannot_complete']);

export function checkUnused(symbols: Symbols): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const [name, d] of symbols.declarations) {
    if (symbols.referenced.has(name) || name === 'lastAnswer') continue;
    if (d.command && EXEMPT_COMMANDS.has(d.command.name)) continue;
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
