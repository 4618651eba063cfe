/**
 * The header lexer: one reused Chevrotain Lexer instance. It cannot fail on any input: every
 * character belongs to Whitespace, Newline, Quoted (error-flagged when broken) or Word.
 */
import { Lexer, type IToken } from 'chevrotain';
import { allTokens } from './tokens';

let lexer: Lexer | null = null;

function headerLexer(): Lexer {
  lexer ??= new Lexer(allTokens, {
    positionTracking: 'onlyOffset',
    ensureOptimizations: false,
    skipValidations: true,
  });
  return lexer;
}

/** Lexes the joined header code parts. */
export function lexHeaders(text: string): IToken[] {
  return headerLexer().tokenize(text).tokens;
}
