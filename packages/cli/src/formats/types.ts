/** What every lint output format receives: one entry per checked file. */
import type { Diagnostic } from '@lightsop/core';

export interface FileReport {
  /** Path as shown to the user, or `<stdin>`. */
  readonly file: string;
  readonly source: string;
  readonly diagnostics: readonly Diagnostic[];
}

export interface Totals {
  readonly errors: number;
  readonly warnings: number;
  readonly infos: number;
}

export function countSeverities(reports: readonly FileReport[]): Totals {
  let errors = 0;
  let warnings = 0;
  let infos = 0;
  for (const r of reports) {
    for (const d of r.diagnostics) {
      if (d.severity === 'error') errors++;
      else if (d.severity === 'warning') warnings++;
      else infos++;
    }
  }
  return { errors, warnings, infos };
}
