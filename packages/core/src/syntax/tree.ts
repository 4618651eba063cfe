/**
 * The compact syntax tree: every declaration, argument and name as numbers in typed arrays
 * (struct of arrays) holding offsets into the source, never copied strings. The public nodes of
 * `ast.ts` are materialised from it on access, one declaration at a time and cached, so a host
 * pays only for the nodes it reads: `lightsop lint` validates from the arrays alone, an editor
 * asking for one declaration materialises that one.
 */
import type {
  Argument, CommandNode, CommentNode, Declaration, HereDocBody, ReferenceArgument,
} from '../ast';
import { skipWhitespace, trimEnd } from '../text/characters';
import type { LineIndex } from '../text/line-index';
import { lineRange, type SourceRange } from '../text/source-range';
import type { Lines } from './lines';

/** What a header token is. */
export const enum TokenKind {
  /** A bare word. */
  Word = 0,
  /** A bare word starting with `$`. */
  Reference = 1,
  /** A quoted token with `"`. */
  Double = 2,
  /** A quoted token with `'`. */
  Single = 3,
}

/** Per-declaration flags. */
export const enum DeclFlag {
  HasError = 1,
  /** The declaration has continuation lines read as one literal. */
  Continuation = 2,
  /** The declaration has an assign here-doc. */
  HereDoc = 4,
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t' };
/** Shared by nodes without comments or arguments (most of them), to save memory. */
export const EMPTY = Object.freeze([]) as unknown as never[];
const HEREDOC_BEGIN = /^--begin-(.+)--$/;

/** The first backslash in text[from, to), or `to`: never searches past the token (a plan may have none). */
function backslashIn(text: string, from: number, to: number): number {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === 92) return i;
  return to;
}

/** Decodes the quoted token text[start, end) (quotes included, closed) as the lexer does (1.5). */
export function decodeQuoted(text: string, start: number, end: number): string {
  const close = end - 1;
  let i = backslashIn(text, start + 1, close);
  if (i >= close) return text.slice(start + 1, close);
  let value = text.slice(start + 1, i);
  while (i < close) {
    const c = text.charCodeAt(i);
    if (c === 92) {
      const next = text[i + 1]!;
      value += ESCAPES[next] ?? next;
      i += 2;
    } else {
      const j = backslashIn(text, i, close);
      value += text.slice(i, j);
      i = j;
    }
  }
  return value;
}

