/**
 * Where a breakpoint on a plan line stops. A plan runs declaration by declaration, so a
 * breakpoint belongs to a declaration's header line: one on any other line of a block (a
 * continuation line, a here-doc line) moves to the header above; one on a blank or comment-only
 * line, or outside every declaration, holds no step and is reported unverified with the reason.
 * Lines are 1-based. Pure: the adapter and its tests use it without VS Code.
 */
import { parsePlan, type Declaration } from '@lightsop/core';

export interface PlanLines {
  /** The plan's declarations that can run (the first of each name), in source order. */
  readonly declarations: readonly Declaration[];
  /** The source split into lines (without line breaks). */
  readonly lines: readonly string[];
}

export type BreakpointPlace =
  | { readonly verified: true; readonly line: number; readonly declaration: Declaration }
  | { readonly verified: false; readonly line: number; readonly message: string };

/** Parses a plan once for placing breakpoints. */
export function planLines(text: string): PlanLines {
  const { plan } = parsePlan(text);
  const seen = new Set<string>();
  const declarations: Declaration[] = [];
  for (const d of plan.declarations) {
    if (d.name === '' || seen.has(d.name)) continue;
    seen.add(d.name);
    declarations.push(d);
  }
  return { declarations, lines: text.split(/\r\n|\n/) };
}

/** Zero-width characters and whitespace at the start of a line, as core's line pre-pass skips them. */
const LEADING = /^[\uFEFF\u200B-\u200D\s]*/;

function inHereDoc(d: Declaration, line: number): boolean {
  return d.body?.kind === 'heredoc' && line > d.body.beginRange.line;
}

/** Where a breakpoint requested on `line` goes. */
export function placeBreakpoint(plan: PlanLines, line: number): BreakpointPlace {
  if (!Number.isInteger(line) || line < 1 || line > plan.lines.length) {
    return { verified: false, line, message: `Line ${line} is not in the plan (it has ${plan.lines.length} lines).` };
  }
  const owner = plan.declarations.find((d) => d.lineNumber <= line && line <= Math.max(d.lineNumber, d.range.endLine)) ?? null;
  if (owner && owner.lineNumber === line) return { verified: true, line, declaration: owner };
  // Every line of a here-doc body is text of its value, even one that looks blank or like a comment.
  if (owner && inHereDoc(owner, line)) return { verified: true, line: owner.lineNumber, declaration: owner };
  const content = (plan.lines[line - 1] ?? '').replace(LEADING, '');
  if (content === '') {
    return { verified: false, line, message: 'A blank line holds no step: put the breakpoint on a declaration (its @ line or any line of its block).' };
  }
  if (content.startsWith('#')) {
    return { verified: false, line, message: 'A comment line holds no step: put the breakpoint on a declaration (its @ line or any line of its block).' };
  }
  if (owner) return { verified: true, line: owner.lineNumber, declaration: owner };
  return { verified: false, line, message: 'This line is not part of a declaration: put the breakpoint on a declaration (its @ line or any line of its block).' };
}
