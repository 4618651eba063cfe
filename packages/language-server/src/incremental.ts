/**
 * Incremental analysis of an open plan. Declarations are line-based blocks (attached comments,
 * header, continuation lines), so an edit touches a few of them: the new text is compared with
 * the last analysed one (common prefix and suffix), the blocks around the changed lines are cut
 * out as whole lines and parsed alone with core's `parsePlan`, and every other block is kept as
 * it was parsed, with an offset and line delta instead of copied ranges. Absolute declarations
 * are materialised only when a feature reads `analysis.plan` or `analysis.symbols`.
 *
 * What crosses blocks is recomputed here from the kept declarations, in core's check order
 * (4.1) and with core's messages: duplicate declarations, undefined references, cycles, unknown
 * commands, unused variables. Those passes read names and dependencies only and allocate for
 * diagnostics alone, so an edit costs the parse of its blocks plus a linear pass over names.
 * `#!english` scripts are analysed whole by `analyzePlan`. The result equals a fresh
 * `analyzePlan` of the same text (diagnostics, declarations, symbols, graph): guarded by
 * `test/protocol/incremental.property.test.ts`.
 */
import {
  analyzePlan,
  BUILTIN_COMMANDS,
  buildSymbols,
  checkArgumentCount,
  codeInfo,
  isEnglishSource,
  isFinalCommand,
  iterativeComponents,
  LineIndex,
  parsePlan,
  spanRanges,
  suggest,
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

/** One declaration as parsed in its chunk, with its own syntax diagnostics (duplicates excluded). */
interface Item {
  /** In chunk coordinates: add the snapshot's deltas for absolute positions. */
  readonly decl: Declaration;
  readonly diagnostics: readonly Diagnostic[] | null;
  /** 0-based chunk line where the block starts (its first attached comment, else its header). */
  readonly blockLine: number;
  /** The last declaration materialised from this item, and the deltas it was moved by. */
  placed?: { readonly decl: Declaration; readonly offset: number; readonly line: number };
}

interface Preamble {
  readonly diagnostics: readonly Diagnostic[];
  readonly freeComments: readonly CommentNode[];
}

/** One analysed text: what the next edit starts from. */
export interface PlanSnapshot {
  readonly text: string;
  readonly lineIndex: LineIndex;
  /** Null for an `#!english` script (analysed whole). */
  readonly items: readonly Item[] | null;
  /** Offset and line deltas of each item, from its chunk to the document. */
  readonly offsetDelta: Int32Array;
  readonly lineDelta: Int32Array;
  readonly preamble: Preamble;
  /** Did-you-mean hints of undeclared names, valid while the set of declared names is unchanged. */
  readonly hints: Map<string, string[]>;
  /** The results of the checks across blocks, kept while no edit changes a name, command or reference. */
  graph: Graph | null;
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
const MAX_CYCLE_NAMES = 12;
const MAX_RELATED = 100;
/** Characters compared at once when looking for the common prefix and suffix. */
const COMPARE_CHUNK = 4096;

/** Analyses a whole text. */
export function analyzeFull(text: string, options: IncrementalOptions): IncrementalAnalysis {
  const lineIndex = new LineIndex(text);
  if (isEnglishSource(text)) return english(text, lineIndex, options);
  const chunk = parseChunk(text, 0);
  const snapshot: PlanSnapshot = {
    text,
    lineIndex,
    items: chunk.items,
    offsetDelta: new Int32Array(chunk.items.length),
    lineDelta: new Int32Array(chunk.items.length),
    preamble: chunk.preamble,
    hints: new Map(),
    graph: null,
  };
  return { analysis: buildAnalysis(snapshot, options), snapshot };
}

/**
 * Analyses `text` starting from the snapshot of an earlier text of the same document: only the
 * blocks on changed lines are parsed again. Any sequence of edits in between is one diff.
 */
export function analyzeEdit(previous: PlanSnapshot, text: string, options: IncrementalOptions): IncrementalAnalysis {
  const items = previous.items;
  if (items === null || isEnglishSource(text)) return analyzeFull(text, options);
  const old = previous.text;
  if (old === text) return { analysis: buildAnalysis(previous, options), snapshot: previous };

  const prefix = commonPrefix(old, text);
  const suffix = commonSuffix(old, text, prefix);
  const oldLines = previous.lineIndex;
  /** First and last changed lines of the old text, 0-based (the last one conservatively). */
  const firstChanged = oldLines.lineOf(prefix) - 1;
  const lastChanged = oldLines.lineOf(old.length - suffix) - 1;
  const { offsetDelta, lineDelta } = previous;
  const n = items.length;
  const headerLine = (i: number) => items[i]!.decl.lineNumber - 1 + lineDelta[i]!;
  const blockLine = (i: number) => items[i]!.blockLine + lineDelta[i]!;

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
  const chunk = parseChunk(text.slice(startOffset, endOffset), startLine);
  const chunkOffset = startLine === 0 ? startOffset : startOffset - CHUNK_PREFIX.length;
  const chunkLine = startLine === 0 ? 0 : startLine - CHUNK_PREFIX_LINES;

  const added = chunk.items.length;
  const count = from + added + (n - to);
  const nextItems: Item[] = items.slice(0, from).concat(chunk.items, items.slice(to));
  const nextOffset = new Int32Array(count);
  const nextLine = new Int32Array(count);
  nextOffset.set(offsetDelta.subarray(0, from));
  nextLine.set(lineDelta.subarray(0, from));
  nextOffset.fill(chunkOffset, from, from + added);
  nextLine.fill(chunkLine, from, from + added);
  for (let i = to, k = from + added; i < n; i++, k++) {
    nextOffset[k] = offsetDelta[i]! + sizeDelta;
    nextLine[k] = lineDelta[i]! + linesDelta;
  }

  // The hints stay valid while the declared names are the same, in the same order; the checks
  // across blocks while names, commands and references are.
  let sameNames = to - from === added;
  let sameGraph = sameNames;
  for (let k = 0; sameNames && k < added; k++) {
    const a = items[from + k]!.decl;
    const b = chunk.items[k]!.decl;
    sameNames = a.name === b.name;
    sameGraph &&= sameNames && a.command?.name === b.command?.name && sameReferences(a, b);
  }

  const snapshot: PlanSnapshot = {
    text,
    lineIndex,
    items: nextItems,
    offsetDelta: nextOffset,
    lineDelta: nextLine,
    preamble: startLine === 0 ? chunk.preamble : previous.preamble,
    hints: snapshotHints(previous, sameNames),
    graph: sameGraph ? previous.graph
      : sameNames && previous.graph ? updateGraph(previous.graph, items, nextItems, from, to, snapshotHints(previous, sameNames)) : null,
  };
  return { analysis: buildAnalysis(snapshot, options), snapshot };
}

function snapshotHints(previous: PlanSnapshot, sameNames: boolean): Map<string, string[]> {
  return sameNames ? previous.hints : new Map();
}

/** True when two declarations reference the same names in the same order. */
function sameReferences(a: Declaration, b: Declaration): boolean {
  if (a.dependencies.length !== b.dependencies.length) return false;
  const x = a.arguments;
  const y = b.arguments;
  let i = 0;
  let j = 0;
  for (;;) {
    while (i < x.length && x[i]!.kind !== 'reference') i++;
    while (j < y.length && y[j]!.kind !== 'reference') j++;
    if (i === x.length || j === y.length) return i === x.length && j === y.length;
    if ((x[i] as { name: string }).name !== (y[j] as { name: string }).name) return false;
    i++;
    j++;
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
    items: null,
    offsetDelta: new Int32Array(0),
    lineDelta: new Int32Array(0),
    preamble: { diagnostics: [], freeComments: [] },
    hints: new Map(),
    graph: null,
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
function parseChunk(chunkText: string, startLine: number): { items: Item[]; preamble: Preamble } {
  const { plan, diagnostics } = parsePlan(startLine === 0 ? chunkText : CHUNK_PREFIX + chunkText);
  const decls = plan.declarations;
  const items: Item[] = [];
  const preamble: Diagnostic[] = [];
  let k = -1;
  let own: Diagnostic[] | null = null;
  const flush = () => {
    if (k >= 0) {
      const decl = decls[k]!;
      const first = decl.comments[0];
      items.push({ decl, diagnostics: own, blockLine: (first && !first.inline ? first.range.line : decl.lineNumber) - 1 });
    }
    own = null;
  };
  // Diagnostics come in declaration order, each on a line of its own declaration's block.
  for (const d of diagnostics) {
    while (k + 1 < decls.length && decls[k + 1]!.lineNumber <= d.range.line) {
      flush();
      k++;
    }
    if (d.code === 'duplicate-declaration') continue;
    if (k < 0) preamble.push(d);
    else (own ??= []).push(d);
  }
  while (k < decls.length) {
    flush();
    k++;
  }
  return { items, preamble: { diagnostics: preamble, freeComments: startLine === 0 ? plan.freeComments : [] } };
}

// ---------------------------------------------------------------------------------------------
// Shifting: a kept block's ranges are its chunk ranges moved by whole lines.

function shiftRange(r: SourceRange, offset: number, line: number): SourceRange {
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
// a relocatable form (item index and which range of its declaration), so that an edit that
// changes no name, command or reference reuses them and only places them again.

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
  /** The symbol table's core: name to its position k among first declarations. */
  readonly firstOf: ReadonlyMap<string, number>;
  /** Item index of the k-th first declaration. */
  readonly firsts: Int32Array;
  /** k of each item that is a first declaration, else -1. */
  readonly firstK: Int32Array;
  /** Item index of the first declaration of each item's name when it is a duplicate, else -1. */
  readonly duplicateOf: Int32Array;
  /** The dependencies of the k-th first declaration that are declared, as positions k. */
  readonly resolved: readonly (readonly number[])[];
  /** How many `$` references (of any declaration) name the k-th first declaration. */
  readonly useCount: Int32Array;
  readonly undefinedRefs: readonly GraphDiagnostic[];
  /** Distinct undeclared names among them. */
  readonly undefinedNames: number;
  readonly cycles: readonly GraphDiagnostic[];
  readonly unused: readonly GraphDiagnostic[];
  /** Unknown commands, for the command surface they were checked against. */
  commands: { readonly surface: CommandSurface; readonly diagnostics: readonly GraphDiagnostic[] } | null;
}

function didYouMean(suggestions: readonly string[]): string {
  if (suggestions.length === 0) return '';
  return ` Did you mean ${suggestions.map((s) => `'${s}'`).join(' or ')}?`;
}

function referenceRange(d: Declaration, k: number): SourceRange {
  let seen = 0;
  for (const a of d.arguments) if (a.kind === 'reference' && seen++ === k) return a.range;
  return d.nameRange;
}

function buildAnalysis(snapshot: PlanSnapshot, options: IncrementalOptions): Analysis {
  const items = snapshot.items!;
  const { offsetDelta, lineDelta, text, lineIndex } = snapshot;
  const n = items.length;
  const graph = (snapshot.graph ??= computeGraph(snapshot));
  if (options.commands && graph.commands?.surface !== options.commands) {
    graph.commands = { surface: options.commands, diagnostics: checkCommands(items, options.commands) };
  }
  const rangeOf = (i: number, at: number): SourceRange => {
    const d = items[i]!.decl;
    const range = at === NAME ? d.nameRange
      : at === COMMAND ? d.command!.range
      : at <= ARGUMENTS_FROM ? spanRanges(d.arguments[ARGUMENTS_FROM - at]!.range, d.arguments[d.arguments.length - 1]!.range)
      : referenceRange(d, at);
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
    const item = items[i]!;
    const firstIndex = duplicateOf[i]!;
    if (!item.diagnostics && firstIndex < 0) continue;
    const own = item.diagnostics ?? [];
    let k = 0;
    for (; k < own.length && (own[k]!.code === 'unterminated-string' || own[k]!.code === 'invalid-escape'); k++) diagnostics.push(shiftDiagnostic(own[k]!, offsetDelta[i]!, lineDelta[i]!));
    if (firstIndex >= 0) {
      const name = item.decl.name;
      diagnostics.push({
        code: 'duplicate-declaration',
        severity: duplicateSeverity,
        message: `Variable '${name}' is already declared on line ${items[firstIndex]!.decl.lineNumber + lineDelta[firstIndex]!}`,
        range: rangeOf(i, NAME),
        data: { name },
        related: [{ message: `'${name}' is first declared here`, range: rangeOf(firstIndex, NAME) }],
      });
    }
    for (; k < own.length; k++) diagnostics.push(shiftDiagnostic(own[k]!, offsetDelta[i]!, lineDelta[i]!));
  }
  for (const list of [graph.undefinedRefs, graph.cycles, options.commands ? graph.commands!.diagnostics : [], graph.unused]) {
    for (const g of list) diagnostics.push(place(g));
  }

  let plan: Plan | null = null;
  let symbols: Symbols | null = null;
  let tree: SyntaxTree | null = null;
  const materialise = (): Plan => {
    if (!plan) {
      // Blocks that did not move since they were last materialised (those above the edits) are reused.
      const declarations: Declaration[] = new Array<Declaration>(n);
      for (let i = 0; i < n; i++) {
        const item = items[i]!;
        const offset = offsetDelta[i]!;
        const line = lineDelta[i]!;
        const placed = item.placed;
        if (placed && placed.offset === offset && placed.line === line) declarations[i] = placed.decl;
        else {
          const decl = shiftDeclaration(item.decl, offset, line);
          item.placed = { decl, offset, line };
          declarations[i] = decl;
        }
      }
      plan = { kind: 'plan', range: lineIndex.range(0, text.length), english: null, declarations, freeComments: snapshot.preamble.freeComments };
    }
    return plan;
  };
  return {
    source: text,
    lineIndex,
    diagnostics,
    get plan() {
      return materialise();
    },
    get symbols() {
      symbols ??= buildSymbols(materialise());
      return symbols;
    },
    // Nothing in the server reads the compact tree; a caller that does pays for one parse.
    get tree() {
      tree ??= parsePlan(text).tree;
      return tree;
    },
  };
}

/** Runs the checks across blocks over every declaration (but unknown commands, checked per surface). */
function computeGraph(snapshot: PlanSnapshot): Graph {
  const items = snapshot.items!;
  const n = items.length;
  const firstOf = new Map<string, number>();
  const firstList: number[] = [];
  const firstK = new Int32Array(n).fill(-1);
  const duplicateOf = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const name = items[i]!.decl.name;
    if (name === '') continue;
    const k = firstOf.get(name);
    if (k !== undefined) duplicateOf[i] = firstList[k]!;
    else {
      firstK[i] = firstList.length;
      firstOf.set(name, firstList.length);
      firstList.push(i);
    }
  }
  const firsts = Int32Array.from(firstList);
  const resolved: number[][] = new Array<number[]>(firsts.length);
  const useCount = new Int32Array(firsts.length);
  for (let i = 0; i < n; i++) {
    const deps = items[i]!.decl.dependencies;
    const k = firstK[i]!;
    if (k >= 0) resolved[k] = resolve(deps, firstOf);
    for (const name of deps) {
      const j = firstOf.get(name);
      if (j !== undefined) useCount[j]!++;
    }
  }
  const undefinedRefs = checkUndefined(items, 0, n, snapshot.hints, firstOf);
  return {
    firstOf,
    firsts,
    firstK,
    duplicateOf,
    resolved,
    useCount,
    undefinedRefs,
    undefinedNames: distinctNames(undefinedRefs),
    cycles: checkCycles(items, firsts, firstOf, resolved),
    unused: checkUnused(items, firsts, useCount),
    commands: null,
  };
}

/**
 * The checks again after an edit that kept every declared name in place (items [from, to) were
 * parsed again, as many as before): only those items' references are resolved and counted
 * again and their diagnostics replaced; cycles and unused variables are read from the updated
 * integer tables, without a name lookup.
 */
function updateGraph(previous: Graph, oldItems: readonly Item[], items: readonly Item[], from: number, to: number, hints: Map<string, string[]>): Graph {
  const { firstOf, firsts, firstK } = previous;
  const resolved = previous.resolved.slice();
  const useCount = previous.useCount.slice();
  for (let i = from; i < to; i++) {
    for (const name of oldItems[i]!.decl.dependencies) {
      const j = firstOf.get(name);
      if (j !== undefined) useCount[j]!--;
    }
    const deps = items[i]!.decl.dependencies;
    for (const name of deps) {
      const j = firstOf.get(name);
      if (j !== undefined) useCount[j]!++;
    }
    const k = firstK[i]!;
    if (k >= 0) resolved[k] = resolve(deps, firstOf);
  }
  const splice = (list: readonly GraphDiagnostic[], fresh: readonly GraphDiagnostic[]): GraphDiagnostic[] => {
    const a = lowerBound(list.length, (x) => list[x]!.item >= from);
    const b = lowerBound(list.length, (x) => list[x]!.item >= to);
    return list.slice(0, a).concat(fresh, list.slice(b));
  };
  // Hints go to the first 200 distinct undeclared names: splicing keeps them right while every
  // name gets them, before and after.
  let undefinedRefs = splice(previous.undefinedRefs, checkUndefined(items, from, to, hints, firstOf));
  let undefinedNames = distinctNames(undefinedRefs);
  if (previous.undefinedNames > MAX_SUGGESTED_NAMES || undefinedNames > MAX_SUGGESTED_NAMES) {
    undefinedRefs = checkUndefined(items, 0, items.length, hints, firstOf);
    undefinedNames = distinctNames(undefinedRefs);
  }
  const commands = previous.commands;
  return {
    firstOf,
    firsts,
    firstK,
    duplicateOf: previous.duplicateOf,
    resolved,
    useCount,
    undefinedRefs,
    undefinedNames,
    cycles: checkCycles(items, firsts, firstOf, resolved),
    unused: checkUnused(items, firsts, useCount),
    commands: commands && { surface: commands.surface, diagnostics: splice(commands.diagnostics, checkCommands(items, commands.surface, from, to)) },
  };
}

function resolve(dependencies: readonly string[], firstOf: ReadonlyMap<string, number>): number[] {
  const out: number[] = [];
  for (const name of dependencies) {
    const j = firstOf.get(name);
    if (j !== undefined) out.push(j);
  }
  return out;
}

function distinctNames(list: readonly GraphDiagnostic[]): number {
  const names = new Set<string>();
  for (const g of list) names.add(g.data.name!);
  return names.size;
}

/** `undefined-variable` for the references of items [from, to). */
function checkUndefined(items: readonly Item[], from: number, to: number, hints: Map<string, string[]>, firstOf: ReadonlyMap<string, number>): GraphDiagnostic[] {
  const out: GraphDiagnostic[] = [];
  const ranked = new Set<string>();
  let candidates: string[] | null = null;
  for (let i = from; i < to; i++) {
    const d = items[i]!.decl;
    if (d.dependencies.length === 0) continue;
    let r = -1;
    for (const a of d.arguments) {
      if (a.kind !== 'reference') continue;
      r++;
      if (firstOf.has(a.name) || a.name === 'input') continue;
      let h: string[] = [];
      if (ranked.has(a.name) || ranked.size < MAX_SUGGESTED_NAMES) {
        ranked.add(a.name);
        let known = hints.get(a.name);
        if (!known) {
          candidates ??= [...firstOf.keys(), 'input'];
          known = suggest(a.name, candidates);
          hints.set(a.name, known);
        }
        h = known;
      }
      const user = d.name === '' ? '' : ` (used by '${d.name}')`;
      out.push({
        item: i,
        at: r,
        code: 'undefined-variable',
        severity: 'error',
        message: `Variable '${a.name}' is not declared${user}${h.length ? '.' + didYouMean(h) : ''}`,
        data: { name: a.name, suggestions: h },
      });
    }
  }
  return out;
}

/** `unknown-command` and `argument-count` for items [from, to), as core's checkCommands gives them. */
function checkCommands(items: readonly Item[], commands: CommandSurface, from = 0, to = items.length): GraphDiagnostic[] {
  const out: GraphDiagnostic[] = [];
  let names: string[] | null = null;
  const cache = new Map<string, string[]>();
  for (let i = from; i < to; i++) {
    const decl = items[i]!.decl;
    const command = decl.command;
    if (!command || BUILTIN_COMMANDS.includes(command.name)) continue;
    if (commands.has(command.name)) {
      const spec = commands.get(command.name);
      const problem = spec?.arguments ? checkArgumentCount(decl, spec) : null;
      if (problem) {
        const tooMany = decl.arguments.length > spec!.arguments!.maximum;
        out.push({ item: i, at: tooMany ? ARGUMENTS_FROM - spec!.arguments!.maximum : COMMAND, code: problem.code, severity: problem.severity, message: problem.message, data: problem.data ?? {} });
      }
      continue;
    }
    if (commands.mayBeUnlisted(command.name)) continue;
    let suggestions = cache.get(command.name);
    if (!suggestions) {
      names ??= [...commands.names, ...BUILTIN_COMMANDS];
      suggestions = suggest(command.name, names);
      cache.set(command.name, suggestions);
    }
    out.push({
      item: i,
      at: COMMAND,
      code: 'unknown-command',
      severity: 'error',
      message: `Unknown command '${command.name}': it is not in the skills description.${didYouMean(suggestions)}`.replace(/\.$/, ''),
      data: { name: command.name, suggestions },
    });
  }
  return out;
}

function checkUnused(items: readonly Item[], firsts: Int32Array, useCount: Int32Array): GraphDiagnostic[] {
  const out: GraphDiagnostic[] = [];
  for (let k = 0; k < firsts.length; k++) {
    if (useCount[k]! > 0) continue;
    const i = firsts[k]!;
    const d = items[i]!.decl;
    if (d.name === 'lastAnswer') continue;
    if (d.command && isFinalCommand(d.command.name)) continue;
    out.push({
      item: i,
      at: NAME,
      code: 'unused-variable',
      severity: d.command?.name === 'assign' ? 'warning' : 'info',
      message: `Variable '${d.name}' is never used`,
      data: { name: d.name },
    });
  }
  return out;
}

/**
 * `cycle`: one diagnostic per strongly connected component with a cycle, as core reports it
 * (the component's first declaration, its first reference into the component, the shortest
 * path back, the other members as related locations), ordered by that reference.
 */
function checkCycles(items: readonly Item[], firsts: Int32Array, firstOf: ReadonlyMap<string, number>, resolved: readonly (readonly number[])[]): GraphDiagnostic[] {
  const n = firsts.length;
  const offsets = new Int32Array(n + 1);
  for (let k = 0; k < n; k++) offsets[k + 1] = offsets[k]! + resolved[k]!.length;
  const edges = offsets[n]!;
  const targets = new Int32Array(edges);
  for (let k = 0; k < n; k++) targets.set(resolved[k]!, offsets[k]!);
  // Peel what cannot be on a cycle: declarations whose dependencies all peel (Kahn), then those
  // no remaining declaration depends on.
  const dependents = new Int32Array(n + 1);
  for (let e = 0; e < edges; e++) dependents[targets[e]! + 1]!++;
  for (let k = 0; k < n; k++) dependents[k + 1]! += dependents[k]!;
  const fill = dependents.slice(0, n);
  const sources = new Int32Array(edges);
  for (let k = 0; k < n; k++) for (let e = offsets[k]!; e < offsets[k + 1]!; e++) sources[fill[targets[e]!]!++] = k;
  const remaining = new Int32Array(n);
  const alive = new Uint8Array(n).fill(1);
  const queue = new Int32Array(n);
  let head = 0;
  let tail = 0;
  for (let k = 0; k < n; k++) {
    remaining[k] = offsets[k + 1]! - offsets[k]!;
    if (remaining[k] === 0) queue[tail++] = k;
  }
  while (head < tail) {
    const k = queue[head++]!;
    alive[k] = 0;
    for (let e = dependents[k]!; e < dependents[k + 1]!; e++) if (--remaining[sources[e]!]! === 0) queue[tail++] = sources[e]!;
  }
  if (tail === n) return [];
  const inDegree = new Int32Array(n);
  for (let k = 0; k < n; k++) if (alive[k]) for (let e = offsets[k]!; e < offsets[k + 1]!; e++) if (alive[targets[e]!]) inDegree[targets[e]!]!++;
  head = tail = 0;
  for (let k = 0; k < n; k++) if (alive[k] && inDegree[k] === 0) queue[tail++] = k;
  while (head < tail) {
    const k = queue[head++]!;
    alive[k] = 0;
    for (let e = offsets[k]!; e < offsets[k + 1]!; e++) if (alive[targets[e]!] && --inDegree[targets[e]!]! === 0) queue[tail++] = targets[e]!;
  }
  const rest: number[] = [];
  for (let k = 0; k < n; k++) if (alive[k]) rest.push(k);
  if (rest.length === 0) return [];
  const deps: number[][] = [];
  for (const k of rest) deps[k] = Array.from(targets.subarray(offsets[k]!, offsets[k + 1]!));

  const out: GraphDiagnostic[] = [];
  for (const members of iterativeComponents(rest, deps, alive)) {
    const set = new Set(members);
    if (members.length === 1 && !deps[members[0]!]!.includes(members[0]!)) continue;
    let first = members[0]!;
    for (const m of members) if (m < first) first = m;
    const i = firsts[first]!;
    const decl = items[i]!.decl;
    let r = -1;
    let refName = '';
    for (const a of decl.arguments) {
      if (a.kind !== 'reference') continue;
      r++;
      if (set.has(firstOf.get(a.name) ?? -1)) {
        refName = a.name;
        break;
      }
    }
    const path = cyclePath(first, firstOf.get(refName)!, deps, set).map((k) => items[firsts[k]!]!.decl.name);
    const sorted = members.slice().sort((a, b) => a - b);
    const shown = path.length <= MAX_CYCLE_NAMES ? path.join(' -> ')
      : `${path.slice(0, MAX_CYCLE_NAMES - 1).join(' -> ')} -> ... -> ${decl.name} (${path.length - 1} declarations)`;
    out.push({
      item: i,
      at: r,
      code: 'cycle',
      severity: 'error',
      message: `Dependency cycle: ${shown}`,
      data: { name: decl.name, cycle: path },
      related: sorted.filter((k) => k !== first).slice(0, MAX_RELATED).map((k) => ({
        item: firsts[k]!,
        at: NAME,
        message: `'${items[firsts[k]!]!.decl.name}' is part of the dependency cycle through '${decl.name}'`,
      })),
    });
  }
  // Ordered by where their reference is: items are in source order, and so are a declaration's references.
  return out.sort((a, b) => a.item - b.item || a.at - b.at);
}

/** A shortest path start -> next -> ... -> start inside one component (breadth-first). */
function cyclePath(start: number, next: number, deps: readonly (readonly number[])[], members: ReadonlySet<number>): number[] {
  if (next === start) return [start, start];
  const parent = new Map<number, number>([[next, -1]]);
  let frontier = [next];
  while (frontier.length > 0 && !parent.has(start)) {
    const following: number[] = [];
    for (const v of frontier) {
      for (const w of deps[v]!) {
        if (!members.has(w) || parent.has(w)) continue;
        parent.set(w, v);
        following.push(w);
      }
    }
    frontier = following;
  }
  const back: number[] = [];
  for (let v = start; v !== -1; v = parent.get(v)!) back.push(v);
  back.reverse();
  return [start].concat(back);
}
