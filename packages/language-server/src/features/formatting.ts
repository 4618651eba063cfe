/**
 * Formatting with the core formatter. The result is sent as line-level edits (only the lines
 * the formatter changed or removed), which keeps the cursor, marks and undo history of the
 * untouched lines; when the lines cannot be matched up, one edit covering the changed middle
 * of the document is sent instead.
 */
import { formatPlan } from '@lightsop/core';
import type { TextEdit } from 'vscode-languageserver';
import type { AnalyzedDocument } from '../documents';

interface OffsetEdit {
  start: number;
  end: number;
  newText: string;
}

function lineStartsOf(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

function applyEdits(text: string, edits: readonly OffsetEdit[]): string {
  let out = '';
  let at = 0;
  for (const e of edits) {
    out += text.slice(at, e.start) + e.newText;
    at = e.end;
  }
  return out + text.slice(at);
}

/**
 * Edits that turn `before` into `after` line by line. The formatter only rewrites lines in
 * place and drops blank ones, so a walk that deletes unmatched blank lines and replaces other
 * unmatched lines finds them; the result is checked and null is returned if it does not match.
 */
function lineEdits(before: string, after: string): OffsetEdit[] | null {
  const a = lineStartsOf(before);
  const b = lineStartsOf(after);
  // Line i spans [a[i], a[i+1]) including its line break.
  const lineA = (i: number) => before.slice(a[i]!, i + 1 < a.length ? a[i + 1]! : before.length);
  const lineB = (j: number) => after.slice(b[j]!, j + 1 < b.length ? b[j + 1]! : after.length);
  const edits: OffsetEdit[] = [];
  const push = (start: number, end: number, newText: string) => {
    const last = edits[edits.length - 1];
    if (last && last.end === start) {
      last.end = end;
      last.newText += newText;
    } else edits.push({ start, end, newText });
  };
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = lineA(i);
    const y = lineB(j);
    const end = i + 1 < a.length ? a[i + 1]! : before.length;
    if (x === y) {
      i++;
      j++;
    } else if (x.trim() === '' && y.trim() !== '') {
      push(a[i]!, end, '');
      i++;
    } else {
      push(a[i]!, end, y);
      i++;
      j++;
    }
  }
  for (; i < a.length; i++) push(a[i]!, i + 1 < a.length ? a[i + 1]! : before.length, '');
  let rest = '';
  for (; j < b.length; j++) rest += lineB(j);
  if (rest !== '') push(before.length, before.length, rest);
  return applyEdits(before, edits) === after ? edits : null;
}

/** One edit replacing the part between the common prefix and the common suffix. */
function middleEdit(before: string, after: string): OffsetEdit {
  let start = 0;
  const max = Math.min(before.length, after.length);
  while (start < max && before.charCodeAt(start) === after.charCodeAt(start)) start++;
  let endA = before.length;
  let endB = after.length;
  while (endA > start && endB > start && before.charCodeAt(endA - 1) === after.charCodeAt(endB - 1)) {
    endA--;
    endB--;
  }
  // Never cut a CRLF or a surrogate pair in two: LSP has no position between their halves.
  const splits = (text: string, at: number) => {
    const prev = text.charCodeAt(at - 1);
    const next = text.charCodeAt(at);
    return (prev === 13 && next === 10) || (prev >= 0xd800 && prev <= 0xdbff && next >= 0xdc00 && next <= 0xdfff);
  };
  while (start > 0 && (splits(before, start) || splits(after, start))) start--;
  while (endA < before.length && (splits(before, endA) || splits(after, endB))) {
    endA++;
    endB++;
  }
  return { start, end: endA, newText: after.slice(start, endB) };
}

/** The edits that format the document (empty when it is already formatted). */
export function getFormattingEdits(doc: AnalyzedDocument): TextEdit[] {
  const formatted = formatPlan(doc.text);
  if (formatted === doc.text) return [];
  const edits = lineEdits(doc.text, formatted) ?? [middleEdit(doc.text, formatted)];
  return edits.map((e) => ({ range: doc.positions.range(e), newText: e.newText }));
}
