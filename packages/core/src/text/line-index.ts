/**
 * Line index: converts offsets into 1-based line/column and back. Built once per source text
 * by the line pre-pass (or on demand by hosts such as the language server).
 */
import type { SourceRange } from './source-range';

export class LineIndex {
  /** Offset of the first character of each line (line 1 at index 0). */
  readonly lineStarts: ArrayLike<number>;

  constructor(readonly text: string, lineStarts?: ArrayLike<number>) {
    this.lineStarts = lineStarts ?? computeLineStarts(text);
  }

  get lineCount(): number {
    return this.lineStarts.length;
  }

  /** 1-based line containing `offset` (binary search). */
  lineOf(offset: number): number {
    const starts = this.lineStarts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }

  /** 1-based line and column of an offset. */
  position(offset: number): { line: number; column: number } {
    const line = this.lineOf(offset);
    return { line, column: offset - this.lineStarts[line - 1]! + 1 };
  }

  /** Offset of a 1-based line and column; clamped to the text. */
  offsetAt(line: number, column: number): number {
    if (line < 1) return 0;
    if (line > this.lineStarts.length) return this.text.length;
    return Math.min(this.lineStarts[line - 1]! + Math.max(column - 1, 0), this.lineEnd(line));
  }

  /** Offset just after the last character of a 1-based line (its line break excluded). */
  lineEnd(line: number): number {
    const next = line < this.lineStarts.length ? this.lineStarts[line]! - 1 : this.text.length;
    if (next > 0 && line < this.lineStarts.length && this.text.charCodeAt(next - 1) === 13) return next - 1;
    return next;
  }

  /** A range from two offsets. */
  range(start: number, end: number): SourceRange {
    const a = this.position(start);
    const b = end === start ? a : this.position(end);
    return { start, end, line: a.line, column: a.column, endLine: b.line, endColumn: b.column };
  }
}

/** Offsets where lines begin: after every line feed (a CR before it belongs to the break). */
export function computeLineStarts(text: string): number[] {
  const starts = [0];
  let i = text.indexOf('\n');
  while (i !== -1) {
    starts.push(i + 1);
    i = text.indexOf('\n', i + 1);
  }
  return starts;
}
