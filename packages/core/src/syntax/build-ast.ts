/**
 * Builds the compact syntax tree of a plan (`tree.ts`): the line pre-pass groups lines into a
 * preamble and blocks, a hand-written scanner reads each header's tokens straight into typed
 * arrays, and this module reports the syntax diagnostics of section 4.2 (plus duplicate
 * declarations, which the check order places among them). A header with a broken quoted token
 * (unterminated, or a final backslash) is read by the Chevrotain lexer and parser instead, which
 * report what is wrong with it. It never throws on user text. The public nodes of `ast.ts` are
 * materialised from the tree on access.
 */
import type { EnglishScript, Plan, CommentNode, Declaration } from '../ast';
import { codeInfo, type DiagnosticCode } from '../diagnostics/codes';
import type { Diagnostic } from '../diagnostics/diagnostic';
import { isBlankSlice, isWhitespace, skipWhitespace, trimEnd } from '../text/characters';
import { LineIndex } from '../text/line-index';
import { lineRange, type SourceRange } from '../text/source-range';
import { findInlineComment, LineClass, scanLines, type Lines } from './lines';
import { readBrokenHeader } from './broken-header';
import {
  commentNode, DeclFlag, decodeQuoted, grow, SpanTable, SyntaxTree, TokenKind, type TreeArrays,
} from './tree';

export interface ParseResult {
  readonly plan: Plan;
  /** The compact syntax tree the plan's nodes are materialised from. */
  readonly tree: SyntaxTree;
  /** Syntax diagnostics and duplicate declarations, in check order (4.1). */
  readonly diagnostics: Diagnostic[];
  readonly lineIndex: LineIndex;
}

const HEREDOC_BEGIN = /^--begin-(.+)--$/;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const ENGLISH_HEADER = '#!english';
/** `argTarget` of a reference whose name is not declared above it (looked up at the end). */
const UNRESOLVED = -2;

function resolvedOrPending(symbol: number): number {
  return symbol === -1 ? UNRESOLVED : symbol;
}

/** Parses a plan. Never throws on user text; returns a possibly partial AST. */
export function parsePlan(text: string): ParseResult {
  const lines = scanLines(text);
  const lineIndex = new LineIndex(text, lines.start);
  const planRange = lineIndex.range(0, text.length);
  const english = detectEnglish(text, lines);
  const builder = new PlanBuilder(text, lines, lineIndex);
  if (english) {
    const tree = builder.emptyTree();
    return { plan: { kind: 'plan', range: planRange, english, declarations: [], freeComments: [] }, tree, diagnostics: [], lineIndex };
  }
  const { tree, freeComments } = builder.build();
  return { plan: lazyPlan(planRange, tree, freeComments), tree, diagnostics: builder.diagnostics, lineIndex };
}

