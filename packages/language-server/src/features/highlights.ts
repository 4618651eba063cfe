/**
 * Document highlights: the declarations of the variable at the cursor (written) and its `$`
 * uses (read).
 */
import { DocumentHighlightKind, type DocumentHighlight, type Position } from 'vscode-languageserver';
import type { AnalyzedDocument } from '../documents';
import { occurrences, symbolAt } from './locate';

export function getDocumentHighlights(doc: AnalyzedDocument, position: Position): DocumentHighlight[] {
  const symbol = symbolAt(doc.analysis.plan, doc.positions.offset(position));
  if (!symbol) return [];
  const { declarations, references } = occurrences(doc.analysis, symbol.name);
  return [
    ...declarations.map((d) => ({ range: doc.positions.range(d.nameRange), kind: DocumentHighlightKind.Write })),
    ...references.map((r) => ({ range: doc.positions.range(r.range), kind: DocumentHighlightKind.Read })),
  ];
}
