/**
 * Incremental analysis of an open plan. Declarations are line-based blocks (attached comments,
 * header, continuation lines), so an edit touches a few of them: the new text is compared with
 * the last analysed one (common prefix and suffix), the blocks around the changed lines are cut
 * out as whole lines and parsed alone with core's `parsePlan`, and every other block is kept as
 * it was parsed, with an offset and line delta instead of copied ranges. A snapshot holds no
 * declaration node: each declaration is its chunk's compact syntax tree and its index there
 * (core's `SyntaxTree`), read from the tree's arrays. Absolute declaration nodes are materialised
 * only when a feature reads `analysis.plan` or `analysis.symbols`.
 *
 * What crosses blocks is recomputed here from the kept trees, in core's check order (4.1) and
 * with core's messages: duplicate declarations, undefined references, cycles, unknown commands,
 * unused variables. Names are looked up in a table of spans of the document (core's
 * `SpanTable`), so those passes allocate for diagnostics alone, and an edit costs the parse of
 * its blocks plus a linear pass over the arrays. `#!english` scripts are analysed whole by
 * `analyzePlan`. The result equals a fresh `analyzePlan` of the same text (diagnostics,
 * declarations, symbols, graph): guarded by `test/protocol/incremental.property.test.ts`.
 */
import {
  analyzePlan,
  BUILTIN_COMMANDS,
  buildSymbols,
  checkArgumentCount,
  codeInfo,
  cycleMessage,
  cyclePath,
  cyclicComponents,
  isEnglishSource,
  isFinalCommand,
  LineIndex,
  parsePlan,
  SpanTable,
  spanRanges,
  suggest,
  TokenKind,
  type Analysis,
  type Argument,
  type CommandSurface,
  type CommentNode,
  type Declaration,
  type Diagnostic,
  type Plan,
  type SourceRange,
  type Symbols,
  type SyntaxTree,
} from '@lightsop/core';

/** One parsed chunk of lines: its compact tree, and each declaration's own syntax diagnostics. */
export interface Chunk {
  /** In chunk coordinates: add a declaration's deltas for document positions. */
  readonly tree: SyntaxTree;
  /** Per declaration of the tree: its syntax diagnostics (duplicates excluded), or null. */
  readonly own: readonly (readonly Diagnostic[] | null)[];
}

interface Preamble {
  readonly diagnostics: readonly Diagnostic[];
  readonly freeComments: readonly CommentNode[];
}

/** One analysed text: what the next edit starts from. Declaration i is `index[i]` of `chunks[i].tree`. */
export interface PlanSnapshot {
  readonly text: string;
  readonly lineIndex: LineIndex;
  /** The chunk of each declaration; null for an `#!english` script (analysed whole). */
  readonly chunks: readonly Chunk[] | null;
  /** Each declaration's index in its chunk's tree. */
  readonly index: Int32Array;
  /** Offset and line deltas of each declaration, from its chunk to the document. */
  readonly offsetDelta: Int32Array;
  readonly lineDelta: Int32Array;
  /** The tree of the whole text, when it was parsed in one piece. */
  readonly tree: SyntaxTree | null;
  readonly preamble: Preamble;
  /** Did-you-mean hints of undeclared names, valid while the set of declared names is unchanged. */
  readonly hints: Map<string, string[]>;
  /** The results of the checks across blocks, kept while no edit changes a name, command or reference. */
  graph: Graph | null;
  /** The declaration nodes at their place in the document, once materialised. */
  placed: Declaration[] | null;
  /** Nodes of an earlier snapshot that are valid here too: those of declarations [0, limit). */
  inherited: { readonly decls: readonly Declaration[]; readonly limit: number } | null;
}

export interface IncrementalAnalysis {
  readonly analysis: Analysis;
  readonly snapshot: PlanSnapshot;
}

/** The options the server analyses with (the implicit `input` is always declared there). */
export interface IncrementalOptions {
  readonly commands: CommandSurface | null;
}

/** Lines and characters put before a chunk that does not start the document (see `parseChunk`). */
const CHUNK_PREFIX = '#\n\n';
const CHUNK_PREFIX_LINES = 2;
/** As core: did-you-mean for this many distinct undeclared names, none for the rest. */
const MAX_SUGGESTED_NAMES = 200;
const MAX_RELATED = 100;
/** Characters compared at once when looking for the common prefix and suffix. */
const COMPARE_CHUNK = 4096;

/** Analyses a whole text. */
export function analyzeFull(text: string, options: IncrementalOptions): IncrementalAnalysis {
  if (isEnglishSource(text)) return english(text, new LineIndex(text), options);
  const { chunk, preamble } = parseChunk(text, 0);
  // The tree's line index is the document's: the text was parsed as it is.
  const lineIndex = chunk.tree.lineIndex;
  const n = chunk.tree.count;
  const index = new Int32Array(n);
  for (let i = 0; i < n; i++) index[i] = i;
  const snapshot: PlanSnapshot = {
    text,
    lineIndex,
    chunks: new Array<Chunk>(n).fill(chunk),
    index,
    offsetDelta: new Int32Array(n),
    lineDelta: new Int32Array(n),
    tree: chunk.tree,
    preamble,
    hints: new Map(),
    graph: null,
    placed: null,
    inherited: null,
  };
  return { analysis: buildAnalysis(snapshot, options), snapshot };
}