/** A plan whose declaration nodes are materialised on first access. */
function lazyPlan(range: SourceRange, tree: SyntaxTree, freeComments: CommentNode[]): Plan {
  let declarations: Declaration[] | null = null;
  return {
    kind: 'plan',
    range,
    english: null,
    get declarations(): Declaration[] {
      return (declarations ??= tree.declarations());
    },
    freeComments,
  };
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

/** The command token of a header as the Chevrotain path read it. */
interface SlowHeader {
  readonly commandStart: number;
  readonly commandEnd: number;
  readonly commandKind: number;
  /** The decoded text of a quoted command. */
  readonly commandValue: string | null;
  readonly lexicalError: Diagnostic | null;
}

class PlanBuilder {
  readonly diagnostics: Diagnostic[] = [];
  private count = 0;
  private header = new Int32Array(0);
  private commentStart = new Int32Array(0);
  private hash = new Int32Array(0);
  private codeEnd = new Int32Array(0);
  private nameEnd = new Int32Array(0);
  private commandStart = new Int32Array(0);
  private commandEnd = new Int32Array(0);
  private commandKind = new Uint8Array(0);
  private commandId = new Int32Array(0);
  private argFrom = new Int32Array(1);
  private argKind = new Uint8Array(0);
  private argStart = new Int32Array(0);
  private argEnd = new Int32Array(0);
  /** For references: the symbol, or UNRESOLVED until the end of the plan; -1 for other tokens. */
  private argTarget = new Int32Array(0);
  private args = 0;
  private bodyFirst = new Int32Array(0);
  private bodyLast = new Int32Array(0);
  private bodyEnd = new Int32Array(0);
  private flags = new Uint8Array(0);
  private symbolDecl = new Int32Array(0);
  private declSymbol = new Int32Array(0);
  private names: SpanTable;
  /** Command names: one string each; bare command tokens are looked up in place. */
  private readonly commandNames: string[] = [];
  private readonly commandIds = new Map<string, number>();
  private readonly commandSpans: SpanTable;
  private spanCommand: number[] = [];
  /** The first `#` at or after the line being read (text.length when none). */
  private nextHash = -1;

  constructor(
    private readonly text: string,
    private readonly lines: Lines,
    private readonly lineIndex: LineIndex,
  ) {
    this.names = new SpanTable(text, 0);
    this.commandSpans = new SpanTable(text, 16);
  }

  emptyTree(): SyntaxTree {
    return new SyntaxTree(this.text, this.lines, this.lineIndex, this.arrays(0));
  }

  build(): { tree: SyntaxTree; freeComments: CommentNode[] } {
    const { text, lines } = this;
    const { count, cls } = lines;

    // Comment runs directly followed by a declaration line attach to it (2.4).
    // Each header argument takes a character and the whitespace before it: at most half the
    // header's length, which bounds the argument arrays (capped; they grow past the cap).
    const attached = new Uint8Array(count);
    let decls = 0;
    let argBound = 16;
    for (let n = 0; n < count; n++) {
      if (cls[n] === LineClass.Declaration) {
        decls++;
        argBound += (lines.end[n]! - lines.eff[n]!) >> 1;
      }
      if (cls[n] !== LineClass.Comment) continue;
      let m = n;
      while (m < count && cls[m] === LineClass.Comment) m++;
      if (m < count && cls[m] === LineClass.Declaration) attached.fill(1, n, m);
      n = m - 1;
    }
    this.allocate(decls, Math.min(argBound, decls * 4 + 16));

    // Declaration lines, and where each block's attached comments start.
    for (let n = 0, i = 0; n < count; n++) {
      if (cls[n] !== LineClass.Declaration) continue;
      let c = n;
      while (c > 0 && attached[c - 1] === 1) c--;
      this.header[i] = n;
      this.commentStart[i++] = c;
    }

    // The preamble: blank and comment lines are fine; the first other line is reported.
    const preambleEnd = decls > 0 ? this.commentStart[0]! : count;
    const freeComments: CommentNode[] = [];
    let strayReported = false;
    for (let n = 0; n < preambleEnd; n++) {
      if (cls[n] === LineClass.Comment) freeComments.push(commentNode(text, lines, n));
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

    for (let i = 0; i < decls; i++) this.declaration(i);
    this.argFrom[decls] = this.args;

    // References resolve to the first declaration of their name, wherever it is: a name declared
    // above was resolved as its header was read, the others are looked up now.
    const argTarget = this.argTarget.slice(0, this.args);
    for (let g = 0; g < this.args; g++) {
      if (argTarget[g] === UNRESOLVED) argTarget[g] = this.names.find(this.argStart[g]! + 1, this.argEnd[g]!);
    }
    return { tree: new SyntaxTree(text, lines, this.lineIndex, this.arrays(decls, argTarget)), freeComments };
  }

  private allocate(decls: number, argCapacity: number): void {
    this.count = decls;
    this.header = new Int32Array(decls);
    this.commentStart = new Int32Array(decls);
    this.hash = new Int32Array(decls);
    this.codeEnd = new Int32Array(decls);
    this.nameEnd = new Int32Array(decls);
    this.commandStart = new Int32Array(decls);
    this.commandEnd = new Int32Array(decls);
    this.commandKind = new Uint8Array(decls);
    this.commandId = new Int32Array(decls);
    this.argFrom = new Int32Array(decls + 1);
    this.argKind = new Uint8Array(argCapacity);
    this.argStart = new Int32Array(argCapacity);
    this.argEnd = new Int32Array(argCapacity);
    this.argTarget = new Int32Array(argCapacity);
    this.bodyFirst = new Int32Array(decls);
    this.bodyLast = new Int32Array(decls);
    this.bodyEnd = new Int32Array(decls);
    this.flags = new Uint8Array(decls);
    this.symbolDecl = new Int32Array(decls);
    this.declSymbol = new Int32Array(decls);
    this.names = new SpanTable(this.text, decls);
  }

  private arrays(decls: number, argTarget = new Int32Array(0)): TreeArrays {
    const args = this.args;
    return {
      count: decls,
      header: this.header,
      commentStart: this.commentStart,
      hash: this.hash,
      codeEnd: this.codeEnd,
      nameEnd: this.nameEnd,
      commandStart: this.commandStart,
      commandEnd: this.commandEnd,
      commandKind: this.commandKind,
      commandId: this.commandId,
      commandNames: this.commandNames,
      argFrom: this.argFrom,
      // Exact-size copies: the builder's arrays keep spare capacity.
      argKind: this.argKind.slice(0, args),
      argStart: this.argStart.slice(0, args),
      argEnd: this.argEnd.slice(0, args),
      argTarget,
      bodyFirst: this.bodyFirst,
      bodyLast: this.bodyLast,
      bodyEnd: this.bodyEnd,
      flags: this.flags,
      symbolCount: this.names.size,
      symbolDecl: this.symbolDecl.slice(0, this.names.size),
      declSymbol: this.declSymbol,
      names: this.names,
    };
  }

  /** Makes room for `more` arguments. */
  private reserveArgs(more: number): void {
    while (this.args + more > this.argStart.length) {
      this.argStart = grow(this.argStart);
      this.argEnd = grow(this.argEnd);
      this.argTarget = grow(this.argTarget);
      const kinds = new Uint8Array(this.argKind.length * 2);
      kinds.set(this.argKind);
      this.argKind = kinds;
    }
  }

  private pushArg(kind: number, start: number, end: number): void {
    this.reserveArgs(1);
    const g = this.args++;
    this.argKind[g] = kind;
    this.argStart[g] = start;
    this.argEnd[g] = end;
    this.argTarget[g] = kind === TokenKind.Reference ? UNRESOLVED : -1;
  }

  /** The id of a command name, one per distinct text. */
  private commandIdOf(value: string): number {
    let id = this.commandIds.get(value);
    if (id === undefined) {
      id = this.commandNames.length;
      this.commandNames.push(value);
      this.commandIds.set(value, id);
    }
    return id;
  }

  /** The id of the bare command token text[start, end) (of hash `hash`), looked up without copying it. */
  private commandIdOfSpan(start: number, end: number, hash: number): number {
    const known = this.commandSpans.findHashed(this.text, start, end, hash);
    if (known !== -1) return this.spanCommand[known]!;
    const id = this.commandIdOf(this.text.slice(start, end));
    this.spanCommand[this.commandSpans.addHashed(start, end, hash)] = id;
    return id;
  }

  private declaration(i: number): void {
    const { text, lines } = this;
    const n = this.header[i]!;
    const eff = lines.eff[n]!;
    const lineStart = lines.start[n]!;
    const lineNumber = n + 1;
    const lineEnd = lines.end[n]!;
    // The comment scan only runs on lines that hold a `#` (found by indexOf, line after line).
    if (this.nextHash < lineStart) {
      const next = text.indexOf('#', lineStart);
      this.nextHash = next === -1 ? text.length : next;
    }
    const hash = this.nextHash < lineEnd ? findInlineComment(text, lines.zwEnd[n]!, lineEnd) : -1;
    const codeEnd = trimEnd(text, eff, hash === -1 ? lineEnd : hash);
    this.hash[i] = hash;
    this.codeEnd[i] = codeEnd;

    // The header's tokens (3.2): `@name`, then words and quoted tokens separated by whitespace.
    // (c === 32 || (c <= 13 ? c >= 9 : c > 159 && isWhitespace(c))) is isWhitespace(c), inlined.
    let nameEnd = eff + 1;
    let nameHash = FNV_OFFSET;
    for (; nameEnd < codeEnd; nameEnd++) {
      const c = text.charCodeAt(nameEnd);
      if (c === 32 || (c <= 13 ? c >= 9 : c > 159 && isWhitespace(c))) break;
      nameHash = Math.imul(nameHash ^ c, FNV_PRIME);
    }
    this.nameEnd[i] = nameEnd;
    const argBase = this.args;
    this.argFrom[i] = argBase;
    if (argBase + ((codeEnd - nameEnd) >> 1) > this.argStart.length) this.reserveArgs((codeEnd - nameEnd) >> 1);
    const { argKind, argStart, argEnd, argTarget, names } = this;
    let g = argBase;
    let tokenStart = -1;
    let tokenEnd = -1;
    let tokenKind: number = TokenKind.Word;
    let commandHash = 0;
    let broken = false;
    for (let p = nameEnd; ;) {
      let c = 0;
      while (p < codeEnd) {
        c = text.charCodeAt(p);
        if (!(c === 32 || (c <= 13 ? c >= 9 : c > 159 && isWhitespace(c)))) break;
        p++;
      }
      if (p >= codeEnd) break;
      let end = p + 1;
      let kind: number;
      if (c === 34 /* " */ || c === 39 /* ' */) {
        let closed = false;
        while (end < codeEnd) {
          const d = text.charCodeAt(end);
          if (d === c) {
            closed = true;
            end++;
            break;
          }
          if (d === 92 /* \ */) {
            if (end + 1 >= codeEnd) break;
            end += 2;
          } else end++;
        }
        if (!closed) {
          broken = true;
          break;
        }
        kind = c === 34 ? TokenKind.Double : TokenKind.Single;
      } else {
        // A bare word is hashed as it is read: a reference's name (after the `$`), the whole
        // command token, and any other word (the hash is then unused).
        const reference = c === 36 /* $ */ && tokenStart !== -1;
        let h = reference ? FNV_OFFSET : Math.imul(FNV_OFFSET ^ c, FNV_PRIME);
        for (; end < codeEnd; end++) {
          const d = text.charCodeAt(end);
          if (d === 32 || (d <= 13 ? d >= 9 : d > 159 && isWhitespace(d))) break;
          h = Math.imul(h ^ d, FNV_PRIME);
        }
        if (tokenStart === -1) {
          // The command position never yields a reference.
          tokenStart = p;
          tokenEnd = end;
          tokenKind = TokenKind.Word;
          commandHash = h;
        } else {
          argKind[g] = reference ? TokenKind.Reference : TokenKind.Word;
          argStart[g] = p;
          argEnd[g] = end;
          // A name declared above is its first declaration already; the rest wait for the end.
          argTarget[g++] = reference ? resolvedOrPending(names.findHashed(text, p + 1, end, h >>> 0)) : -1;
        }
        p = end;
        continue;
      }
      if (tokenStart === -1) {
        tokenStart = p;
        tokenEnd = end;
        tokenKind = kind;
      } else {
        argKind[g] = kind;
        argStart[g] = p;
        argEnd[g] = end;
        argTarget[g++] = -1;
      }
      p = end;
    }
    this.args = g;
    let commandValue: string | null = null;
    let lexicalError: Diagnostic | null = null;
    if (broken) {
      this.args = argBase;
      const slow = this.slowHeader(eff, codeEnd, lineNumber, lineStart);
      tokenStart = slow.commandStart;
      tokenEnd = slow.commandEnd;
      tokenKind = slow.commandKind;
      commandValue = slow.commandValue;
      lexicalError = slow.lexicalError;
    }
    let local: Diagnostic[] | null = lexicalError ? [lexicalError] : null;

    // The name: missing, a duplicate, or a new symbol.
    const named = nameEnd > eff + 1;
    if (!named) {
      this.declSymbol[i] = -1;
      (local ??= []).push(diagnostic('missing-variable-name', "Missing variable name after '@'", lineRange(lineNumber, lineStart, eff, eff + 1)));
    } else {
      const h = nameHash >>> 0;
      const first = this.names.findHashed(text, eff + 1, nameEnd, h);
      if (first !== -1) {
        this.declSymbol[i] = first;
        (local ??= []).push(this.duplicate(first, eff, nameEnd, lineNumber, lineStart));
      } else {
        const symbol = this.names.addHashed(eff + 1, nameEnd, h);
        this.symbolDecl[symbol] = i;
        this.declSymbol[i] = symbol;
      }
    }

    // The command: a quoted command may decode to nothing, which is no command.
    let commandId = -1;
    if (tokenStart !== -1) {
      if (tokenKind === TokenKind.Word) commandId = this.commandIdOfSpan(tokenStart, tokenEnd, commandHash >>> 0);
      else {
        const value = commandValue ?? decodeQuoted(text, tokenStart, tokenEnd);
        if (value !== '') commandId = this.commandIdOf(value);
      }
    }
    this.commandId[i] = commandId;
    if (commandId !== -1) {
      this.commandStart[i] = tokenStart;
      this.commandEnd[i] = tokenEnd;
      this.commandKind[i] = tokenKind;
    } else {
      this.commandStart[i] = -1;
      this.commandEnd[i] = -1;
      if (named && !lexicalError) {
        (local ??= []).push(diagnostic('missing-command', `Declaration '@${text.slice(eff + 1, nameEnd)}' has no command`,
          tokenStart !== -1 ? lineRange(lineNumber, lineStart, tokenStart, tokenEnd) : lineRange(lineNumber, lineStart, eff, nameEnd),
          { data: { name: text.slice(eff + 1, nameEnd) } }));
      }
    }

    // Continuation lines, only when the block has lines after its header.
    const blockEnd = i + 1 < this.count ? this.commentStart[i + 1]! : lines.count;
    let flags = 0;
    let heredocError = false;
    if (blockEnd > n + 1) {
      const isAssign = commandId !== -1 && this.commandNames[commandId] === 'assign';
      const body = this.body(i, n, blockEnd, text.slice(eff + 1, nameEnd), !lexicalError && isAssign && this.args === argBase);
      flags = body.flags;
      if (body.error) {
        heredocError = true;
        (local ??= []).push(body.error);
      }
    }
    if (lexicalError !== null || heredocError || !named || commandId === -1) flags |= DeclFlag.HasError;
    this.flags[i] = flags;
    if (local) for (const d of local) this.diagnostics.push(d);
  }

  /** Continuation lines: blank edges dropped; one literal, or an assign here-doc (2.3, 2.5). */
  private body(i: number, n: number, blockEnd: number, name: string, mayBeHereDoc: boolean): { flags: number; error: Diagnostic | null } {
    const { text, lines } = this;
    let first = n + 1;
    let last = blockEnd - 1;
    while (first <= last && isBlankSlice(text, lines.start[first]!, lines.end[first]!)) first++;
    while (last >= first && isBlankSlice(text, lines.start[last]!, lines.end[last]!)) last--;
    if (first > last) return { flags: 0, error: null };
    this.bodyFirst[i] = first;
    this.bodyLast[i] = last;
    const lineText = (k: number) => text.slice(lines.start[k]!, lines.end[k]!);
    const firstText = lineText(first).trim();
    const match = mayBeHereDoc ? HEREDOC_BEGIN.exec(firstText) : null;
    if (!match) return { flags: DeclFlag.Continuation, error: null };
    const token = match[1]!;
    const endMarker = `--end-${token}--`;
    const beginStart = skipWhitespace(text, lines.start[first]!, lines.end[first]!);
    const beginEnd = beginStart + firstText.length;
    let endLine = -1;
    for (let k = first + 1; k <= last; k++) {
      if (lineText(k).trim() === endMarker) {
        endLine = k;
        break;
      }
    }
    this.bodyEnd[i] = endLine;
    if (endLine === -1) {
      return {
        flags: DeclFlag.HereDoc,
        error: diagnostic('unterminated-heredoc',
          `Here-doc '--begin-${token}--' of '${name}' is not closed: '${endMarker}' is missing before the next declaration`,
          this.lineIndex.range(lines.start[n + 1]!, beginEnd), { data: { name } }),
      };
    }
    if (endLine < last) {
      return {
        flags: DeclFlag.HereDoc,
        error: diagnostic('heredoc-trailing-content', `Unexpected text after '${endMarker}' in the here-doc of '${name}'`,
          this.lineIndex.range(lines.start[endLine + 1]!, trimEnd(text, lines.start[last]!, lines.end[last]!)), { data: { name } }),
      };
    }
    return { flags: DeclFlag.HereDoc, error: null };
  }

  private duplicate(first: number, eff: number, nameEnd: number, lineNumber: number, lineStart: number): Diagnostic {
    const { text, lines } = this;
    const name = text.slice(eff + 1, nameEnd);
    const firstDecl = this.symbolDecl[first]!;
    const firstLine = this.header[firstDecl]!;
    return diagnostic('duplicate-declaration', `Variable '${name}' is already declared on line ${firstLine + 1}`,
      lineRange(lineNumber, lineStart, eff, nameEnd), {
        data: { name },
        related: [{ message: `'${name}' is first declared here`, range: lineRange(firstLine + 1, lines.start[firstLine]!, lines.eff[firstLine]!, this.nameEnd[firstDecl]!) }],
      });
  }

  /**
   * Reads a header with a broken quoted token through Chevrotain: its tokens up to the broken
   * one become the command and arguments, and the broken one the lexical error.
   */
  private slowHeader(eff: number, codeEnd: number, lineNumber: number, lineStart: number): SlowHeader {
    const header = readBrokenHeader(this.text.slice(eff, codeEnd));
    const range = (start: number, length: number) => lineRange(lineNumber, lineStart, eff + start, eff + start + length);
    const lexicalError = (start: number, length: number, error: 'unterminated' | 'escape', quote: string): Diagnostic => {
      const r = range(start, length);
      return error === 'escape'
        ? diagnostic('invalid-escape', 'Backslash at the end of the line has nothing to escape', lineRange(lineNumber, lineStart, r.end - 1, r.end))
        : diagnostic('unterminated-string', `Unterminated string: the closing ${quote} is missing`, r);
    };
    const command = header.command;
    if (!command) return { commandStart: -1, commandEnd: -1, commandKind: TokenKind.Word, commandValue: null, lexicalError: null };
    const kindOf = (quote: string): number => (quote === '"' ? TokenKind.Double : TokenKind.Single);
    if (command.quote !== null && command.error) {
      return { commandStart: -1, commandEnd: -1, commandKind: TokenKind.Word, commandValue: null, lexicalError: lexicalError(command.start, command.length, command.error, command.quote) };
    }
    let error: Diagnostic | null = null;
    for (const t of header.args) {
      const start = eff + t.start;
      const end = start + t.length;
      if (t.quote !== null) {
        if (t.error) {
          error = lexicalError(t.start, t.length, t.error, t.quote);
          break;
        }
        this.pushArg(kindOf(t.quote), start, end);
      } else this.pushArg(t.first === 36 ? TokenKind.Reference : TokenKind.Word, start, end);
    }
    const commandStart = eff + command.start;
    return {
      commandStart,
      commandEnd: commandStart + command.length,
      commandKind: command.quote !== null ? kindOf(command.quote) : TokenKind.Word,
      commandValue: command.quote !== null ? command.value : null,
      lexicalError: error,
    };
  }
}

/** Re-exported for hosts that need the whitespace definition of the language. */
export { isWhitespace };
