/**
 * Builds the AST of a plan: the line pre-pass groups lines into a preamble and blocks, one
 * Chevrotain pass lexes and parses every header, and this module turns both into declarations
 * with source ranges and the syntax diagnostics of section 4.2 (plus duplicate declarations,
 * which the check order places among them). It never throws on user text.
 */
import type { IToken } from 'chevrotain';
import type {
  Argument, CommandNode, CommentNode, Declaration, EnglishScript, HereDocBody, Plan,
} from '../../../packages/core/src/ast';
import { codeInfo, type DiagnosticCode } from '../../../packages/core/src/diagnostics/codes';
import type { Diagnostic } from '../../../packages/core/src/diagnostics/diagnostic';
import { isBlankSlice, isWhitespace, skipWhitespace, trimEnd } from '../../../packages/core/src/text/characters';
import { LineIndex } from '../../../packages/core/src/text/line-index';
import { lineRange, type SourceRange } from '../../../packages/core/src/text/source-range';
import { lexHeaders } from '../../../packages/core/src/syntax/lexer';
import { findInlineComment, LineClass, scanLines, type Lines } from '../../../packages/core/src/syntax/lines';
import { groupHeaderTokens, parseHeaderTokens, type HeaderTokens } from '../../../packages/core/src/syntax/parser';
import { Quoted, quotedPayload } from '../../../packages/core/src/syntax/tokens';

export interface ParseResult {
  readonly plan: Plan;
  /** Name to first declaration and its position among them, as the symbol table wants them. */
  readonly firstDeclarations?: { readonly declarations: Map<string, Declaration>; readonly indexOf: Map<string, number> };
  /** Syntax diagnostics and duplicate declarations, in check order (4.1). */
  readonly diagnostics: Diagnostic[];
  readonly lineIndex: LineIndex;
}

const HEREDOC_BEGIN = /^--begin-(.+)--$/;
/** Shared by declarations without comments or dependencies (most of them), to save memory. */
const EMPTY = Object.freeze([]) as unknown as never[];
const ENGLISH_HEADER = '#!english';
/** Headers lexed and parsed per Chevrotain call. */
const CHUNK = 512;

/** Parses a plan. Never throws on user text; returns a possibly partial AST. */
export function parsePlan(text: string): ParseResult {
  const lines = scanLines(text);
  const lineIndex = new LineIndex(text, lines.start);
  const planRange = lineIndex.range(0, text.length);
  const english = detectEnglish(text, lines);
  if (english) {
    return { plan: { kind: 'plan', range: planRange, english, declarations: [], freeComments: [] }, diagnostics: [], lineIndex };
  }
  return new PlanBuilder(text, lines, lineIndex, planRange).build();
}

/** True when the source is an english script (2.6): `#!english` after leading whitespace. */
export function isEnglishSource(text: string): boolean {
  const first = skipWhitespace(text, 0, text.length);
  return text.startsWith(ENGLISH_HEADER, first);
}

function detectEnglish(text: string, lines: Lines): EnglishScript | null {
  const first = skipWhitespace(text, 0, text.length);
  if (!text.startsWith(ENGLISH_HEADER, first)) return null;
  let n = 0;
  while (n + 1 < lines.count && lines.start[n + 1]! <= first) n++;
  const rest: string[] = [text.slice(first + ENGLISH_HEADER.length, lines.end[n]!)];
  for (let k = n + 1; k < lines.count; k++) rest.push(text.slice(lines.start[k]!, lines.end[k]!));
  return {
    kind: 'english',
    headerRange: lineRange(n + 1, lines.start[n]!, first, trimEnd(text, first, lines.end[n]!)),
    instructions: rest.join('\n').trim(),
  };
}

function diagnostic(code: DiagnosticCode, message: string, range: SourceRange, extra?: Partial<Diagnostic>): Diagnostic {
  return { code, severity: codeInfo(code).severity, message, range, ...extra };
}

class PlanBuilder {
  private readonly diagnostics: Diagnostic[] = [];
  /** Name to its first declaration, and to that declaration's position among first declarations. */
  private readonly declared = new Map<string, Declaration>();
  private readonly declaredIndex = new Map<string, number>();

  constructor(
    private readonly text: string,
    private readonly lines: Lines,
    private readonly lineIndex: LineIndex,
    private readonly planRange: SourceRange,
  ) {}