/**
 * Analyses `text` starting from the snapshot of an earlier text of the same document: only the
 * blocks on changed lines are parsed again. Any sequence of edits in between is one diff.
 */
export function analyzeEdit(previous: PlanSnapshot, text: string, options: IncrementalOptions): IncrementalAnalysis {
  const chunks = previous.chunks;
  if (chunks === null || isEnglishSource(text)) return analyzeFull(text, options);
  const old = previous.text;
  if (old === text) return { analysis: buildAnalysis(previous, options), snapshot: previous };

  const prefix = commonPrefix(old, text);
  const suffix = commonSuffix(old, text, prefix);
  const oldLines = previous.lineIndex;
  /** First and last changed lines of the old text, 0-based (the last one conservatively). */
  const firstChanged = oldLines.lineOf(prefix) - 1;
  const lastChanged = oldLines.lineOf(old.length - suffix) - 1;
  const { index, offsetDelta, lineDelta } = previous;
  const n = index.length;
  const headerLine = (i: number) => chunks[i]!.tree.a.header[index[i]!]! + lineDelta[i]!;
  const blockLine = (i: number) => chunks[i]!.tree.a.commentStart[index[i]!]! + lineDelta[i]!;

  // The chunk starts at the block of the last header above the first changed line: that block
  // may grow or shrink, and its start cannot move (its header and attached comments are above
  // the change, and the line before them is no comment). Without such a header, at line 0.
  const firstAtOrAfter = lowerBound(n, (i) => headerLine(i) >= firstChanged);
  const from = Math.max(0, firstAtOrAfter - 1);
  const startLine = firstAtOrAfter === 0 ? 0 : blockLine(from);
  // It ends at the first block that starts two lines or more after the last changed line, so
  // that the line before it is unchanged too (a new comment there would attach to it).
  const to = lowerBound(n, (i) => blockLine(i) >= lastChanged + 2);
  const startOffset = startLine === 0 ? 0 : oldLines.lineStarts[startLine]!;
  const sizeDelta = text.length - old.length;
  const endOffsetOld = to < n ? oldLines.lineStarts[blockLine(to)]! : old.length;
  const endOffset = endOffsetOld + sizeDelta;

  const lineIndex = new LineIndex(text, editLineStarts(oldLines.lineStarts, text, firstChanged, lastChanged, sizeDelta));
  const linesDelta = lineIndex.lineCount - oldLines.lineCount;
  const { chunk, preamble } = parseChunk(text.slice(startOffset, endOffset), startLine);
  const chunkOffset = startLine === 0 ? startOffset : startOffset - CHUNK_PREFIX.length;
  const chunkLine = startLine === 0 ? 0 : startLine - CHUNK_PREFIX_LINES;

  const added = chunk.tree.count;
  const count = from + added + (n - to);
  const nextIndex = new Int32Array(count);
  const nextOffset = new Int32Array(count);
  const nextLine = new Int32Array(count);
  nextIndex.set(index.subarray(0, from));
  nextOffset.set(offsetDelta.subarray(0, from));
  nextLine.set(lineDelta.subarray(0, from));
  for (let k = 0; k < added; k++) nextIndex[from + k] = k;
  nextOffset.fill(chunkOffset, from, from + added);
  nextLine.fill(chunkLine, from, from + added);
  nextIndex.set(index.subarray(to), from + added);
  for (let i = to, k = from + added; i < n; i++, k++) {
    nextOffset[k] = offsetDelta[i]! + sizeDelta;
    nextLine[k] = lineDelta[i]! + linesDelta;
  }

  // The hints stay valid while the declared names are the same, in the same order; the checks
  // across blocks while names, commands and references are.
  let sameNames = to - from === added;
  let sameGraph = sameNames;
  for (let k = 0; sameNames && k < added; k++) {
    const a = chunks[from + k]!.tree;
    const i = index[from + k]!;
    sameNames = a.name(i) === chunk.tree.name(k);
    sameGraph &&= sameNames && a.commandName(i) === chunk.tree.commandName(k) && sameReferences(a, i, chunk.tree, k);
  }

  const snapshot: PlanSnapshot = {
    text,
    lineIndex,
    chunks: chunks.slice(0, from).concat(new Array<Chunk>(added).fill(chunk), chunks.slice(to)),
    index: nextIndex,
    offsetDelta: nextOffset,
    lineDelta: nextLine,
    tree: null,
    preamble: startLine === 0 ? preamble : previous.preamble,
    hints: sameNames ? previous.hints : new Map(),
    graph: null,
    placed: null,
    // Declarations above the edit kept their deltas, so their nodes are still right.
    inherited: previous.placed ? { decls: previous.placed, limit: from }
      : previous.inherited && { decls: previous.inherited.decls, limit: Math.min(from, previous.inherited.limit) },
  };
  if (sameGraph) snapshot.graph = previous.graph;
  else if (sameNames && previous.graph) snapshot.graph = updateGraph(previous.graph, previous, snapshot, from, to);
  return { analysis: buildAnalysis(snapshot, options), snapshot };
}

