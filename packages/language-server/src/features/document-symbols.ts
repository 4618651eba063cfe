/**
 * Document symbols (the outline): one symbol per declaration, in source order, named after its
 * variable with its command as detail. Later duplicates are listed too, marked as such, since
 * they are still lines the author wrote.
 */
import { ASSIGN, isFinalCommand } from '@lightsop/core';
import { SymbolKind, type DocumentSymbol } from 'vscode-languageserver';
import type { AnalyzedDocument } from '../documents';
import { blockStart } from './locate';

export function getDocumentSymbols(doc: AnalyzedDocument): DocumentSymbol[] {
  const { plan, symbols } = doc.analysis;
  const out: DocumentSymbol[] = [];
  for (const d of plan.declarations) {
    const command = d.command?.name ?? '';
    const duplicate = d.name !== '' && symbols.declarations.get(d.name) !== d;
    const detail = [command, duplicate ? '(duplicate)' : ''].filter(Boolean).join(' ');
    out.push({
      // Clients reject empty symbol names.
      name: d.name === '' ? '@ (missing name)' : d.name,
      detail,
      kind: isFinalCommand(command) ? SymbolKind.Event : command === ASSIGN ? SymbolKind.Constant : SymbolKind.Variable,
      range: doc.positions.range({ start: blockStart(d), end: Math.max(d.range.end, d.nameRange.end) }),
      selectionRange: doc.positions.range(d.nameRange),
    });
  }
  return out;
}
