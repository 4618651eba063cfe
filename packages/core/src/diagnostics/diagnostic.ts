/**
 * The one diagnostics model shared by the CLI, the runtime and the language server. Positions
 * are 1-based here; only the language server converts to 0-based LSP positions.
 */
import type { SourceRange } from '../text/source-range';
import type { DiagnosticCode, Severity } from './codes';

/** A related location, such as another member of a cycle. */
export interface RelatedInformation {
  readonly message: string;
  readonly range: SourceRange;
}

/** Machine-readable extras that code actions use (suggestions, names). */
export interface DiagnosticData {
  /** The variable or command the diagnostic is about. */
  readonly name?: string;
  /** Did-you-mean candidates, best first. */
  readonly suggestions?: readonly string[];
  /** Cycle members in cycle order. */
  readonly cycle?: readonly string[];
}

export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  readonly message: string;
  readonly range: SourceRange;
  readonly related?: readonly RelatedInformation[];
  readonly data?: DiagnosticData;
}

/** True when any diagnostic is an error. */
export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}

/** Sorts diagnostics by position (for human formats); machine formats keep check order. */
export function sortByPosition(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  // Often they already are (a plan whose diagnostics all come from one check): then no sort.
  let sorted = true;
  for (let k = 1; k < diagnostics.length && sorted; k++) {
    const a = diagnostics[k - 1]!.range;
    const b = diagnostics[k]!.range;
    if (a.start > b.start || (a.start === b.start && a.end > b.end)) sorted = false;
  }
  if (sorted) return diagnostics.slice();
  return [...diagnostics].sort((a, b) => a.range.start - b.range.start || a.range.end - b.range.end);
}