/**
 * The first declaration of every name of an analysed text, read from the incremental state
 * without materialising declaration nodes: completion ranks thousands of names by where they
 * are declared, and shows a few of them.
 */
export interface DeclaredNames {
  /** How many names are declared. */
  readonly size: number;
  /** The k-th declared name, in the order of first declarations (source order). */
  name(k: number): string;
  /** Where the k-th name's first declaration's header starts (its `@`): increasing with k. */
  headerStart(k: number): number;
  /** The k-th name's first declaration, at its place in the document. */
  declaration(k: number): Declaration;
  has(name: string): boolean;
}

const NOTHING_DECLARED: DeclaredNames = {
  size: 0,
  name: () => '',
  headerStart: () => 0,
  declaration: () => {
    throw new RangeError('no declaration');
  },
  has: () => false,
};

/** The declared names of the text a snapshot holds (none for an `#!english` script). */
export function declaredNames(snapshot: PlanSnapshot): DeclaredNames {
  const chunks = snapshot.chunks;
  const graph = snapshot.graph;
  if (chunks === null || graph === null) return NOTHING_DECLARED;
  const { index, offsetDelta, lineDelta } = snapshot;
  const { firsts, names } = graph;
  return {
    size: firsts.length,
    name: (k) => nameListOf(graph)[k]!,
    headerStart: (k) => {
      const i = firsts[k]!;
      const tree = chunks[i]!.tree;
      return tree.lines.eff[tree.a.header[index[i]!]!]! + offsetDelta[i]!;
    },
    declaration: (k) => {
      const i = firsts[k]!;
      return snapshot.placed?.[i] ?? shiftDeclaration(chunks[i]!.tree.declaration(index[i]!), offsetDelta[i]!, lineDelta[i]!);
    },
    has: (name) => names.findIn(name, 0, name.length) !== -1,
  };
}

/** True when declaration i of tree a and declaration j of tree b reference the same names in the same order. */
function sameReferences(a: SyntaxTree, i: number, b: SyntaxTree, j: number): boolean {
  let g = a.a.argFrom[i]!;
  let h = b.a.argFrom[j]!;
  const gEnd = a.a.argFrom[i + 1]!;
  const hEnd = b.a.argFrom[j + 1]!;
  for (;;) {
    while (g < gEnd && a.a.argKind[g] !== TokenKind.Reference) g++;
    while (h < hEnd && b.a.argKind[h] !== TokenKind.Reference) h++;
    if (g === gEnd || h === hEnd) return g === gEnd && h === hEnd;
    if (a.referenceName(g) !== b.referenceName(h)) return false;
    g++;
    h++;
  }
}

/**
 * The line starts of the new text: those up to the first changed line are kept, those after
 * the last one shifted, and only the lines in between are scanned.
 */
function editLineStarts(old: ArrayLike<number>, text: string, firstChanged: number, lastChanged: number, sizeDelta: number): Int32Array {
  const tailFrom = lastChanged + 1;
  const tail = old.length - tailFrom;
  const middle: number[] = [];
  const scanEnd = tailFrom < old.length ? old[tailFrom]! + sizeDelta - 1 : text.length;
  for (let i = text.indexOf('\n', old[firstChanged]!); i !== -1 && i < scanEnd; i = text.indexOf('\n', i + 1)) middle.push(i + 1);
  const out = new Int32Array(firstChanged + 1 + middle.length + tail);
  for (let k = 0; k <= firstChanged; k++) out[k] = old[k]!;
  out.set(middle, firstChanged + 1);
  for (let k = 0, o = firstChanged + 1 + middle.length; k < tail; k++, o++) out[o] = old[tailFrom + k]! + sizeDelta;
  return out;
}

function english(text: string, lineIndex: LineIndex, options: IncrementalOptions): IncrementalAnalysis {
  const analysis = analyzePlan(text, { commands: options.commands });
  const snapshot: PlanSnapshot = {
    text,
    lineIndex,
    chunks: null,
    index: new Int32Array(0),
    offsetDelta: new Int32Array(0),
    lineDelta: new Int32Array(0),
    tree: analysis.tree,
    preamble: { diagnostics: [], freeComments: [] },
    hints: new Map(),
    graph: null,
    placed: null,
    inherited: null,
  };
  return { analysis, snapshot };
}

