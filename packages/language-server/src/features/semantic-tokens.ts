/**
 * Semantic tokens (full and range) from the AST. Because the AST already follows the comment
 * scan of spec 1.4, including quirk Q1 (an odd apostrophe in a bare word hides a later `#`),
 * the tokens show what runs: in `@x emit don't # here` the `#` and `here` are arguments, not a
 * comment, and every argument gets a token so a TextMate comment colour cannot show through.
 * Comment lines that are continuation text are coloured as text, since they are passed on.
 */
import { BUILTIN_COMMANDS, type Declaration } from '@lightsop/core';
import { SemanticTokensBuilder, type Range, type SemanticTokens, type SemanticTokensLegend } from 'vscode-languageserver';
import type { AnalyzedDocument } from '../documents';
import type { OffsetSpan } from '../to-lsp';
import { blockStart } from './locate';

const TOKEN_TYPES = ['variable', 'function', 'string', 'parameter', 'comment', 'keyword'] as const;
const TOKEN_MODIFIERS = ['declaration', 'defaultLibrary'] as const;

export const SEMANTIC_TOKENS_LEGEND: SemanticTokensLegend = {
  tokenTypes: [...TOKEN_TYPES],
  tokenModifiers: [...TOKEN_MODIFIERS],
};

type TokenType = (typeof TOKEN_TYPES)[number];
const typeIndex = (t: TokenType) => TOKEN_TYPES.indexOf(t);
const DECLARATION = 1 << TOKEN_MODIFIERS.indexOf('declaration');
const DEFAULT_LIBRARY = 1 << TOKEN_MODIFIERS.indexOf('defaultLibrary');

class TokenSink {
  private readonly builder = new SemanticTokensBuilder();

  constructor(private readonly doc: AnalyzedDocument, private readonly window: OffsetSpan) {}

  /** Adds a token, split per LSP line (tokens may not span lines), skipping blank pieces. */
  add(span: OffsetSpan, type: TokenType, modifiers = 0): void {
    if (span.end <= span.start || span.end < this.window.start || span.start > this.window.end) return;
    const { positions, text } = this.doc;
    let line = positions.lineOf(span.start);
    if (span.end <= positions.lineEnd(line)) {
      // The common case: a token on one line.
      this.builder.push(line, span.start - positions.lineStart(line), span.end - span.start, typeIndex(type), modifiers);
      return;
    }
    let start = span.start;
    while (start < span.end) {
      const lineEnd = positions.lineEnd(line);
      const end = Math.min(span.end, lineEnd);
      if (end > start && text.slice(start, end).trim() !== '') {
        this.builder.push(line, start - positions.lineStart(line), end - start, typeIndex(type), modifiers);
      }
      line++;
      if (line >= positions.lineCount) break;
      start = Math.max(positions.lineStart(line), span.start);
    }
  }

  build(): SemanticTokens {
    return this.builder.build();
  }
}

function addDeclaration(sink: TokenSink, d: Declaration): void {
  for (const c of d.comments) if (!c.inline) sink.add(c.range, 'comment');
  sink.add(d.nameRange, 'variable', DECLARATION);
  if (d.command) sink.add(d.command.range, 'function', BUILTIN_COMMANDS.includes(d.command.name) ? DEFAULT_LIBRARY : 0);
  for (const a of d.arguments) {
    if (a.kind === 'reference') sink.add(a.range, 'variable');
    else if (a.origin === 'header') sink.add(a.range, a.quote ? 'string' : 'parameter');
  }
  for (const c of d.comments) if (c.inline) sink.add(c.range, 'comment');
  if (d.body?.kind === 'continuation') sink.add(d.body.range, 'string');
  else if (d.body?.kind === 'heredoc') {
    sink.add(d.body.beginRange, 'keyword');
    sink.add(d.body.bodyRange, 'string');
    if (d.body.endRange) sink.add(d.body.endRange, 'keyword');
  }
}

/** Semantic tokens of the whole document, or of the declarations overlapping `range`. */
export function getSemanticTokens(doc: AnalyzedDocument, range?: Range): SemanticTokens {
  const window = range ? doc.positions.span(range) : { start: 0, end: doc.text.length };
  const sink = new TokenSink(doc, window);
  const { plan } = doc.analysis;
  if (plan.english) {
    sink.add({ start: plan.english.headerRange.start, end: plan.english.headerRange.start + '#!english'.length }, 'keyword');
    return sink.build();
  }
  for (const c of plan.freeComments) sink.add(c.range, 'comment');
  for (const d of plan.declarations) {
    if (d.range.end < window.start) continue;
    if (blockStart(d) > window.end) break;
    addDeclaration(sink, d);
  }
  return sink.build();
}
