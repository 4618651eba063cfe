/** Errors of the runtime API. Plan problems carry diagnostics; configuration problems say what to set. */
import type { Diagnostic } from '@lightsop/core';

/** An update was rejected because the plan has syntax or topology errors; nothing changed. */
export class PlanValidationError extends Error {
  constructor(readonly diagnostics: readonly Diagnostic[], readonly source: string) {
    const first = diagnostics.find((d) => d.severity === 'error') ?? diagnostics[0];
    super(first ? `Invalid plan: ${first.message} (${first.code}, line ${first.range.line}, column ${first.range.column})` : 'Invalid plan');
    this.name = 'PlanValidationError';
  }
}

/** The host's configuration cannot work (no language model for an english script, bad options). */
export class ConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}

/** Plan generation failed in every round an english update was allowed. */
export class PlanGenerationError extends Error {
  constructor(message: string, readonly attempts: number) {
    super(message);
    this.name = 'PlanGenerationError';
  }
}
