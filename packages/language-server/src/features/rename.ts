/**
 * Rename and prepareRename for variables. A rename rewrites the name part of every `@name`
 * declaration (duplicates included) and every `$name` use; the `@` and `$` stay. New names are
 * checked first: the language allows almost any characters in names (spec 1.6), but a name
 * with whitespace, `#` or a quote would not read back as the same name, and a name that is
 * already declared would merge two variables. A refused rename throws a RenameRefusedError,
 * which the server turns into an error response that editors show to the user.
 */
import { isWhitespace } from '@lightsop/core';
import type { Position, Range, TextEdit, WorkspaceEdit } from 'vscode-languageserver';
import type { AnalyzedDocument } from '../documents';
import { occurrences, symbolAt } from './locate';

/** A rename the user asked for that cannot be done; the message is for the user. */
export class RenameRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenameRefusedError';
  }
}

/** Why `name` cannot be a variable name, or null when it can. */
export function invalidNameReason(name: string): string | null {
  if (name === '') return 'A variable name cannot be empty.';
  for (let i = 0; i < name.length; i++) {
    if (isWhitespace(name.charCodeAt(i))) return `'${name}' is not a valid variable name: names cannot contain whitespace.`;
  }
  if (name.includes('#')) return `'${name}' is not a valid variable name: '#' would start a comment.`;
  if (/["']/.test(name)) return `'${name}' is not a valid variable name: names cannot contain quotes.`;
  return null;
}

/** The range of the name under the cursor (without `@` or `$`) and the name, or null when nothing there can be renamed. */
export function prepareRename(doc: AnalyzedDocument, position: Position): { range: Range; placeholder: string } | null {
  const symbol = symbolAt(doc.analysis.plan, doc.positions.offset(position));
  if (!symbol || symbol.name === '') return null;
  return { range: doc.positions.range({ start: symbol.nameStart, end: symbol.nameEnd }), placeholder: symbol.name };
}

export interface RenameOptions {
  /** Send versioned `documentChanges` (when the client supports them) instead of `changes`. */
  readonly versioned: boolean;
}

/** The edits that rename the variable at a position, or null when the cursor is not on one. */
export function getRenameEdits(doc: AnalyzedDocument, position: Position, newName: string, options: RenameOptions): WorkspaceEdit | null {
  const symbol = symbolAt(doc.analysis.plan, doc.positions.offset(position));
  if (!symbol || symbol.name === '') return null;
  const reason = invalidNameReason(newName);
  if (reason) throw new RenameRefusedError(reason);
  if (newName === symbol.name) return { changes: { [doc.uri]: [] } };
  const existing = doc.analysis.symbols.declarations.get(newName);
  if (existing) throw new RenameRefusedError(`'${newName}' is already declared on line ${existing.lineNumber}; renaming would merge two variables.`);
  const { declarations, references } = occurrences(doc.analysis, symbol.name);
  const edits: TextEdit[] = [...declarations.map((d) => d.nameRange), ...references.map((r) => r.range)]
    .sort((a, b) => a.start - b.start)
    .map((r) => ({ range: doc.positions.range({ start: r.start + 1, end: r.end }), newText: newName }));
  if (options.versioned) {
    return { documentChanges: [{ textDocument: { uri: doc.uri, version: doc.version }, edits }] };
  }
  return { changes: { [doc.uri]: edits } };
}
