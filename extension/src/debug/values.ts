/**
 * How the debugger shows values: one line in the Variables view (`status · value`, shortened),
 * expandable into the value's lines when it is long or has several lines, and the full text for
 * hovers and Copy Value. Pure, no VS Code.
 */
import { oneLine } from '../run/format';

/** Longest value shown on one line before it is shortened (and made expandable). */
export const PREVIEW_LENGTH = 100;

/** The value's lines when it deserves expanding (several lines, or longer than a preview), else null. */
export function expandableLines(text: string): string[] | null {
  const lines = text.split(/\r\n|\n/);
  if (lines.length > 1) return lines;
  return text.length > PREVIEW_LENGTH ? lines : null;
}

/** `status · value` on one line, as the Plan Variables view shows it. */
export function statusPreview(status: string, text: string): string {
  return text === '' ? status : `${status} · ${oneLine(text, PREVIEW_LENGTH)}`;
}

/** A literal argument: its text on one line, in quotes (the text of the plan, not a result). */
export function literalPreview(text: string): string {
  return `"${oneLine(text, PREVIEW_LENGTH)}"`;
}

/** Children of an expanded value: one per line (named by line number), and its size. */
export function lineChildren(text: string): { name: string; value: string }[] {
  const lines = text.split(/\r\n|\n/);
  const out = lines.map((line, i) => ({ name: String(i + 1), value: line }));
  out.push({ name: 'length', value: `${text.length} characters, ${lines.length} line${lines.length === 1 ? '' : 's'}` });
  return out;
}
