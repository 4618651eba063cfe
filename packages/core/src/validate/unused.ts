/**
 * `unused-variable` (4.5): a warning for an `assign` nothing reads, info for other steps, which
 * may exist for their side effects. Final steps and `lastAnswer` are exempt.
 */
import type { Diagnostic } from '../diagnostics/diagnostic';
import { isFinalCommand } from '../commands/surface';
import { TokenKind, type SyntaxTree } from '../syntax/tree';

export function checkUnused(tree: SyntaxTree): Diagnostic[] {
  const { argKind, argTarget, symbolDecl, commandId, commandNames } = tree.a;
  // Mark the declarations that some `$` reference uses (any declaration's, duplicates included).
  const used = new Uint8Array(tree.symbolCount);
  for (let g = 0; g < argKind.length; g++) if (argKind[g] === TokenKind.Reference && argTarget[g] !== -1) used[argTarget[g]!] = 1;
  // What each command is, once per distinct command: 1 final, 2 assign, 0 other.
  const role = new Uint8Array(commandNames.length);
  for (let c = 0; c < commandNames.length; c++) role[c] = isFinalCommand(commandNames[c]!) ? 1 : commandNames[c] === 'assign' ? 2 : 0;
  const out: Diagnostic[] = [];
  for (let s = 0; s < tree.symbolCount; s++) {
    if (used[s]) continue;
    const i = symbolDecl[s]!;
    const id = commandId[i]!;
    if (id !== -1 && role[id] === 1) continue;
    const name = tree.name(i);
    if (name === 'lastAnswer') continue;
    out.push({
      code: 'unused-variable',
      severity: id !== -1 && role[id] === 2 ? 'warning' : 'info',
      message: `Variable '${name}' is never used`,
      range: tree.nameRange(i),
      data: { name },
    });
  }
  return out;
}
