/**
 * AST node types. Nodes are plain readonly objects tagged by `kind`, with no methods; derived
 * facts (the dependency graph, the symbol table) live in separate result objects.
 */
import type { SourceRange } from './text/source-range';

/** Where a literal argument came from. */
export type LiteralOrigin = 'header' | 'continuation' | 'heredoc';

export interface LiteralArgument {
  readonly kind: 'literal';
  /** The decoded text. */
  readonly value: string;
  readonly range: SourceRange;
  /** The quote character of a quoted token, or null for a bare word or multi-line text. */
  readonly quote: '"' | "'" | null;
  readonly origin: LiteralOrigin;
}

export interface ReferenceArgument {
  readonly kind: 'reference';
  /** The referenced variable name (the token without its `$`). */
  readonly name: string;
  readonly range: SourceRange;
}

export type Argument = LiteralArgument | ReferenceArgument;

export interface CommandNode {
  readonly kind: 'command';
  /** The decoded command text. */
  readonly name: string;
  readonly range: SourceRange;
  readonly quote: '"' | "'" | null;
}

/** One comment line attached to a declaration, or its inline comment. */
export interface CommentNode {
  readonly kind: 'comment';
  /** The comment text: after the first `#`, trimmed. */
  readonly text: string;
  /** From the `#` to the end of the line's content. */
  readonly range: SourceRange;
  readonly inline: boolean;
}

/** Continuation lines read as one multi-line literal (2.3). */
export interface ContinuationBody {
  readonly kind: 'continuation';
  /** From the first to the last non-blank continuation line. */
  readonly range: SourceRange;
}

/** An `assign` here-doc (2.5). */
export interface HereDocBody {
  readonly kind: 'heredoc';
  readonly token: string;
  readonly beginRange: SourceRange;
  /** The body lines; an empty range at the body start when the body is empty. */
  readonly bodyRange: SourceRange;
  /** Null when the here-doc is unterminated. */
  readonly endRange: SourceRange | null;
}

export interface Declaration {
  readonly kind: 'declaration';
  /** The whole block: attached comments excluded, header to last non-blank continuation line. */
  readonly range: SourceRange;
  /** The header line's content, from its `@` to the end of its code part. */
  readonly headerRange: SourceRange;
  /** The variable name, or '' when it is missing. */
  readonly name: string;
  /** The `@name` token. */
  readonly nameRange: SourceRange;
  readonly command: CommandNode | null;
  /** Header arguments, followed by the multi-line or here-doc argument. */
  readonly arguments: readonly Argument[];
  /** Referenced names, each once, in order of first appearance. */
  readonly dependencies: readonly string[];
  /** 1-based line of the header. */
  readonly lineNumber: number;
  /** Texts of the attached comment lines, then the inline comment when not empty. */
  readonly commentLines: readonly string[];
  /** `commentLines` joined with line feeds and trimmed. */
  readonly comment: string;
  /** Attached comment lines and the inline comment, as nodes. */
  readonly comments: readonly CommentNode[];
  readonly body: ContinuationBody | HereDocBody | null;
  /** True when the header had a syntax error; such a declaration never runs. */
  readonly hasError: boolean;
}

export interface EnglishScript {
  readonly kind: 'english';
  /** The `#!english` header line. */
  readonly headerRange: SourceRange;
  /** The instructions: text after `#!english` on its line, then the following lines, trimmed. */
  readonly instructions: string;
}

export interface Plan {
  readonly kind: 'plan';
  readonly range: SourceRange;
  /** Set when the source is an english script (2.6); `declarations` is then empty. */
  readonly english: EnglishScript | null;
  readonly declarations: readonly Declaration[];
  /** Comment lines that are not attached to any declaration and lie in the preamble. */
  readonly freeComments: readonly CommentNode[];
}
