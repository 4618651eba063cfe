/**
 * `parseCode`: the reference parser's declaration records, built from our core parser. Invalid
 * code throws the reference's parse error texts (the interpreter-level checks, undefined
 * variables and cycles, are not part of parsing, as in the reference).
 */
import { isEnglishSource, parsePlan, signatureOf, type Argument, type Declaration } from '@lightsop/core';
import { firstError, referenceText } from './messages';

/** An argument as the reference describes it. */
export type ArgumentDescriptor = { type: 'literal'; value: string } | { type: 'variable'; name: string };

/** One declaration as the reference's `parseCode` returns it. */
export interface DeclarationRecord {
  name: string;
  command: string;
  arguments: ArgumentDescriptor[];
  /** Referenced names, each once, in order of first appearance. */
  dependencies: Set<string>;
  /** Equal exactly when command and arguments are equal (2.7). */
  signature: string;
  /** 1-based line of the header. */
  lineNumber: number;
  comment: string;
  commentLines: string[];
}

export function toDescriptors(args: readonly Argument[]): ArgumentDescriptor[] {
  return args.map((a) => (a.kind === 'literal' ? { type: 'literal', value: a.value } : { type: 'variable', name: a.name }));
}

export function toRecord(d: Declaration): DeclarationRecord {
  return {
    name: d.name,
    command: d.command ? d.command.name : '',
    arguments: toDescriptors(d.arguments),
    dependencies: new Set(d.dependencies),
    signature: signatureOf(d),
    lineNumber: d.lineNumber,
    comment: d.comment,
    commentLines: d.commentLines.slice(),
  };
}

/**
 * Parses LightSOPLang code into a Map of declaration records by name, or throws the reference's
 * error for the first problem. The reference's parser knows nothing of `#!english`: there the
 * header is an ordinary comment line, so it is read as one here too (a zero-width space in front
 * keeps the line numbers and makes the core read the text as code).
 */
export function parseCode(code: unknown): Map<string, DeclarationRecord> {
  if (typeof code !== 'string') throw new TypeError('LightSOPLang code must be a string');
  const source = isEnglishSource(code) ? `\u200B${code}` : code;
  const { plan, diagnostics } = parsePlan(source);
  const error = firstError(diagnostics);
  if (error) throw new Error(referenceText(error, plan.declarations, null));
  const declarations = new Map<string, DeclarationRecord>();
  for (const d of plan.declarations) if (!declarations.has(d.name)) declarations.set(d.name, toRecord(d));
  return declarations;
}
