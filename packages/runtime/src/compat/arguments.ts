/**
 * The reference constructor's positional forms:
 *
 *   new LightSOPLangInterpreter(code, registry)
 *   new LightSOPLangInterpreter(code, registry, onFail, options?)
 *   new LightSOPLangInterpreter(code, registry, options)
 *   new LightSOPLangInterpreter(code, registry, inputValue, onFail, options?)
 *   new LightSOPLangInterpreter(code, registry, inputValue, options)
 *
 * The third argument is an input value unless it is a function or an object with one of the
 * reference's recognised keys; `{ input: 'x' }` alone is therefore an input (Q21, kept).
 */

/** Keys that make an object in third position an options object rather than an input. */
const OPTION_KEYS = ['onFail', 'executionMonitor', 'llmAgent', 'maxLlmaRounds', 'cancelHeuristic', 'autoCancel', 'options'];

export interface ResolvedArguments {
  /** The positional input, or undefined when none was recognised. */
  inputValue: unknown;
  onFail: unknown;
  options: Record<string, unknown>;
}

function isOptionsCandidate(value: unknown): boolean {
  if (typeof value === 'function') return true;
  if (typeof value === 'object' && value !== null) return OPTION_KEYS.some((key) => Object.prototype.hasOwnProperty.call(value, key));
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

export function resolveArguments(rest: readonly unknown[]): ResolvedArguments {
  let inputValue: unknown;
  let onFailOrOptions: unknown;
  let maybeOptions: unknown;
  if (rest.length > 0) {
    const [first, second, third] = rest;
    if (isOptionsCandidate(first)) {
      onFailOrOptions = first;
      maybeOptions = second;
    } else {
      inputValue = first;
      onFailOrOptions = second;
      maybeOptions = third;
    }
  }
  const given = onFailOrOptions ?? {};
  if (typeof given === 'function') return { inputValue, onFail: given, options: isObject(maybeOptions) ? maybeOptions : {} };
  // An options object in this position wins; a further argument is ignored, as in the reference.
  if (isObject(given)) return { inputValue, onFail: typeof given.onFail === 'function' ? given.onFail : undefined, options: given };
  return { inputValue, onFail: undefined, options: {} };
}
