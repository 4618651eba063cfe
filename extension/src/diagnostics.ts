/**
 * Makes VS Code diagnostics and ranges from editor positions that positions.ts (or the language
 * server) computed: construction only, no position arithmetic.
 */
import * as vscode from 'vscode';
import type { EditorDiagnostic } from './lint-plans';
import type { EditorRange } from './positions';

const SEVERITY: Record<EditorDiagnostic['severity'], vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  info: vscode.DiagnosticSeverity.Information,
};

export function toVsRange(r: EditorRange): vscode.Range {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

export function toVsDiagnostic(d: EditorDiagnostic): vscode.Diagnostic {
  const out = new vscode.Diagnostic(toVsRange(d.range), d.message, SEVERITY[d.severity]);
  out.code = d.code;
  out.source = 'lightsop';
  if (d.code === 'unused-variable') out.tags = [vscode.DiagnosticTag.Unnecessary];
  return out;
}
