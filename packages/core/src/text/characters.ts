/**
 * Character classes of the language (1.2, 1.3): whitespace is exactly JavaScript's `\s`;
 * the zero-width run at a line start is U+FEFF, U+200B, U+200C and U+200D.
 */

/** True for a UTF-16 code unit in JavaScript's `\s` set. */
export function isWhitespace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 160) return false;
  return (
    c === 160 || c === 5760 || (c >= 8192 && c <= 8202) || c === 8232 || c === 8233 ||
    c === 8239 || c === 8287 || c === 12288 || c === 65279
  );
}

/** True for the characters removed at the very start of a line before classification. */
export function isZeroWidth(c: number): boolean {
  return c === 0xfeff || c === 0x200b || c === 0x200c || c === 0x200d;
}

/** Index of the first non-whitespace character in text[from, to), or `to`. */
export function skipWhitespace(text: string, from: number, to: number): number {
  let i = from;
  while (i < to && isWhitespace(text.charCodeAt(i))) i++;
  return i;
}

/** Index just after the last non-whitespace character in text[from, to), or `from`. */
export function trimEnd(text: string, from: number, to: number): number {
  let i = to;
  while (i > from && isWhitespace(text.charCodeAt(i - 1))) i--;
  return i;
}

/** True when text[from, to) holds whitespace only (the empty range included). */
export function isBlankSlice(text: string, from: number, to: number): boolean {
  return skipWhitespace(text, from, to) === to;
}