/** Index of the first i in [0, n) with `test(i)` true, for a `test` that is monotonic; n when none. */
function lowerBound(n: number, test: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (test(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i + COMPARE_CHUNK <= max && a.slice(i, i + COMPARE_CHUNK) === b.slice(i, i + COMPARE_CHUNK)) i += COMPARE_CHUNK;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Length of the common suffix that does not overlap the first `prefix` characters of either. */
function commonSuffix(a: string, b: string, prefix: number): number {
  const max = Math.min(a.length, b.length) - prefix;
  let k = 0;
  while (k + COMPARE_CHUNK <= max && a.slice(a.length - k - COMPARE_CHUNK, a.length - k) === b.slice(b.length - k - COMPARE_CHUNK, b.length - k)) k += COMPARE_CHUNK;
  while (k < max && a.charCodeAt(a.length - k - 1) === b.charCodeAt(b.length - k - 1)) k++;
  return k;
}

/**
 * Parses whole lines of a document that start at 0-based line `startLine`, on a block start.
 * A chunk after line 0 is parsed behind a free comment and a blank line, so that a first line
 * such as `# !english` attached to a declaration is not read as an english script header, and
 * nothing of the chunk attaches to the prefix. Its preamble is then the prefix alone.
 */
function parseChunk(chunkText: string, startLine: number): { chunk: Chunk; preamble: Preamble } {
  const { plan, tree, diagnostics } = parsePlan(startLine === 0 ? chunkText : CHUNK_PREFIX + chunkText);
  const header = tree.a.header;
  const count = tree.count;
  const own = new Array<Diagnostic[] | null>(count).fill(null);
  const preamble: Diagnostic[] = [];
  // Diagnostics come in declaration order, each on a line of its own declaration's block.
  let k = -1;
  for (const d of diagnostics) {
    while (k + 1 < count && header[k + 1]! + 1 <= d.range.line) k++;
    if (d.code === 'duplicate-declaration') continue;
    if (k < 0) preamble.push(d);
    else (own[k] ??= []).push(d);
  }
  return { chunk: { tree, own }, preamble: { diagnostics: preamble, freeComments: startLine === 0 ? plan.freeComments : [] } };
}

// ---------------------------------------------------------------------------------------------
// Shifting: a kept block's ranges are its chunk ranges moved by whole lines.

function shiftRange(r: SourceRange, offset: number, line: number): SourceRange {
  if (offset === 0 && line === 0) return r;
  return { start: r.start + offset, end: r.end + offset, line: r.line + line, column: r.column, endLine: r.endLine + line, endColumn: r.endColumn };
}

function shiftDiagnostic(d: Diagnostic, offset: number, line: number): Diagnostic {
  if (offset === 0 && line === 0) return d;
  const out: { -readonly [K in keyof Diagnostic]: Diagnostic[K] } = { code: d.code, severity: d.severity, message: d.message, range: shiftRange(d.range, offset, line) };
  if (d.related) out.related = d.related.map((r) => ({ message: r.message, range: shiftRange(r.range, offset, line) }));
  if (d.data) out.data = d.data;
  return out;
}

function shiftArgument(a: Argument, offset: number, line: number): Argument {
  const range = shiftRange(a.range, offset, line);
  return a.kind === 'reference'
    ? { kind: 'reference', name: a.name, range }
    : { kind: 'literal', value: a.value, range, quote: a.quote, origin: a.origin };
}

function shiftComment(c: CommentNode, offset: number, line: number): CommentNode {
  return { kind: 'comment', text: c.text, range: shiftRange(c.range, offset, line), inline: c.inline };
}

/** The declaration at its place in the document. */
function shiftDeclaration(d: Declaration, offset: number, line: number): Declaration {
  if (offset === 0 && line === 0) return d;
  const s = (r: SourceRange) => shiftRange(r, offset, line);
  const body = d.body;
  return {
    kind: 'declaration',
    range: s(d.range),
    headerRange: s(d.headerRange),
    name: d.name,
    nameRange: s(d.nameRange),
    command: d.command && { kind: 'command', name: d.command.name, range: s(d.command.range), quote: d.command.quote },
    arguments: d.arguments.map((a) => shiftArgument(a, offset, line)),
    dependencies: d.dependencies,
    lineNumber: d.lineNumber + line,
    commentLines: d.commentLines,
    comment: d.comment,
    comments: d.comments.map((c) => shiftComment(c, offset, line)),
    body: body === null ? null
      : body.kind === 'continuation' ? { kind: 'continuation', range: s(body.range) }
        : { kind: 'heredoc', token: body.token, beginRange: s(body.beginRange), bodyRange: s(body.bodyRange), endRange: body.endRange && s(body.endRange) },
    hasError: d.hasError,
  };
}

// ---------------------------------------------------------------------------------------------
// The checks that cross blocks, in check order, with core's messages. Their results are kept in
// a relocatable form (declaration index and which range of it), so that an edit that changes no
// name, command or reference reuses them and only places them again.

/** Which range of a declaration: its name, its command, or its k-th reference argument (k >= 0). */
const NAME = -1;
const COMMAND = -2;
/** `at` <= ARGUMENTS_FROM: the arguments from index ARGUMENTS_FROM - at to the last one. */
const ARGUMENTS_FROM = -3;

interface Located {
  readonly item: number;
  readonly at: number;
}

interface GraphDiagnostic extends Located {
  readonly code: Diagnostic['code'];
  readonly severity: Diagnostic['severity'];
  readonly message: string;
  readonly data: NonNullable<Diagnostic['data']>;
  readonly related?: readonly (Located & { readonly message: string })[];
}

interface Graph {
  /**
   * The symbol table's core: each declared name as a span of `text` (the document they were
   * collected from), numbered k in the order of their first declarations. Any text's span is
   * looked up in place, without a string.
   */
  readonly names: SpanTable;
  readonly text: string;
  /** Declaration index of the k-th first declaration. */
  readonly firsts: Int32Array;
  /** k of each declaration that is a first declaration, else -1. */
  readonly firstK: Int32Array;
  /** Index of the first declaration of each declaration's name when it is a duplicate, else -1. */
  readonly duplicateOf: Int32Array;
  /** The declared dependencies of the k-th first declaration, each once, in reference order, as positions k: depTo[depFrom[k] .. depFrom[k + 1]). */
  readonly depFrom: Int32Array;
  readonly depTo: Int32Array;
  /** How many declarations reference the k-th first declaration (each counted once). */
  readonly useCount: Int32Array;
  readonly undefinedRefs: readonly GraphDiagnostic[];
  /** Distinct undeclared names among them. */
  readonly undefinedNames: number;
  readonly cycles: readonly GraphDiagnostic[];
  readonly unused: readonly GraphDiagnostic[];
  /** Unknown commands, for the command surface they were checked against. */
  commands: { readonly surface: CommandSurface; readonly diagnostics: readonly GraphDiagnostic[] } | null;
  /** The declared names as strings, for did-you-mean (built on first use). */
  nameList: string[] | null;
}

/** The k-th declared name. */
function nameOf(graph: Graph, k: number): string {
  return graph.text.slice(graph.names.keyStart[k]!, graph.names.keyEnd[k]!);
}

/** Every declared name, in order (built once per graph). */
function nameListOf(graph: Graph): string[] {
  return (graph.nameList ??= Array.from({ length: graph.firsts.length }, (_, k) => nameOf(graph, k)));
}

function didYouMean(suggestions: readonly string[]): string {
  if (suggestions.length === 0) return '';
  return ` Did you mean ${suggestions.map((s) => `'${s}'`).join(' or ')}?`;
}

/** The range of the k-th reference argument of declaration d (its name's when there is none). */
function referenceRange(tree: SyntaxTree, d: number, k: number): SourceRange {
  const { argFrom, argKind } = tree.a;
  let seen = 0;
  for (let g = argFrom[d]!; g < argFrom[d + 1]!; g++) if (argKind[g] === TokenKind.Reference && seen++ === k) return tree.argRange(d, g);
  return tree.nameRange(d);
}

function buildAnalysis(snapshot: PlanSnapshot, options: IncrementalOptions): Analysis {
  const chunks = snapshot.chunks!;
  const { index, offsetDelta, lineDelta, text, lineIndex } = snapshot;
  const n = index.length;
  const graph = (snapshot.graph ??= computeGraph(snapshot));
  if (options.commands && graph.commands?.surface !== options.commands) {
    graph.commands = { surface: options.commands, diagnostics: checkCommands(snapshot, options.commands, 0, n) };
  }
  const rangeOf = (i: number, at: number): SourceRange => {
    const tree = chunks[i]!.tree;
    const d = index[i]!;
    let range: SourceRange;
    if (at === NAME) range = tree.nameRange(d);
    else if (at === COMMAND) range = tree.commandRange(d);
    else if (at <= ARGUMENTS_FROM) {
      const args = tree.declaration(d).arguments;
      range = spanRanges(args[ARGUMENTS_FROM - at]!.range, args[args.length - 1]!.range);
    } else range = referenceRange(tree, d, at);
    return shiftRange(range, offsetDelta[i]!, lineDelta[i]!);
  };
  const place = (g: GraphDiagnostic): Diagnostic => {
    const out: { -readonly [K in keyof Diagnostic]: Diagnostic[K] } = { code: g.code, severity: g.severity, message: g.message, range: rangeOf(g.item, g.at), data: g.data };
    if (g.related) out.related = g.related.map((r) => ({ message: r.message, range: rangeOf(r.item, r.at) }));
    return out;
  };

  // Syntax diagnostics with duplicates, per declaration (4.1): the lexical error first.
  const diagnostics: Diagnostic[] = snapshot.preamble.diagnostics.slice();
  const duplicateSeverity = codeInfo('duplicate-declaration').severity;
  const { duplicateOf } = graph;
  for (let i = 0; i < n; i++) {
    const own = chunks[i]!.own[index[i]!] ?? null;
    const firstIndex = duplicateOf[i]!;
    if (own === null && firstIndex < 0) continue;
    const list = own ?? [];
    let k = 0;
    for (; k < list.length && (list[k]!.code === 'unterminated-string' || list[k]!.code === 'invalid-escape'); k++) diagnostics.push(shiftDiagnostic(list[k]!, offsetDelta[i]!, lineDelta[i]!));
    if (firstIndex >= 0) {
      const name = chunks[i]!.tree.name(index[i]!);
      const firstLine = chunks[firstIndex]!.tree.lineNumber(index[firstIndex]!) + lineDelta[firstIndex]!;
      diagnostics.push({
        code: 'duplicate-declaration',
        severity: duplicateSeverity,
        message: `Variable '${name}' is already declared on line ${firstLine}`,
        range: rangeOf(i, NAME),
        data: { name },
        related: [{ message: `'${name}' is first declared here`, range: rangeOf(firstIndex, NAME) }],
      });
    }
    for (; k < list.length; k++) diagnostics.push(shiftDiagnostic(list[k]!, offsetDelta[i]!, lineDelta[i]!));
  }
  for (const list of [graph.undefinedRefs, graph.cycles, options.commands ? graph.commands!.diagnostics : [], graph.unused]) {
    for (const g of list) diagnostics.push(place(g));
  }

  let plan: Plan | null = null;
  let symbols: Symbols | null = null;
  let tree: SyntaxTree | null = snapshot.tree;
  const materialise = (): Plan => {
    if (!plan) {
      let declarations = snapshot.placed;
      if (!declarations) {
        // Declarations above the edits keep the nodes an earlier snapshot materialised; the
        // others are their chunk's nodes (cached by the tree) moved to their place.
        declarations = new Array<Declaration>(n);
        const inherited = snapshot.inherited;
        const reuse = inherited ? inherited.limit : 0;
        for (let i = 0; i < n; i++) {
          declarations[i] = i < reuse ? inherited!.decls[i]! : shiftDeclaration(chunks[i]!.tree.declaration(index[i]!), offsetDelta[i]!, lineDelta[i]!);
        }
        snapshot.placed = declarations;
        snapshot.inherited = null;
      }
      plan = { kind: 'plan', range: lineIndex.range(0, text.length), english: null, declarations, freeComments: snapshot.preamble.freeComments };
    }
    return plan;
  };
  return {
    source: text,
    lineIndex,
    diagnostics,
    // The server always declares the implicit input (IncrementalOptions).
    inputDeclared: true,
    commandsChecked: options.commands !== null,
    get plan() {
      return materialise();
    },
    get symbols() {
      symbols ??= buildSymbols(materialise());
      return symbols;
    },
    // Nothing in the server reads the compact tree of an edited text; a caller that does pays for one parse.
    get tree() {
      tree ??= parsePlan(text).tree;
      return tree;
    },
  };
}

/** Runs the checks across blocks over every declaration (but unknown commands, checked per surface). */
function computeGraph(snapshot: PlanSnapshot): Graph {
  const chunks = snapshot.chunks!;
  const { index, offsetDelta, text } = snapshot;
  const n = index.length;
  // A text parsed in one piece: its tree already resolved every name (its symbols are the
  // first declarations in order, its name table holds spans of the document).
  const whole = snapshot.tree;
  const names = whole ? whole.a.names : new SpanTable(text, n);
  const firstK = new Int32Array(n).fill(-1);
  const duplicateOf = new Int32Array(n).fill(-1);
  let firsts: Int32Array;
  if (whole) {
    const { symbolDecl, declSymbol } = whole.a;
    firsts = symbolDecl;
    for (let i = 0; i < n; i++) {
      const k = declSymbol[i]!;
      if (k === -1) continue;
      if (symbolDecl[k] === i) firstK[i] = k;
      else duplicateOf[i] = symbolDecl[k]!;
    }
  } else {
    // First declarations and duplicates: names are added as spans of the document.
    firsts = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const tree = chunks[i]!.tree;
      const d = index[i]!;
      const start = tree.lines.eff[tree.a.header[d]!]! + 1;
      const end = tree.a.nameEnd[d]!;
      if (end === start) continue;
      const k = names.findIn(tree.text, start, end);
      if (k !== -1) duplicateOf[i] = firsts[k]!;
      else {
        const added = names.add(start + offsetDelta[i]!, end + offsetDelta[i]!);
        firsts[added] = i;
        firstK[i] = added;
      }
    }
  }
  const count = names.size;
  // References: each declaration's distinct declared targets, counted once per declaration; a
  // first declaration's are its row of dependencies.
  const useCount = new Int32Array(count);
  const seenBy = new Int32Array(count);
  const depFrom = new Int32Array(count + 1);
  let depTo = new Int32Array(Math.max(16, count * 2));
  let edges = 0;
  let undeclared = 0;
  for (let i = 0; i < n; i++) {
    const tree = chunks[i]!.tree;
    const { argFrom, argKind, argStart, argEnd } = tree.a;
    const d = index[i]!;
    const k = firstK[i]!;
    if (k >= 0) depFrom[k] = edges;
    for (let g = argFrom[d]!; g < argFrom[d + 1]!; g++) {
      if (argKind[g] !== TokenKind.Reference) continue;
      const j = whole ? whole.a.argTarget[g]! : names.findIn(tree.text, argStart[g]! + 1, argEnd[g]!);
      if (j === -1) undeclared++;
      else if (seenBy[j] !== i + 1) {
        seenBy[j] = i + 1;
        useCount[j]!++;
        if (k < 0) continue;
        if (edges === depTo.length) {
          const grown = new Int32Array(edges * 2);
          grown.set(depTo);
          depTo = grown;
        }
        depTo[edges++] = j;
      }
    }
  }
  depFrom[count] = edges;
  const graph: Graph = {
    names,
    text,
    firsts: firsts.length === count ? firsts : firsts.subarray(0, count),
    firstK,
    duplicateOf,
    depFrom,
    depTo: depTo.subarray(0, edges),
    useCount,
    undefinedRefs: [],
    undefinedNames: 0,
    cycles: [],
    unused: [],
    commands: null,
    nameList: null,
  };
  const undefinedRefs = undeclared > 0 ? checkUndefined(snapshot, graph, 0, n) : [];
  return { ...graph, undefinedRefs, undefinedNames: distinctNames(undefinedRefs), cycles: checkCycles(snapshot, graph), unused: checkUnused(snapshot, graph) };
}

/** The distinct declared names declaration i references, as positions k, in reference order. */
function targetsOf(graph: Graph, snapshot: PlanSnapshot, i: number): number[] {
  const tree = snapshot.chunks![i]!.tree;
  const d = snapshot.index[i]!;
  const { argFrom, argKind, argStart, argEnd } = tree.a;
  const out: number[] = [];
  for (let g = argFrom[d]!; g < argFrom[d + 1]!; g++) {
    if (argKind[g] !== TokenKind.Reference) continue;
    const j = graph.names.findIn(tree.text, argStart[g]! + 1, argEnd[g]!);
    if (j !== -1 && !out.includes(j)) out.push(j);
  }
  return out;
}

/**
 * The checks again after an edit that kept every declared name in place (declarations
 * [from, to) were parsed again, as many as before): only their references are resolved and
 * counted again and their diagnostics replaced; cycles and unused variables are read from the
 * updated integer tables, without a name lookup.
 */
function updateGraph(previous: Graph, old: PlanSnapshot, snapshot: PlanSnapshot, from: number, to: number): Graph {
  const useCount = previous.useCount.slice();
  const rows = new Map<number, number[]>();
  for (let i = from; i < to; i++) {
    for (const j of targetsOf(previous, old, i)) useCount[j]!--;
    const now = targetsOf(previous, snapshot, i);
    for (const j of now) useCount[j]!++;
    const k = previous.firstK[i]!;
    if (k >= 0) rows.set(k, now);
  }
  const splice = (list: readonly GraphDiagnostic[], fresh: readonly GraphDiagnostic[]): GraphDiagnostic[] => {
    const a = lowerBound(list.length, (x) => list[x]!.item >= from);
    const b = lowerBound(list.length, (x) => list[x]!.item >= to);
    return list.slice(0, a).concat(fresh, list.slice(b));
  };
  const graph: Graph = { ...previous, ...replaceRows(previous.depFrom, previous.depTo, rows), useCount, cycles: [], unused: [] };
  // Hints go to the first 200 distinct undeclared names: splicing keeps them right while every
  // name gets them, before and after.
  let undefinedRefs = splice(previous.undefinedRefs, checkUndefined(snapshot, graph, from, to));
  let undefinedNames = distinctNames(undefinedRefs);
  if (previous.undefinedNames > MAX_SUGGESTED_NAMES || undefinedNames > MAX_SUGGESTED_NAMES) {
    undefinedRefs = checkUndefined(snapshot, graph, 0, snapshot.index.length);
    undefinedNames = distinctNames(undefinedRefs);
  }
  const commands = previous.commands;
  return {
    ...graph,
    undefinedRefs,
    undefinedNames,
    cycles: checkCycles(snapshot, graph),
    unused: checkUnused(snapshot, graph),
    commands: commands && { surface: commands.surface, diagnostics: splice(commands.diagnostics, checkCommands(snapshot, commands.surface, from, to)) },
  };
}

/** Compressed rows with the rows of `rows` (ascending keys) replaced. */
function replaceRows(depFrom: Int32Array, depTo: Int32Array, rows: ReadonlyMap<number, readonly number[]>): { depFrom: Int32Array; depTo: Int32Array } {
  if (rows.size === 0) return { depFrom, depTo };
  const count = depFrom.length - 1;
  let size = depFrom[count]!;
  for (const [k, row] of rows) size += row.length - (depFrom[k + 1]! - depFrom[k]!);
  const nextFrom = new Int32Array(count + 1);
  const nextTo = new Int32Array(size);
  let e = 0;
  let k = 0;
  /** Copies rows k .. until-1 as they were. */
  const copy = (until: number) => {
    const a = depFrom[k]!;
    const b = depFrom[until]!;
    nextTo.set(depTo.subarray(a, b), e);
    for (; k < until; k++) nextFrom[k] = depFrom[k]! - a + e;
    e += b - a;
  };
  for (const [r, row] of rows) {
    copy(r);
    nextFrom[r] = e;
    nextTo.set(row, e);
    e += row.length;
    k = r + 1;
  }
  copy(count);
  nextFrom[count] = e;
  return { depFrom: nextFrom, depTo: nextTo };
}

function distinctNames(list: readonly GraphDiagnostic[]): number {
  const names = new Set<string>();
  for (const g of list) names.add(g.data.name!);
  return names.size;
}

/** `undefined-variable` for the references of declarations [from, to). */
function checkUndefined(snapshot: PlanSnapshot, graph: Graph, from: number, to: number): GraphDiagnostic[] {
  const chunks = snapshot.chunks!;
  const hints = snapshot.hints;
  const out: GraphDiagnostic[] = [];
  const ranked = new Set<string>();
  let candidates: string[] | null = null;
  for (let i = from; i < to; i++) {
    const tree = chunks[i]!.tree;
    const d = snapshot.index[i]!;
    const { argFrom, argKind, argStart, argEnd } = tree.a;
    let r = -1;
    for (let g = argFrom[d]!; g < argFrom[d + 1]!; g++) {
      if (argKind[g] !== TokenKind.Reference) continue;
      r++;
      if (graph.names.findIn(tree.text, argStart[g]! + 1, argEnd[g]!) !== -1) continue;
      const name = tree.referenceName(g);
      if (name === 'input') continue;
      let h: string[] = [];
      if (ranked.has(name) || ranked.size < MAX_SUGGESTED_NAMES) {
        ranked.add(name);
        let known = hints.get(name);
        if (!known) {
          candidates ??= nameListOf(graph).concat('input');
          known = suggest(name, candidates);
          hints.set(name, known);
        }
        h = known;
      }
      const userName = tree.name(d);
      const user = userName === '' ? '' : ` (used by '${userName}')`;
      out.push({
        item: i,
        at: r,
        code: 'undefined-variable',
        severity: 'error',
        message: `Variable '${name}' is not declared${user}${h.length ? '.' + didYouMean(h) : ''}`,
        data: { name, suggestions: h },
      });
    }
  }
  return out;
}

/** `unknown-command` and `argument-count` for declarations [from, to), as core's checkCommands gives them. */
function checkCommands(snapshot: PlanSnapshot, commands: CommandSurface, from: number, to: number): GraphDiagnostic[] {
  const chunks = snapshot.chunks!;
  const out: GraphDiagnostic[] = [];
  let names: string[] | null = null;
  const cache = new Map<string, string[]>();
  for (let i = from; i < to; i++) {
    const tree = chunks[i]!.tree;
    const d = snapshot.index[i]!;
    const command = tree.commandName(d);
    if (command === null || BUILTIN_COMMANDS.includes(command)) continue;
    if (commands.has(command)) {
      const spec = commands.get(command);
      // Only commands whose provider gives an arity (MCP tools) materialise their declarations.
      const problem = spec?.arguments ? checkArgumentCount(tree.declaration(d), spec) : null;
      if (problem) {
        const tooMany = tree.declaration(d).arguments.length > spec!.arguments!.maximum;
        out.push({ item: i, at: tooMany ? ARGUMENTS_FROM - spec!.arguments!.maximum : COMMAND, code: problem.code, severity: problem.severity, message: problem.message, data: problem.data ?? {} });
      }
      continue;
    }
    if (commands.mayBeUnlisted(command)) continue;
    let suggestions = cache.get(command);
    if (!suggestions) {
      names ??= [...commands.names, ...BUILTIN_COMMANDS];
      suggestions = suggest(command, names);
      cache.set(command, suggestions);
    }
    out.push({
      item: i,
      at: COMMAND,
      code: 'unknown-command',
      severity: 'error',
      message: `Unknown command '${command}': it is not in the skills description.${didYouMean(suggestions)}`.replace(/\.$/, ''),
      data: { name: command, suggestions },
    });
  }
  return out;
}

function checkUnused(snapshot: PlanSnapshot, graph: Graph): GraphDiagnostic[] {
  const chunks = snapshot.chunks!;
  const { firsts, useCount } = graph;
  const out: GraphDiagnostic[] = [];
  for (let k = 0; k < firsts.length; k++) {
    if (useCount[k]! > 0) continue;
    const i = firsts[k]!;
    const name = nameOf(graph, k);
    if (name === 'lastAnswer') continue;
    const command = chunks[i]!.tree.commandName(snapshot.index[i]!);
    if (command !== null && isFinalCommand(command)) continue;
    out.push({
      item: i,
      at: NAME,
      code: 'unused-variable',
      severity: command === 'assign' ? 'warning' : 'info',
      message: `Variable '${name}' is never used`,
      data: { name },
    });
  }
  return out;
}

/**
 * `cycle`: one diagnostic per strongly connected component with a cycle, as core reports it
 * (core's `cyclicComponents` and `cyclePath`: the component's first declaration, its first
 * reference into the component, the shortest path back, the other members as related
 * locations), ordered by that reference.
 */
function checkCycles(snapshot: PlanSnapshot, graph: Graph): GraphDiagnostic[] {
  const { firsts, depFrom, depTo } = graph;
  const { components, deps } = cyclicComponents(firsts.length, depFrom, depTo);
  const out: GraphDiagnostic[] = [];
  for (const members of components) {
    const set = new Set(members);
    const first = members[0]!;
    const i = firsts[first]!;
    const tree = snapshot.chunks![i]!.tree;
    const d = snapshot.index[i]!;
    const { argFrom, argKind, argStart, argEnd } = tree.a;
    let r = -1;
    let next = -1;
    for (let g = argFrom[d]!; g < argFrom[d + 1]! && next === -1; g++) {
      if (argKind[g] !== TokenKind.Reference) continue;
      r++;
      const j = graph.names.findIn(tree.text, argStart[g]! + 1, argEnd[g]!);
      if (set.has(j)) next = j;
    }
    const name = nameOf(graph, first);
    const path = cyclePath(first, next, deps, set).map((k) => nameOf(graph, k));
    out.push({
      item: i,
      at: r,
      code: 'cycle',
      severity: 'error',
      message: cycleMessage(path, name),
      data: { name, cycle: path },
      related: members.slice(1, MAX_RELATED + 1).map((k) => ({
        item: firsts[k]!,
        at: NAME,
        message: `'${nameOf(graph, k)}' is part of the dependency cycle through '${name}'`,
      })),
    });
  }
  // Ordered by where their reference is: declarations are in source order, and so are a declaration's references.
  return out.sort((a, b) => a.item - b.item || a.at - b.at);
}
