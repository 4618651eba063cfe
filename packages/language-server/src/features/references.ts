/**
 * Find references: every `$name` use of the variable at the cursor, plus its declarations
 * (duplicates included, since they name the same variable) when the client asks for them.
 * Works for undeclared names too, so a misspelt variable's uses can be found.
 */
import type { Location, Position } from 'vscode-languageserver';
import type { AnalyzedDocument } from '../documents';
import { occurrences, symbolAt } from './locate';

/** The locations of a variable's uses (and declarations), in source order. */
export function getReferences(doc: AnalyzedDocument, position: Position, includeDeclaration: boolean): Location[] {
  const symbol = symbolAt(doc.analysis.plan, doc.positions.offset(position));
  if (!symbol) return [];
  const { declarations, references } = occurrences(doc.analysis, symbol.name);
  const ranges = [
    ...(includeDeclaration ? declarations.map((d) => d.nameRange) : []),
    ...references.map((r) => r.range),
  ].sort((a, b) => a.start - b.start);
  return ranges.map((r) => ({ uri: doc.uri, range: doc.positions.range(r) }));
}
