/**
 * Declaration signatures (2.7): two declarations have the same signature exactly when they have
 * the same command and the same argument list (kind and text of each argument). Quoting style,
 * comments and position do not matter. Computed on demand: only the runtime needs it.
 */
import type { Declaration } from './ast';

/** The signature of a declaration, as a string that is equal exactly when signatures are. */
export function signatureOf(d: Declaration): string {
  let s = d.command ? d.command.name : '';
  for (const a of d.arguments) s += a.kind === 'reference' ? '\u0001$' + a.name : '\u0001#' + a.value;
  return s;
}
