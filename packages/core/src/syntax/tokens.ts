/**
 * Token types of the header layer (3.2). Headers are lexed as one stream: the code parts of all
 * header lines joined by line feeds, so one Chevrotain call lexes a whole plan.
 */
import { createToken, Lexer, type IToken } from 'chevrotain';

/** What the quoted-string matcher learned about a quoted token. */
export interface QuotedPayload {
  /** The decoded text (escapes applied), up to the error when there is one. */
  readonly value: string;
  readonly quote: '"' | "'";
  /** `unterminated`: no closing quote; `escape`: a backslash is the last character of the header. */
  readonly error: 'unterminated' | 'escape' | null;
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t' };

/**
 * Matches a quoted token at `offset` (1.5). It never fails on a quote: an unterminated string or
 * a final backslash yields an error-flagged token that runs to the end of the header, so the
 * lexer never reports raw "unexpected character" errors.
 */
function matchQuoted(text: string, offset: number): RegExpExecArray | null {
  const q = text.charCodeAt(offset);
  if (q !== 34 && q !== 39) return null;
  let value = '';
  let runStart = offset + 1;
  let i = runStart;
  let error: QuotedPayload['error'] = 'unterminated';
  const n = text.length;
  for (;;) {
    if (i >= n) break;
    const c = text.charCodeAt(i);
    if (c === 10) break; // end of this header's code part
    if (c === q) {
      value += text.slice(runStart, i);
      i++;
      error = null;
      break;
    }
    if (c === 92) {
      value += text.slice(runStart, i);
      if (i + 1 >= n || text.charCodeAt(i + 1) === 10) {
        error = 'escape';
        i++;
        runStart = i;
        break;
      }
      const next = text[i + 1]!;
      value += ESCAPES[next] ?? next;
      i += 2;
      runStart = i;
      continue;
    }
    i++;
  }
  if (error === 'unterminated') value += text.slice(runStart, i);
  const result = [text.slice(offset, i)] as unknown as RegExpExecArray & { payload: QuotedPayload };
  result.payload = { value, quote: q === 34 ? '"' : "'", error };
  return result;
}

export const Newline = createToken({ name: 'Newline', pattern: /\n/, line_breaks: true });
export const Whitespace = createToken({ name: 'Whitespace', pattern: /[^\S\n]+/, group: Lexer.SKIPPED });
export const Quoted = createToken({
  name: 'Quoted',
  pattern: { exec: matchQuoted },
  start_chars_hint: ['"', "'"],
  line_breaks: false,
});
export const Word = createToken({ name: 'Word', pattern: /[^\s"'][^\s]*/ });

export const allTokens = [Newline, Whitespace, Quoted, Word];

/** The payload of a Quoted token. */
export function quotedPayload(token: IToken): QuotedPayload {
  return token.payload as QuotedPayload;
}
