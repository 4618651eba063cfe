/**
 * The header parser (3.2): `DeclToken [Command {Argument}] Newline`, repeated. One reused
 * EmbeddedActionsParser instance; it returns the tokens of each header in order. References
 * are classified later, when the AST is built (the command position never yields one).
 */
import { EmbeddedActionsParser, type IToken } from 'chevrotain';
import { allTokens, Newline, Quoted, Word } from './tokens';

/** The tokens of one header line. */
export interface HeaderTokens {
  readonly name: IToken;
  readonly command: IToken | null;
  readonly args: IToken[];
}

class HeaderParser extends EmbeddedActionsParser {
  constructor() {
    super(allTokens, { recoveryEnabled: false, maxLookahead: 1, skipValidations: true });
    this.performSelfAnalysis();
  }

  readonly headers = this.RULE('headers', () => {
    const out: HeaderTokens[] = [];
    this.MANY(() => {
      out.push(this.SUBRULE(this.header));
    });
    return out;
  });

  readonly header = this.RULE('header', (): HeaderTokens => {
    const name = this.CONSUME(Word);
    let command: IToken | null = null;
    const args: IToken[] = [];
    this.OPTION(() => {
      command = this.SUBRULE(this.atom);
      this.MANY(() => {
        args.push(this.SUBRULE2(this.atom));
      });
    });
    this.CONSUME(Newline);
    return { name, command, args };
  });

  readonly atom = this.RULE('atom', (): IToken =>
    this.OR([{ ALT: () => this.CONSUME(Word) }, { ALT: () => this.CONSUME(Quoted) }]),
  );
}

let parser: HeaderParser | null = null;

/**
 * Parses a token stream of headers. Returns null when the stream does not have the expected
 * shape (which the lexer makes impossible); callers then group tokens by line themselves.
 */
export function parseHeaderTokens(tokens: IToken[]): HeaderTokens[] | null {
  parser ??= new HeaderParser();
  parser.input = tokens;
  const result = parser.headers();
  if (parser.errors.length > 0) return null;
  return result;
}

/** Fallback grouping of a header token stream by Newline tokens. */
export function groupHeaderTokens(tokens: IToken[]): HeaderTokens[] {
  const out: HeaderTokens[] = [];
  let line: IToken[] = [];
  for (const token of tokens) {
    if (token.tokenType === Newline) {
      if (line.length > 0) out.push({ name: line[0]!, command: line[1] ?? null, args: line.slice(2) });
      line = [];
    } else line.push(token);
  }
  return out;
}
