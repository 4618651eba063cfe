/**
 * The one module of the extension that turns core positions into editor positions. Core ranges
 * carry half-open UTF-16 offsets plus 1-based lines and columns counted the language's way: a
 * line ends only at LF, and a lone CR is an ordinary character (spec 1.1). VS Code, like LSP,
 * also ends a line at a lone CR. So a core position is converted through its offset, by the
 * document it belongs to (`positionAt`), never by subtracting 1 from its line; the language
 * server does the same in its `to-lsp.ts`, so both land on the same editor line.
 *
 * Nothing here imports `vscode`: an open editor document is an `OffsetDocument` as it is, and
 * text that is in no editor (a plan read from disk by Lint Workspace or the debugger, a plan a
 * model wrote) gets one from `textDocument`, which breaks lines as VS Code and LSP do. The
 * `vscode.Range` of a result is made in `diagnostics.ts` (`toVsRange`), without arithmetic.
 */
import { TextDocument } from 'vscode-languageserver-textdocument';

/** A 0-based editor position (VS Code's and LSP's). */
export interface EditorPosition {
  readonly line: number;
  readonly character: number;
}

export interface EditorRange {
  readonly start: EditorPosition;
  readonly end: EditorPosition;
}

/** What converting needs of a document; VS Code's `TextDocument` is one. */
export interface OffsetDocument {
  positionAt(offset: number): EditorPosition;
}

/** Half-open offsets; every core range has them. */
export interface OffsetSpan {
  readonly start: number;
  readonly end: number;
}

/** A document for text that is not open in an editor, with VS Code's line breaks (LF, CRLF and a lone CR). */
export function textDocument(text: string): OffsetDocument & { readonly lineCount: number; getText(): string } {
  return TextDocument.create('lightsop:text', 'lightsoplang', 0, text);
}

/** The editor lines of a text, without their line breaks, split where `textDocument` splits them. */
export function editorLines(text: string): string[] {
  return text.split(/\r\n|\r|\n/);
}

/** The editor position of a core offset in `doc`. */
export function editorPosition(doc: OffsetDocument, offset: number): EditorPosition {
  const p = doc.positionAt(offset);
  return { line: p.line, character: p.character };
}

/** The editor range of a core range (or any offset span) in `doc`. */
export function editorRange(doc: OffsetDocument, span: OffsetSpan): EditorRange {
  return { start: editorPosition(doc, span.start), end: editorPosition(doc, span.end) };
}

/** The 0-based editor line of a core offset in `doc`. */
export function editorLine(doc: OffsetDocument, offset: number): number {
  return doc.positionAt(offset).line;
}

/**
 * An editor position as people and the Debug Adapter Protocol count it: 1-based line and
 * column, as in `file:line:col` (which VS Code turns into a link to that place) and in the
 * Problems panel's "Ln, Col".
 */
export function displayPosition(position: EditorPosition): { readonly line: number; readonly column: number } {
  return { line: position.line + 1, column: position.character + 1 };
}

/** The 1-based editor line and column of a core offset in `doc`, for `file:line:col` and DAP. */
export function displayPositionAt(doc: OffsetDocument, offset: number): { readonly line: number; readonly column: number } {
  return displayPosition(doc.positionAt(offset));
}

/**
 * The editor position of a 1-based line and column counted the language's way (a line ends only
 * at LF), in `text`: a plan test's problem (the test file's or the plan's), a run record's
 * `lineNumber`. Converted through the offset, as every core position is.
 */
export function editorPositionOfLineColumn(text: string, line: number, column = 1): EditorPosition {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const next = text.indexOf('\n', offset);
    if (next < 0) {
      offset = text.length;
      break;
    }
    offset = next + 1;
  }
  return editorPosition(textDocument(text), Math.min(text.length, offset + Math.max(0, column - 1)));
}
