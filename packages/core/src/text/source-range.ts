/**
 * Source ranges: half-open UTF-16 offsets plus 1-based line and column at both ends.
 * Every AST node and diagnostic carries one. This module owns how ranges are built; nothing
 * else computes line or column numbers by hand.
 */

/** A half-open range of source text. `end`/`endColumn` point just after the last character. */
export interface SourceRange {
  /** Offset (UTF-16 code units) of the first character. */
  readonly start: number;
  /** Offset just after the last character. */
  readonly end: number;
  /** 1-based line of `start`. */
  readonly line: number;
  /** 1-based column (UTF-16 code units) of `start`. */
  readonly column: number;
  /** 1-based line of `end`. */
  readonly endLine: number;
  /** 1-based column of `end` (exclusive). */
  readonly endColumn: number;
}

/** Builds a range that lies on one line, from the line's number and start offset. */
export function lineRange(line: number, lineStart: number, start: number, end: number): SourceRange {
  return { start, end, line, column: start - lineStart + 1, endLine: line, endColumn: end - lineStart + 1 };
}

/** Joins two ranges into the smallest range covering both (a must start before b ends). */
export function spanRanges(a: SourceRange, b: SourceRange): SourceRange {
  return { start: a.start, end: b.end, line: a.line, column: a.column, endLine: b.endLine, endColumn: b.endColumn };
}

/** True when `offset` lies inside the range, end included (a cursor right after a token touches it). */
export function rangeContains(range: SourceRange, offset: number): boolean {
  return offset >= range.start && offset <= range.end;
}