/** The 32-bit FNV-1a hash of text[start, end). */
function hashSpan(text: string, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function sameSpan(a: string, aStart: number, b: string, bStart: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (a.charCodeAt(aStart + k) !== b.charCodeAt(bStart + k)) return false;
  return true;
}

/**
 * An open-addressing table from spans of one text to dense ids 0, 1, 2, ... in insertion order.
 * Keys are compared in place, so looking a name up allocates nothing.
 */
export class SpanTable {
  private slots: Int32Array;
  private mask: number;
  /** Where each id's key lies in the text. */
  keyStart: Int32Array;
  keyEnd: Int32Array;
  size = 0;

  constructor(private readonly text: string, expected: number) {
    let cap = 16;
    while (cap < expected * 2) cap *= 2;
    this.slots = new Int32Array(cap);
    this.mask = cap - 1;
    this.keyStart = new Int32Array(Math.max(8, expected));
    this.keyEnd = new Int32Array(Math.max(8, expected));
  }

  /** The id of text[start, end), or -1. */
  find(start: number, end: number): number {
    return this.findIn(this.text, start, end);
  }

  /** The id of the key `source[start, end)` (any string), or -1. */
  findIn(source: string, start: number, end: number): number {
    return this.findHashed(source, start, end, hashSpan(source, start, end));
  }

  /** `findIn` with the key's hash (`hashSpan`) already known. */
  findHashed(source: string, start: number, end: number, hash: number): number {
    const length = end - start;
    const mask = this.mask;
    for (let slot = hash & mask; ;) {
      const v = this.slots[slot]!;
      // The next slot is computed on every probe, so that the first collision, which may come
      // late in a long plan, does not meet code that has never run (V8 would deoptimise there).
      const next = (slot + 1) & mask;
      if (v === 0) return -1;
      const id = v - 1;
      const s = this.keyStart[id]!;
      if (this.keyEnd[id]! - s === length && sameSpan(this.text, s, source, start, length)) return id;
      slot = next;
    }
  }

  /** Adds text[start, end) (which must be absent) and returns its id. */
  add(start: number, end: number): number {
    return this.addHashed(start, end, hashSpan(this.text, start, end));
  }

  /** `add` with the key's hash already known. */
  addHashed(start: number, end: number, hash: number): number {
    if ((this.size + 1) * 2 > this.slots.length) {
      this.rehash(this.slots.length * 2);
    }
    const id = this.size++;
    if (id === this.keyStart.length) {
      this.keyStart = grow(this.keyStart);
      this.keyEnd = grow(this.keyEnd);
    }
    this.keyStart[id] = start;
    this.keyEnd[id] = end;
    this.place(id, hash);
    return id;
  }

  private place(id: number, hash: number): void {
    const mask = this.mask;
    let slot = hash & mask;
    for (;;) {
      const next = (slot + 1) & mask;
      if (this.slots[slot] === 0) break;
      slot = next;
    }
    this.slots[slot] = id + 1;
  }

  private rehash(cap: number): void {
    this.slots = new Int32Array(cap);
    this.mask = cap - 1;
    for (let id = 0; id < this.size; id++) this.place(id, hashSpan(this.text, this.keyStart[id]!, this.keyEnd[id]!));
  }
}

export function grow(a: Int32Array): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

/** The arrays a builder fills; `SyntaxTree` reads them. */
export interface TreeArrays {
  readonly count: number;
  /** 0-based line of each declaration's header. */
  readonly header: Int32Array;
  /** First line of each declaration's attached comment run (its header line when none). */
  readonly commentStart: Int32Array;
  /** Offset of the inline comment's `#`, or -1. */
  readonly hash: Int32Array;
  /** Offset just after the header's code part. */
  readonly codeEnd: Int32Array;
  /** Offset just after the `@name` token. */
  readonly nameEnd: Int32Array;
  /** The command token, or -1 when the declaration has no command node. */
  readonly commandStart: Int32Array;
  readonly commandEnd: Int32Array;
  readonly commandKind: Uint8Array;
  /** Index into `commandNames`, or -1. */
  readonly commandId: Int32Array;
  readonly commandNames: readonly string[];
  /** Header arguments of declaration i: argument indices argFrom[i] .. argFrom[i + 1]. */
  readonly argFrom: Int32Array;
  readonly argKind: Uint8Array;
  readonly argStart: Int32Array;
  readonly argEnd: Int32Array;
  /** For references: the symbol (first declaration) the name resolves to, or -1. */
  readonly argTarget: Int32Array;
  /** Continuation or here-doc lines: first and last non-blank line, and the here-doc's end line (-1 when unterminated). */
  readonly bodyFirst: Int32Array;
  readonly bodyLast: Int32Array;
  readonly bodyEnd: Int32Array;
  readonly flags: Uint8Array;
  /** Symbols are first declarations of a name, numbered in source order. */
  readonly symbolCount: number;
  /** Declaration of each symbol. */
  readonly symbolDecl: Int32Array;
  /** Symbol of each declaration: its name's first declaration (-1 when the name is empty). */
  readonly declSymbol: Int32Array;
  readonly names: SpanTable;
}

/**
 * The compact syntax tree of one plan. Indices: declarations 0 .. count-1 in source order,
 * arguments in `argFrom` rows, symbols 0 .. symbolCount-1 (the first declaration of each name).
 */
export class SyntaxTree {
  readonly count: number;
  readonly symbolCount: number;
  private readonly nodes: (Declaration | undefined)[];
  private symbolNameList: string[] | null = null;
  private materialisedCount = 0;

  constructor(
    readonly text: string,
    readonly lines: Lines,
    readonly lineIndex: LineIndex,
    readonly a: TreeArrays,
  ) {
    this.count = a.count;
    this.symbolCount = a.symbolCount;
    this.nodes = new Array<Declaration | undefined>(a.count);
  }

  /** The declaration node of index i, materialised on first access (then the same object). */
  declaration(i: number): Declaration {
    let node = this.nodes[i];
    if (node === undefined) {
      node = this.nodes[i] = this.materialise(i);
      this.materialisedCount++;
    }
    return node;
  }

  /** How many declaration nodes have been materialised so far (what a host paid for). */
  materialised(): number {
    return this.materialisedCount;
  }

  /** Every declaration node, in source order. */
  declarations(): Declaration[] {
    const out = new Array<Declaration>(this.count);
    for (let i = 0; i < this.count; i++) out[i] = this.declaration(i);
    return out;
  }

  /** The variable name of declaration i ('' when missing). */
  name(i: number): string {
    return this.text.slice(this.lines.eff[this.a.header[i]!]! + 1, this.a.nameEnd[i]!);
  }

  /** 1-based line of declaration i's header. */
  lineNumber(i: number): number {
    return this.a.header[i]! + 1;
  }

  /** The `@name` token of declaration i. */
  nameRange(i: number): SourceRange {
    const n = this.a.header[i]!;
    return lineRange(n + 1, this.lines.start[n]!, this.lines.eff[n]!, this.a.nameEnd[i]!);
  }

  /** The command name of declaration i, or null. */
  commandName(i: number): string | null {
    const id = this.a.commandId[i]!;
    return id === -1 ? null : this.a.commandNames[id]!;
  }

  /** The command node's range of declaration i (it must have one). */
  commandRange(i: number): SourceRange {
    const n = this.a.header[i]!;
    return lineRange(n + 1, this.lines.start[n]!, this.a.commandStart[i]!, this.a.commandEnd[i]!);
  }

  hasError(i: number): boolean {
    return (this.a.flags[i]! & DeclFlag.HasError) !== 0;
  }

  /** The declaration of the first declaration named `name`, or -1. */
  indexOfName(name: string): number {
    const s = this.a.names.findIn(name, 0, name.length);
    return s === -1 ? -1 : this.a.symbolDecl[s]!;
  }

  /** The symbol (position among first declarations) named `name`, or -1. */
  symbolOf(name: string): number {
    return name === '' ? -1 : this.a.names.findIn(name, 0, name.length);
  }

  /** The names of all symbols, in order (built once). */
  symbolNames(): string[] {
    if (!this.symbolNameList) {
      const out = new Array<string>(this.symbolCount);
      for (let s = 0; s < this.symbolCount; s++) out[s] = this.name(this.a.symbolDecl[s]!);
      this.symbolNameList = out;
    }
    return this.symbolNameList;
  }

  /** The name a reference argument refers to (its token without `$`). */
  referenceName(arg: number): string {
    return this.text.slice(this.a.argStart[arg]! + 1, this.a.argEnd[arg]!);
  }

  /** The range of header argument `arg` of declaration i. */
  argRange(i: number, arg: number): SourceRange {
    const n = this.a.header[i]!;
    return lineRange(n + 1, this.lines.start[n]!, this.a.argStart[arg]!, this.a.argEnd[arg]!);
  }

  private materialise(i: number): Declaration {
    const { text, lines, a } = this;
    const n = a.header[i]!;
    const lineNumber = n + 1;
    const lineStart = lines.start[n]!;
    const name = this.name(i);
    const nameRange = this.nameRange(i);
    const id = a.commandId[i]!;
    const command: CommandNode | null = id === -1 ? null : {
      kind: 'command',
      name: a.commandNames[id]!,
      range: this.commandRange(i),
      quote: quoteOf(a.commandKind[i]!),
    };

    const from = a.argFrom[i]!;
    const to = a.argFrom[i + 1]!;
    const flags = a.flags[i]!;
    const bodyKind = flags & (DeclFlag.Continuation | DeclFlag.HereDoc);
    const argCount = to - from + (bodyKind !== 0 && (bodyKind === DeclFlag.Continuation || a.bodyEnd[i] !== -1) ? 1 : 0);
    let args: Argument[] = EMPTY;
    let dependencies: string[] = EMPTY;
    if (argCount > 0) {
      args = new Array<Argument>(argCount);
      let k = 0;
      for (let g = from; g < to; g++) {
        const s = a.argStart[g]!;
        const e = a.argEnd[g]!;
        const range = lineRange(lineNumber, lineStart, s, e);
        const kind = a.argKind[g]!;
        if (kind === TokenKind.Reference) {
          const ref = text.slice(s + 1, e);
          args[k++] = { kind: 'reference', name: ref, range } satisfies ReferenceArgument;
          if (dependencies === EMPTY) dependencies = [ref];
          else if (!dependencies.includes(ref)) dependencies.push(ref);
        } else if (kind === TokenKind.Word) {
          args[k++] = { kind: 'literal', value: text.slice(s, e), range, quote: null, origin: 'header' };
        } else {
          args[k++] = { kind: 'literal', value: decodeQuoted(text, s, e), range, quote: quoteOf(kind), origin: 'header' };
        }
      }
      if (k < argCount) args[k] = this.bodyArgument(i)!;
      if (dependencies !== EMPTY && dependencies.length > 1) dependencies = dependencies.slice();
    }

    // Comments: the attached run, then the inline comment (2.4).
    const commentStart = a.commentStart[i]!;
    const hash = a.hash[i]!;
    const codeEnd = a.codeEnd[i]!;
    let comments: CommentNode[] = EMPTY;
    let commentLines: string[] = EMPTY;
    let headerEnd = codeEnd;
    if (commentStart < n || hash !== -1) {
      comments = [];
      commentLines = [];
      for (let k = commentStart; k < n; k++) {
        const c = commentNode(text, lines, k);
        comments.push(c);
        commentLines.push(c.text);
      }
      if (hash !== -1) {
        const end = trimEnd(text, hash, lines.end[n]!);
        const inlineText = text.slice(hash + 1, end).trim();
        comments.push({ kind: 'comment', text: inlineText, range: lineRange(lineNumber, lineStart, hash, end), inline: true });
        if (inlineText !== '') commentLines.push(inlineText);
        headerEnd = end;
      }
      if (commentLines.length === 0) commentLines = EMPTY;
    }

    const headerRange = lineRange(lineNumber, lineStart, lines.eff[n]!, codeEnd);
    const last = a.bodyLast[i]!;
    const blockEndOffset = bodyKind !== 0 ? trimEnd(text, lines.start[last]!, lines.end[last]!) : headerEnd;
    return {
      kind: 'declaration',
      // Most declarations are one header line without a comment: share the range object.
      range: blockEndOffset > headerEnd ? this.lineIndex.range(headerRange.start, blockEndOffset)
        : headerEnd === codeEnd ? headerRange : lineRange(lineNumber, lineStart, headerRange.start, headerEnd),
      headerRange,
      name,
      nameRange,
      command,
      arguments: args,
      dependencies,
      lineNumber,
      commentLines,
      comment: commentLines.length === 0 ? '' : commentLines.join('\n').trim(),
      comments,
      body: bodyKind === 0 ? null : this.bodyNode(i),
      hasError: (flags & DeclFlag.HasError) !== 0,
    };
  }

  private lineText(k: number): string {
    return this.text.slice(this.lines.start[k]!, this.lines.end[k]!);
  }

  /** Range from the start of line `from` to the end of line `to` (0-based); empty at `emptyAt` when to < from. */
  private linesRange(from: number, to: number, emptyAt: number): SourceRange {
    if (to < from) return this.lineIndex.range(emptyAt, emptyAt);
    return this.lineIndex.range(this.lines.start[from]!, this.lines.end[to]!);
  }

  private heredocParts(i: number): { token: string; beginRange: SourceRange; endMarker: string } {
    const first = this.a.bodyFirst[i]!;
    const firstText = this.lineText(first).trim();
    const token = HEREDOC_BEGIN.exec(firstText)![1]!;
    const beginStart = skipWhitespace(this.text, this.lines.start[first]!, this.lines.end[first]!);
    return { token, beginRange: lineRange(first + 1, this.lines.start[first]!, beginStart, beginStart + firstText.length), endMarker: `--end-${token}--` };
  }

  /** The multi-line or here-doc argument of declaration i, or null. */
  private bodyArgument(i: number): Argument | null {
    const { a, lines } = this;
    const first = a.bodyFirst[i]!;
    const last = a.bodyLast[i]!;
    if ((a.flags[i]! & DeclFlag.Continuation) !== 0) {
      const parts: string[] = [];
      for (let k = first; k <= last; k++) parts.push(this.lineText(k));
      return { kind: 'literal', value: parts.join('\n'), range: this.linesRange(first, last, lines.start[first]!), quote: null, origin: 'continuation' };
    }
    const endLine = a.bodyEnd[i]!;
    if (endLine === -1) return null;
    const bodyLines: string[] = [];
    for (let k = first + 1; k < endLine; k++) bodyLines.push(this.lineText(k));
    return { kind: 'literal', value: bodyLines.join('\n'), range: this.linesRange(first + 1, endLine - 1, lines.start[endLine]!), quote: null, origin: 'heredoc' };
  }

  private bodyNode(i: number): Declaration['body'] {
    const { a, lines, text } = this;
    const first = a.bodyFirst[i]!;
    const last = a.bodyLast[i]!;
    if ((a.flags[i]! & DeclFlag.Continuation) !== 0) return { kind: 'continuation', range: this.linesRange(first, last, lines.start[first]!) };
    const { token, beginRange, endMarker } = this.heredocParts(i);
    const endLine = a.bodyEnd[i]!;
    if (endLine === -1) return { kind: 'heredoc', token, beginRange, bodyRange: this.linesRange(first + 1, last, beginRange.end), endRange: null };
    const endStart = skipWhitespace(text, lines.start[endLine]!, lines.end[endLine]!);
    return {
      kind: 'heredoc',
      token,
      beginRange,
      bodyRange: this.linesRange(first + 1, endLine - 1, lines.start[endLine]!),
      endRange: lineRange(endLine + 1, lines.start[endLine]!, endStart, endStart + endMarker.length),
    } satisfies HereDocBody;
  }
}

function quoteOf(kind: number): '"' | "'" | null {
  return kind === TokenKind.Double ? '"' : kind === TokenKind.Single ? "'" : null;
}

/** The comment node of comment line k. */
export function commentNode(text: string, lines: Lines, k: number): CommentNode {
  const hash = lines.eff[k]!;
  const end = trimEnd(text, hash, lines.end[k]!);
  return { kind: 'comment', text: text.slice(hash + 1, end).trim(), range: lineRange(k + 1, lines.start[k]!, hash, end), inline: false };
}
