/**
 * Go to definition: from a `$name` (or a `@name`) to the first declaration of that name, the
 * one that runs (later duplicates never do, spec 4.3). Undeclared names have no definition.
 */
import type { Location, Position } from 'vscode-languageserver';
import type { AnalyzedDocument } from '../documents';
import { symbolAt } from './locate';

/** The declaration of the variable at a position, or null. */
export function getDefinition(doc: AnalyzedDocument, position: Position): Location | null {
  const symbol = symbolAt(doc.analysis.plan, doc.positions.offset(position));
  if (!symbol) return null;
  const decl = doc.analysis.symbols.declarations.get(symbol.name);
  if (!decl) return null;
  return { uri: doc.uri, range: doc.positions.range(decl.nameRange) };
}
