/**
 * What the editor UI reads from a plan's outline (`lightsop/planOutline`, answered by the
 * language server in editor positions): the line of the CodeLens, the declaration under the
 * cursor for Run up to Here, the lines inline results go on, the errors Run Plan reports. Pure
 * functions of the outline, so tests run them on what the real server answers.
 */
import type { PlanOutlineDeclaration, PlanOutlineResult } from './server-protocol';
import { displayPosition } from './positions';
import { diagnosticLine } from './run/format';

/** The 0-based line the plan's CodeLenses go on: the `#!english` header or the first declaration; null for neither. */
export function codeLensLine(outline: PlanOutlineResult): number | null {
  if (outline.english) return outline.english.start.line;
  return outline.declarations[0]?.nameRange.start.line ?? null;
}

/** The 0-based line of a declaration's header: where its `@name` is. */
export function headerLine(d: PlanOutlineDeclaration): number {
  return d.nameRange.start.line;
}

/** The declaration whose block holds the 0-based `line`, else the nearest one above it, else the first. */
export function declarationAt(outline: PlanOutlineResult, line: number): PlanOutlineDeclaration | null {
  let best: PlanOutlineDeclaration | null = null;
  for (const d of outline.declarations) {
    if (headerLine(d) <= line && (!best || headerLine(d) > headerLine(best))) best = d;
  }
  // Above the first declaration (its attached comments): the first one.
  return best ?? outline.declarations[0] ?? null;
}

/** Where each declaration's inline result goes: the 0-based line of its header, by name. */
export function inlineResultLines(outline: PlanOutlineResult): Map<string, number> {
  const lines = new Map<string, number>();
  if (outline.english) return lines;
  for (const d of outline.declarations) lines.set(d.name, headerLine(d));
  return lines;
}

/** `file:line:col: message [code]` for each error, in the editor's lines (Run Plan's report). */
export function errorLines(file: string, outline: PlanOutlineResult): string[] {
  return outline.errors.map((e) => diagnosticLine(file, displayPosition(e.range.start), e));
}
