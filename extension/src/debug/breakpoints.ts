/**
 * Where a breakpoint on a plan line stops. A plan runs declaration by declaration, so a
 * breakpoint belongs to a declaration's header line: one on any other line of a block (a
 * continuation line, a here-doc line) moves to the header above; one on a blank or comment-only
 * line, or outside every declaration, holds no step and is reported unverified with the reason.
 *
 * Lines are the editor's, 0-based (the adapter's DebugSession converts them to the client's
 * 1-based lines): breakpoints, stack frames and log links all name lines of the editor, which
 * (like LSP) also ends a line at a lone CR where the language does not. So every declaration's place is converted through its offsets
 * (positions.ts). The debugger runs a plan it was handed as text (an editor's, or a file's that
 * no editor shows), not a document the language server knows, so it parses that text itself.
 * Pure: the adapter and its tests use it without VS Code.
 */
import { parsePlan, type Declaration } from '@lightsop/core';
import { displayPosition, editorLine, editorLines, textDocument } from '../positions';

/** A declaration that can run, with its lines in the editor. */
export interface PlacedDeclaration {
  readonly declaration: Declaration;
  /** The line of its `@name`. */
  readonly line: number;
  /** The last line of its block (continuation and here-doc included). */
  readonly lastLine: number;
  /** The line of its here-doc's begin marker, when it has one: the lines below it are the body. */
  readonly hereDocLine: number | null;
}

export interface PlanLines {
  /** The plan's declarations that can run (the first of each name), in source order. */
  readonly declarations: readonly PlacedDeclaration[];
  /** The source split into editor lines (without line breaks). */
  readonly lines: readonly string[];
  /** The line of each declaration that can run, by name. */
  readonly lineOf: ReadonlyMap<string, number>;
}

export type BreakpointPlace =
  | { readonly verified: true; readonly line: number; readonly declaration: Declaration }
  | { readonly verified: false; readonly line: number; readonly message: string };

/** Parses a plan once for placing breakpoints. */
export function planLines(text: string): PlanLines {
  const { plan } = parsePlan(text);
  const positions = textDocument(text);
  const line = (offset: number) => editorLine(positions, offset);
  const seen = new Set<string>();
  const declarations: PlacedDeclaration[] = [];
  const lineOf = new Map<string, number>();
  for (const d of plan.declarations) {
    if (d.name === '' || seen.has(d.name)) continue;
    seen.add(d.name);
    const header = line(d.nameRange.start);
    declarations.push({
      declaration: d,
      line: header,
      lastLine: Math.max(header, line(d.range.end)),
      hereDocLine: d.body?.kind === 'heredoc' ? line(d.body.beginRange.start) : null,
    });
    lineOf.set(d.name, header);
  }
  return { declarations, lines: editorLines(text), lineOf };
}

/** Zero-width characters and whitespace at the start of a line, as core's line pre-pass skips them. */
const LEADING = /^[\uFEFF\u200B-\u200D\s]*/;

/** Where a breakpoint requested on `line` goes. */
export function placeBreakpoint(plan: PlanLines, line: number): BreakpointPlace {
  if (!Number.isInteger(line) || line < 0 || line >= plan.lines.length) {
    return { verified: false, line, message: `Line ${displayPosition({ line, character: 0 }).line} is not in the plan (it has ${plan.lines.length} lines).` };
  }
  const owner = plan.declarations.find((d) => d.line <= line && line <= d.lastLine) ?? null;
  if (owner && owner.line === line) return { verified: true, line, declaration: owner.declaration };
  // Every line of a here-doc body is text of its value, even one that looks blank or like a comment.
  if (owner && owner.hereDocLine !== null && line > owner.hereDocLine) return { verified: true, line: owner.line, declaration: owner.declaration };
  const content = (plan.lines[line] ?? '').replace(LEADING, '');
  if (content === '') {
    return { verified: false, line, message: 'A blank line holds no step: put the breakpoint on a declaration (its @ line or any line of its block).' };
  }
  if (content.startsWith('#')) {
    return { verified: false, line, message: 'A comment line holds no step: put the breakpoint on a declaration (its @ line or any line of its block).' };
  }
  if (owner) return { verified: true, line: owner.line, declaration: owner.declaration };
  return { verified: false, line, message: 'This line is not part of a declaration: put the breakpoint on a declaration (its @ line or any line of its block).' };
}
