/**
 * The line pre-pass (3.3): splits the source into lines, finds each line's effective start and
 * class, and runs the comment scan on header lines. Plain TypeScript, linear, cannot fail.
 */
import { isWhitespace, isZeroWidth, skipWhitespace } from '../text/characters';

export const enum LineClass {
  Blank = 0,
  Comment = 1,
  Declaration = 2,
  Text = 3,
}

/** Struct-of-arrays description of every line (cheap for 100k-line plans). */
export interface Lines {
  readonly count: number;
  /** Offset of the line's first character. */
  readonly start: Int32Array;
  /** Offset just after the line's content (its line break, CR of a CRLF included, excluded). */
  readonly end: Int32Array;
  /** Offset after the leading zero-width run. */
  readonly zwEnd: Int32Array;
  /** Offset of the first character after the zero-width run and whitespace. */
  readonly eff: Int32Array;
  readonly cls: Uint8Array;
}

/** Splits and classifies the lines of `text`. */
export function scanLines(text: string): Lines {
  let count = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  const start = new Int32Array(count);
  const end = new Int32Array(count);
  const zwEnd = new Int32Array(count);
  const eff = new Int32Array(count);
  const cls = new Uint8Array(count);
  let lineStart = 0;
  for (let n = 0; n < count; n++) {
    let brk = text.indexOf('\n', lineStart);
    if (brk === -1) brk = text.length;
    let lineEnd = brk;
    if (brk < text.length && lineEnd > lineStart && text.charCodeAt(lineEnd - 1) === 13) lineEnd--;
    const from = lineStart;
    start[n] = from;
    end[n] = lineEnd;
    lineStart = brk + 1;
    // Most lines of a long plan are headers starting in column 1.
    if (from < lineEnd && text.charCodeAt(from) === 64 /* @ */) {
      zwEnd[n] = eff[n] = from;
      cls[n] = LineClass.Declaration;
      continue;
    }
    let i = from;
    while (i < lineEnd && isZeroWidth(text.charCodeAt(i))) i++;
    zwEnd[n] = i;
    i = skipWhitespace(text, i, lineEnd);
    eff[n] = i;
    if (i >= lineEnd) cls[n] = LineClass.Blank;
    else {
      const c = text.charCodeAt(i);
      cls[n] = c === 64 /* @ */ ? LineClass.Declaration : c === 35 /* # */ ? LineClass.Comment : LineClass.Text;
    }
  }
  return { count, start, end, zwEnd, eff, cls };
}

/**
 * The comment scan (1.4) over text[from, to): returns the offset of the `#` that starts an
 * inline comment, or -1. Quotes toggle, a backslash protects the next character.
 */
export function findInlineComment(text: string, from: number, to: number): number {
  let escaped = false;
  let single = false;
  let double = false;
  for (let i = from; i < to; i++) {
    if (escaped) {
      escaped = false;
      continue;
    }
    const c = text.charCodeAt(i);
    if (c === 92 /* \ */) escaped = true;
    else if (c === 39 /* ' */) {
      if (!double) single = !single;
    } else if (c === 34 /* " */) {
      if (!single) double = !double;
    } else if (c === 35 /* # */ && !single && !double) return i;
  }
  return -1;
}

/** True for a code unit of the whitespace set; re-exported for callers of the pre-pass. */
export { isWhitespace };
