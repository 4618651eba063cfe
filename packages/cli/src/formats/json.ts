/** `--format json` (contract.md): 1-based positions, `endColumn` exclusive, check order. */
import type { Diagnostic } from '@lightsop/core';
import type { FileReport } from './types';

export function diagnosticToJson(d: Diagnostic) {
  return {
    code: d.code,
    severity: d.severity,
    message: d.message,
    line: d.range.line,
    column: d.range.column,
    endLine: d.range.endLine,
    endColumn: d.range.endColumn,
  };
}

export function formatJson(reports: readonly FileReport[]): string {
  return JSON.stringify(reports.map((r) => ({ file: r.file, diagnostics: r.diagnostics.map(diagnosticToJson) }))) + '\n';
}