  build(): ParseResult {
    const { text, lines } = this;
    const { count, cls } = lines;

    // Comment runs directly followed by a declaration line attach to it (2.4).
    const attached = new Uint8Array(count);
    for (let n = 0; n < count; n++) {
      if (cls[n] !== LineClass.Comment) continue;
      let m = n;
      while (m < count && cls[m] === LineClass.Comment) m++;
      if (m < count && cls[m] === LineClass.Declaration) attached.fill(1, n, m);
      n = m - 1;
    }

    // Declaration lines, and where each block's attached comments start.
    const headerLines: number[] = [];
    const commentStarts: number[] = [];
    for (let n = 0; n < count; n++) {
      if (cls[n] !== LineClass.Declaration) continue;
      let c = n;
      while (c > 0 && attached[c - 1] === 1) c--;
      headerLines.push(n);
      commentStarts.push(c);
    }

    // The preamble: blank and comment lines are fine; the first other line is reported.
    const preambleEnd = commentStarts.length > 0 ? commentStarts[0]! : count;
    const freeComments: CommentNode[] = [];
    let strayReported = false;
    for (let n = 0; n < preambleEnd; n++) {
      if (cls[n] === LineClass.Comment) freeComments.push(this.commentLine(n));
      else if (cls[n] === LineClass.Text && !strayReported) {
        strayReported = true;
        const hash = findInlineComment(text, lines.zwEnd[n]!, lines.end[n]!);
        const codeEnd = trimEnd(text, lines.eff[n]!, hash === -1 ? lines.end[n]! : hash);
        this.diagnostics.push(diagnostic(
          'expected-declaration',
          "Expected a declaration starting with '@'; only blank lines and comments may come before the first declaration",
          lineRange(n + 1, lines.start[n]!, lines.eff[n]!, codeEnd),
        ));
      }
    }

    // Lex and parse the headers' code parts as token streams of CHUNK headers each: one
    // Chevrotain call per chunk, and the tokens die young instead of outliving a whole plan.
    const declarations: Declaration[] = [];
    const total = headerLines.length;
    for (let from = 0; from < total; from += CHUNK) {
      const to = Math.min(total, from + CHUNK);
      const hashes = new Int32Array(to - from);
      const codeEnds = new Int32Array(to - from);
      const segBase = new Int32Array(to - from);
      const segments: string[] = new Array(to - from);
      let base = 0;
      for (let i = from; i < to; i++) {
        const n = headerLines[i]!;
        const hash = findInlineComment(text, lines.zwEnd[n]!, lines.end[n]!);
        const codeEnd = trimEnd(text, lines.eff[n]!, hash === -1 ? lines.end[n]! : hash);
        hashes[i - from] = hash;
        codeEnds[i - from] = codeEnd;
        segBase[i - from] = base;
        segments[i - from] = text.slice(lines.eff[n]!, codeEnd);
        base += codeEnd - lines.eff[n]! + 1;
      }
      const tokens = lexHeaders(segments.join('\n') + '\n');
      let headers = parseHeaderTokens(tokens) ?? [];
      if (headers.length !== to - from) headers = groupHeaderTokens(tokens);
      for (let i = from; i < to; i++) {
        const blockEnd = i + 1 < total ? commentStarts[i + 1]! : count;
        const k = i - from;
        declarations.push(this.declaration(headers[k]!, headerLines[i]!, commentStarts[i]!, blockEnd, hashes[k]!, codeEnds[k]!, segBase[k]!));
      }
    }
    const plan: Plan = { kind: 'plan', range: this.planRange, english: null, declarations, freeComments };
    return { plan, diagnostics: this.diagnostics, lineIndex: this.lineIndex, firstDeclarations: { declarations: this.declared, indexOf: this.declaredIndex } };
  }

  private readonly interned = new Map<string, string>();

  /** Command names repeat across a plan; keep one string each. */
  private intern(text: string): string {
    const known = this.interned.get(text);
    if (known !== undefined) return known;
    this.interned.set(text, text);
    return text;
  }

  private commentLine(n: number): CommentNode {
    const { text, lines } = this;
    const hash = lines.eff[n]!;
    const end = trimEnd(text, hash, lines.end[n]!);
    return { kind: 'comment', text: text.slice(hash + 1, end).trim(), range: lineRange(n + 1, lines.start[n]!, hash, end), inline: false };
  }

