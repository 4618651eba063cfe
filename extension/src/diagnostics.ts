/** Converts core diagnostics (1-based lines and columns, exclusive end) to VS Code diagnostics (0-based). */
import * as vscode from 'vscode';
import type { Diagnostic } from '@lightsop/core';

const SEVERITY: Record<Diagnostic['severity'], vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  info: vscode.DiagnosticSeverity.Information,
};

export function toVsDiagnostic(d: Diagnostic): vscode.Diagnostic {
  const r = d.range;
  const range = new vscode.Range(r.line - 1, r.column - 1, r.endLine - 1, r.endColumn - 1);
  const out = new vscode.Diagnostic(range, d.message, SEVERITY[d.severity]);
  out.code = d.code;
  out.source = 'lightsop';
  if (d.code === 'unused-variable') out.tags = [vscode.DiagnosticTag.Unnecessary];
  return out;
}
