/**
 * Reads one header with a broken quoted token (unterminated, or a final backslash) through the
 * Chevrotain lexer and parser. This is the only way into Chevrotain from the header scanner, and
 * it returns plain data, so a bundle can load Chevrotain only when a plan has such a header
 * (`scripts/build.mjs` does so for the CLI's lint entry).
 */
import { lexHeaders } from './lexer';
import { groupHeaderTokens, parseHeaderTokens } from './parser';
import { Quoted, quotedPayload } from './tokens';

/** One token of the header, offsets relative to the header's code. */
export interface BrokenHeaderToken {
  readonly start: number;
  readonly length: number;
  /** The first character of the token's text. */
  readonly first: number;
  /** The quote of a quoted token, else null. */
  readonly quote: '"' | "'" | null;
  /** The decoded text of a quoted token, else null. */
  readonly value: string | null;
  readonly error: 'unterminated' | 'escape' | null;
}

export interface BrokenHeader {
  readonly command: BrokenHeaderToken | null;
  readonly args: readonly BrokenHeaderToken[];
}

/** The tokens of the header whose code is `code` (without its line feed). */
export function readBrokenHeader(code: string): BrokenHeader {
  const tokens = lexHeaders(code + '\n');
  const header = parseHeaderTokens(tokens)?.[0] ?? groupHeaderTokens(tokens)[0]!;
  const plain = (t: (typeof tokens)[number]): BrokenHeaderToken => {
    if (t.tokenType !== Quoted) return { start: t.startOffset, length: t.image.length, first: t.image.charCodeAt(0), quote: null, value: null, error: null };
    const p = quotedPayload(t);
    return { start: t.startOffset, length: t.image.length, first: t.image.charCodeAt(0), quote: p.quote, value: p.value, error: p.error };
  };
  return { command: header.command ? plain(header.command) : null, args: header.args.map(plain) };
}
