/**
 * Diagnostics of a plan as LSP diagnostics: every core diagnostic of the analysis, in the
 * core's check order, converted by `to-lsp.ts` (severity, Unnecessary tag, related information).
 */
import type { Diagnostic } from 'vscode-languageserver';
import type { AnalyzedDocument } from '../documents';
import { toLspDiagnostic } from '../to-lsp';

export function getDiagnostics(doc: AnalyzedDocument): Diagnostic[] {
  return doc.analysis.diagnostics.map((d) => toLspDiagnostic(d, doc.positions, doc.uri));
}