  private declaration(
    header: HeaderTokens, n: number, commentStart: number, blockEnd: number, hash: number, codeEnd: number, segBase: number,
  ): Declaration {
    const { text, lines } = this;
    const lineNumber = n + 1;
    const lineStart = lines.start[n]!;
    const shift = lines.eff[n]! - segBase;
    const tokenRange = (t: IToken): SourceRange => {
      const s = t.startOffset + shift;
      return lineRange(lineNumber, lineStart, s, s + t.image.length);
    };
    let local: Diagnostic[] | null = null;

    // Lexical errors: tokens after the first broken quoted token are ignored.
    let lexicalError: Diagnostic | null = null;
    const headerArgs = header.args;
    let argCount = headerArgs.length;
    let commandToken: IToken | undefined = header.command ?? undefined;
    if (commandToken && commandToken.tokenType === Quoted && quotedPayload(commandToken).error) {
      lexicalError = this.lexicalError(commandToken, tokenRange(commandToken), lineNumber, lineStart);
      commandToken = undefined;
      argCount = 0;
    } else {
      for (let k = 0; k < argCount; k++) {
        const t = headerArgs[k]!;
        if (t.tokenType === Quoted && quotedPayload(t).error) {
          lexicalError = this.lexicalError(t, tokenRange(t), lineNumber, lineStart);
          argCount = k;
          break;
        }
      }
    }
    if (lexicalError) local = [lexicalError];

    const nameToken = header.name;
    const nameRange = tokenRange(nameToken);
    const name = nameToken.image.slice(1);
    const firstDecl = name === '' ? undefined : this.declared.get(name);
    if (name === '') {
      (local ??= []).push(diagnostic('missing-variable-name', "Missing variable name after '@'", lineRange(lineNumber, lineStart, nameRange.start, nameRange.start + 1)));
    } else {
      if (firstDecl) {
        (local ??= []).push(diagnostic('duplicate-declaration', `Variable '${name}' is already declared on line ${firstDecl.lineNumber}`, nameRange, {
          data: { name },
          related: [{ message: `'${name}' is first declared here`, range: firstDecl.nameRange }],
        }));
      }
    }

    let command: CommandNode | null = null;
    if (commandToken) {
      const quoted = commandToken.tokenType === Quoted;
      const commandName = this.intern(quoted ? quotedPayload(commandToken).value : commandToken.image);
      if (commandName !== '') {
        command = { kind: 'command', name: commandName, range: tokenRange(commandToken), quote: quoted ? quotedPayload(commandToken).quote : null };
      }
    }
    if (name !== '' && !lexicalError && !command) {
      (local ??= []).push(diagnostic('missing-command', `Declaration '@${name}' has no command`, commandToken ? tokenRange(commandToken) : nameRange, { data: { name } }));
    }

    const args: Argument[] = [];
    for (let k = 0; k < argCount; k++) {
      const t = headerArgs[k]!;
      if (t.tokenType === Quoted) {
        const p = quotedPayload(t);
        args.push({ kind: 'literal', value: p.value, range: tokenRange(t), quote: p.quote, origin: 'header' });
      } else if (t.image.charCodeAt(0) === 36 /* $ */) {
        args.push({ kind: 'reference', name: t.image.slice(1), range: tokenRange(t) });
      } else {
        args.push({ kind: 'literal', value: t.image, range: tokenRange(t), quote: null, origin: 'header' });
      }
    }

    // Continuation lines: blank edges dropped; one literal, or an assign here-doc (2.3, 2.5).
    let first = n + 1;
    let last = blockEnd - 1;
    while (first <= last && isBlankSlice(text, lines.start[first]!, lines.end[first]!)) first++;
    while (last >= first && isBlankSlice(text, lines.start[last]!, lines.end[last]!)) last--;
    let body: Declaration['body'] = null;
    let heredocError = false;
    if (first <= last) {
      const lineText = (k: number) => text.slice(lines.start[k]!, lines.end[k]!);
      const firstText = lineText(first).trim();
      const match = !lexicalError && command?.name === 'assign' && args.length === 0 ? HEREDOC_BEGIN.exec(firstText) : null;
      if (match) {
        const token = match[1]!;
        const endMarker = `--end-${token}--`;
        const beginStart = skipWhitespace(text, lines.start[first]!, lines.end[first]!);
        const beginRange = lineRange(first + 1, lines.start[first]!, beginStart, beginStart + firstText.length);
        let endLine = -1;
        for (let k = first + 1; k <= last; k++) {
          if (lineText(k).trim() === endMarker) {
            endLine = k;
            break;
          }
        }
        if (endLine === -1) {
          heredocError = true;
          (local ??= []).push(diagnostic('unterminated-heredoc',
            `Here-doc '--begin-${token}--' of '${name}' is not closed: '${endMarker}' is missing before the next declaration`,
            this.lineIndex.range(lines.start[n + 1]!, beginRange.end), { data: { name } }));
          body = { kind: 'heredoc', token, beginRange, bodyRange: this.linesRange(first + 1, last, beginRange.end), endRange: null };
        } else {
          const endStart = skipWhitespace(text, lines.start[endLine]!, lines.end[endLine]!);
          const endRange = lineRange(endLine + 1, lines.start[endLine]!, endStart, endStart + endMarker.length);
          const bodyRange = this.linesRange(first + 1, endLine - 1, lines.start[endLine]!);
          const bodyLines: string[] = [];
          for (let k = first + 1; k < endLine; k++) bodyLines.push(lineText(k));
          body = { kind: 'heredoc', token, beginRange, bodyRange, endRange } satisfies HereDocBody;
          args.push({ kind: 'literal', value: bodyLines.join('\n'), range: bodyRange, quote: null, origin: 'heredoc' });
          if (endLine < last) {
            heredocError = true;
            (local ??= []).push(diagnostic('heredoc-trailing-content', `Unexpected text after '${endMarker}' in the here-doc of '${name}'`,
              this.lineIndex.range(lines.start[endLine + 1]!, trimEnd(text, lines.start[last]!, lines.end[last]!)), { data: { name } }));
          }
        }
      } else {
        const parts: string[] = [];
        for (let k = first; k <= last; k++) parts.push(lineText(k));
        const range = this.linesRange(first, last, lines.start[first]!);
        body = { kind: 'continuation', range };
        args.push({ kind: 'literal', value: parts.join('\n'), range, quote: null, origin: 'continuation' });
      }
    }

    // Comments: the attached run, then the inline comment (2.4).
    let comments: CommentNode[] = EMPTY;
    let commentLines: string[] = EMPTY;
    if (commentStart < n || hash !== -1) {
      comments = [];
      commentLines = [];
    }
    for (let k = commentStart; k < n; k++) {
      const c = this.commentLine(k);
      comments.push(c);
      commentLines.push(c.text);
    }
    let headerEnd = codeEnd;
    if (hash !== -1) {
      const end = trimEnd(text, hash, lines.end[n]!);
      const inlineText = text.slice(hash + 1, end).trim();
      comments.push({ kind: 'comment', text: inlineText, range: lineRange(lineNumber, lineStart, hash, end), inline: true });
      if (inlineText !== '') commentLines.push(inlineText);
      headerEnd = end;
    }

    let dependencies: string[] = EMPTY;
    for (const a of args) {
      if (a.kind !== 'reference') continue;
      if (dependencies === EMPTY) dependencies = [a.name];
      else if (!dependencies.includes(a.name)) dependencies.push(a.name);
    }

    const headerRange = lineRange(lineNumber, lineStart, lines.eff[n]!, codeEnd);
    const blockEndOffset = first <= last ? trimEnd(text, lines.start[last]!, lines.end[last]!) : headerEnd;
    const declaration: Declaration = {
      kind: 'declaration',
      // Most declarations are one header line without a comment: share the range object.
      range: blockEndOffset > headerEnd ? this.lineIndex.range(headerRange.start, blockEndOffset)
        : headerEnd === codeEnd ? headerRange : lineRange(lineNumber, lineStart, headerRange.start, headerEnd),
      headerRange,
      name,
      nameRange,
      command,
      // slice(): an array grown by push keeps spare capacity (17 slots); plans keep 100k of these.
      arguments: args.length === 0 ? EMPTY : args.slice(),
      dependencies,
      lineNumber,
      commentLines: commentLines.length === 0 ? EMPTY : commentLines.slice(),
      comment: commentLines.length === 0 ? '' : commentLines.join('\n').trim(),
      comments: comments.length === 0 ? EMPTY : comments.slice(),
      body,
      hasError: lexicalError !== null || heredocError || name === '' || command === null,
    };
    if (name !== '' && firstDecl === undefined) {
      this.declaredIndex.set(name, this.declared.size);
      this.declared.set(name, declaration);
    }
    if (local) for (const d of local) this.diagnostics.push(d);
    return declaration;
  }

  private lexicalError(t: IToken, r: SourceRange, lineNumber: number, lineStart: number): Diagnostic {
    const p = quotedPayload(t);
    return p.error === 'escape'
      ? diagnostic('invalid-escape', 'Backslash at the end of the line has nothing to escape', lineRange(lineNumber, lineStart, r.end - 1, r.end))
      : diagnostic('unterminated-string', `Unterminated string: the closing ${p.quote} is missing`, r);
  }

  /** Range from the start of line `from` to the end of line `to` (0-based); empty at `emptyAt` when to < from. */
  private linesRange(from: number, to: number, emptyAt: number): SourceRange {
    if (to < from) return this.lineIndex.range(emptyAt, emptyAt);
    return this.lineIndex.range(this.lines.start[from]!, this.lines.end[to]!);
  }
}

/** Re-exported for hosts that need the whitespace definition of the language. */
export { isWhitespace };
