/**
 * The one module that converts between core positions and LSP positions. Core ranges carry
 * half-open UTF-16 offsets plus 1-based lines and exclusive end columns; LSP wants 0-based lines
 * and characters. Everything goes through offsets, because the two disagree on what a line is:
 * LSP also breaks lines at a lone carriage return, which the language treats as an ordinary
 * character (spec 1.1). Diagnostics are converted here too, so severities, tags and related
 * information are decided in one place. Nothing else in the server does position arithmetic.
 */
import { computeLineStarts, LineIndex, type Diagnostic as CoreDiagnostic } from '@lightsop/core';
import {
  DiagnosticSeverity,
  DiagnosticTag,
  type Diagnostic,
  type Position,
  type Range,
} from 'vscode-languageserver';

/** Anything with half-open offsets (core ranges qualify). */
export interface OffsetSpan {
  readonly start: number;
  readonly end: number;
}

/** The diagnostic `source` shown by editors. */
export const DIAGNOSTIC_SOURCE = 'lightsop';

/** True when `text` has a carriage return that is not followed by a line feed. */
function hasLoneCarriageReturn(text: string): boolean {
  for (let i = text.indexOf('\r'); i !== -1; i = text.indexOf('\r', i + 1)) {
    if (text.charCodeAt(i + 1) !== 10) return true;
  }
  return false;
}

/** Line starts as LSP counts them: after `\n`, `\r\n` and a lone `\r`. */
function lspLineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13) {
      if (text.charCodeAt(i + 1) === 10) i++;
      starts.push(i + 1);
    } else if (c === 10) starts.push(i + 1);
  }
  return starts;
}

/**
 * Offset <-> LSP position for one text. When the text has no lone carriage return, LSP lines
 * are the language's lines, so the core line index (already built by the parser) is reused.
 */
export class PositionMap {
  private readonly starts: ArrayLike<number>;
  /** Core's line index over LSP's line starts (its lines are 1-based). */
  private readonly index: LineIndex;

  constructor(readonly text: string, coreIndex?: LineIndex) {
    if (hasLoneCarriageReturn(text)) this.index = new LineIndex(text, lspLineStarts(text));
    else this.index = coreIndex && coreIndex.text === text ? coreIndex : new LineIndex(text, computeLineStarts(text));
    this.starts = this.index.lineStarts;
  }

  /** Number of LSP lines. */
  get lineCount(): number {
    return this.starts.length;
  }

  /** 0-based LSP line of an offset. */
  lineOf(offset: number): number {
    return this.index.lineOf(offset) - 1;
  }

  /** Offset of the first character of a 0-based line (clamped). */
  lineStart(line: number): number {
    if (line <= 0) return 0;
    if (line >= this.starts.length) return this.text.length;
    return this.starts[line]!;
  }

  /** Offset just after the content of a 0-based line, its line break excluded. */
  lineEnd(line: number): number {
    if (line + 1 >= this.starts.length) return this.text.length;
    let end = this.starts[line + 1]!;
    if (end > 0 && this.text.charCodeAt(end - 1) === 10) end--;
    if (end > 0 && this.text.charCodeAt(end - 1) === 13) end--;
    return Math.max(end, this.starts[line]!);
  }

  /** LSP position of an offset (clamped to the text). */
  position(offset: number): Position {
    const o = Math.max(0, Math.min(offset, this.text.length));
    const line = this.lineOf(o);
    return { line, character: o - this.starts[line]! };
  }

  /** Offset of an LSP position; a character past the line's end is clamped to it, as LSP asks. */
  offset(position: Position): number {
    if (position.line < 0) return 0;
    if (position.line >= this.starts.length) return this.text.length;
    const start = this.starts[position.line]!;
    return Math.min(start + Math.max(position.character, 0), this.lineEnd(position.line));
  }

  /** LSP range of a core range or any offset span. */
  range(span: OffsetSpan): Range {
    return { start: this.position(span.start), end: this.position(span.end) };
  }

  /** Offsets of an LSP range (start never after end). */
  span(range: Range): OffsetSpan {
    const start = this.offset(range.start);
    const end = this.offset(range.end);
    return start <= end ? { start, end } : { start: end, end: start };
  }
}

const SEVERITY = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  info: DiagnosticSeverity.Information,
} as const;

/**
 * A core diagnostic as an LSP diagnostic: 0-based range, severity mapped (info becomes
 * Information), `unused-variable` tagged Unnecessary so editors fade it, related locations (the
 * other members of a cycle, the first of two duplicates) in the same document, and the core
 * `data` passed through for code actions.
 */
export function toLspDiagnostic(d: CoreDiagnostic, positions: PositionMap, uri: string): Diagnostic {
  const out: Diagnostic = {
    range: positions.range(d.range),
    severity: SEVERITY[d.severity],
    code: d.code,
    source: DIAGNOSTIC_SOURCE,
    message: d.message,
  };
  if (d.code === 'unused-variable') out.tags = [DiagnosticTag.Unnecessary];
  if (d.related && d.related.length > 0) {
    out.relatedInformation = d.related.map((r) => ({ location: { uri, range: positions.range(r.range) }, message: r.message }));
  }
  if (d.data) out.data = d.data;
  return out;
}

/** A problem found in `lightsop.config.json` (or the skills file it names) as an LSP diagnostic on the config file. */
export function toLspConfigDiagnostic(
  problem: { code: string; severity: 'error' | 'warning'; message: string; span: OffsetSpan },
  positions: PositionMap,
): Diagnostic {
  return {
    range: positions.range(problem.span),
    severity: SEVERITY[problem.severity],
    code: problem.code,
    source: DIAGNOSTIC_SOURCE,
    message: problem.message,
  };
}
