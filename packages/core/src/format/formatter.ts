/**
 * The formatter: canonical spacing and alignment of declaration headers and comments. It only
 * rewrites what cannot change a plan's meaning: the whitespace between header tokens, the
 * indentation and trailing whitespace of comment lines, runs of blank lines at block edges and
 * line endings. Multi-line text, here-docs, stray lines, english scripts and headers with syntax
 * errors are kept byte for byte. Formatting is idempotent.
 */
import type { Declaration } from '../ast';
import { findInlineComment, LineClass, scanLines } from '../syntax/lines';
import { parsePlan } from '../syntax/build-ast';
import { isBlankSlice, trimEnd } from '../text/characters';

export interface FormatOptions {
  /** Names longer than this are not used to align the commands of neighbouring lines. */
  readonly maxAlignWidth?: number;
}

const enum Role {
  Verbatim,
  Collapsible,
  Comment,
  Header,
}

/** Formats a plan; returns the source unchanged when there is nothing to do. */
export function formatPlan(source: string, options: FormatOptions = {}): string {
  const { plan } = parsePlan(source);
  if (plan.english) return source;
  const maxAlign = options.maxAlignWidth ?? 24;
  const lines = scanLines(source);
  // CRLF only when every line break is CRLF; any bare LF makes the file LF.
  const eol = source.includes('\r\n') && !/(^|[^\r])\n/.test(source) ? '\r\n' : '\n';
  const role = new Uint8Array(lines.count); // Role.Verbatim by default
  const headerText = new Map<number, { name: string; rest: string }>();

  const blank = (n: number) => isBlankSlice(source, lines.start[n]!, lines.end[n]!);
  const declLines = plan.declarations.map((d) => d.lineNumber - 1);
  // The first line of a declaration's block: its header or its first attached comment line. A
  // loop, not a spread of the comments into Math.min: a declaration can have more comments than a call has arguments.
  const blockStart = (d: Declaration): number => {
    let first = d.lineNumber - 1;
    for (const c of d.comments) if (!c.inline && c.range.line - 1 < first) first = c.range.line - 1;
    return first;
  };
  const firstBlockStart = plan.declarations.length > 0 ? blockStart(plan.declarations[0]!) : lines.count;

  // Preamble: comments and blank lines are normalised, stray text is kept.
  for (let n = 0; n < firstBlockStart; n++) {
    if (lines.cls[n] === LineClass.Comment) role[n] = Role.Comment;
    else if (blank(n)) role[n] = Role.Collapsible;
  }
  plan.declarations.forEach((d, i) => {
    const n = declLines[i]!;
    for (const c of d.comments) if (!c.inline) role[c.range.line - 1] = Role.Comment;
    const next = plan.declarations[i + 1];
    const blockEnd = next ? blockStart(next) : lines.count;
    // Blank lines at the edges of the continuation carry no meaning.
    let first = n + 1;
    let last = blockEnd - 1;
    while (first <= last && blank(first)) role[first++] = Role.Collapsible;
    while (last >= first && blank(last)) role[last--] = Role.Collapsible;
    if (d.hasError || !d.command || d.name === '') return;
    const parts = [d.command, ...d.arguments.filter((a) => a.kind === 'reference' || a.origin === 'header')]
      .map((node) => source.slice(node.range.start, node.range.end));
    let rest = parts.join(' ');
    const hash = findInlineComment(source, lines.zwEnd[n]!, lines.end[n]!);
    if (hash !== -1) {
      const comment = source.slice(hash + 1, trimEnd(source, hash + 1, lines.end[n]!)).trim();
      rest += comment === '' ? ' #' : ` # ${comment}`;
    }
    role[n] = Role.Header;
    headerText.set(n, { name: source.slice(d.nameRange.start, d.nameRange.end), rest });
  });

  // Align the commands of physically adjacent one-line declarations.
  const width = new Map<number, number>();
  for (let n = 0; n < lines.count; n++) {
    if (role[n] !== Role.Header) continue;
    let m = n;
    while (m + 1 < lines.count && role[m + 1] === Role.Header) m++;
    let w = 0;
    for (let k = n; k <= m; k++) {
      const len = headerText.get(k)!.name.length;
      if (len <= maxAlign) w = Math.max(w, len);
    }
    for (let k = n; k <= m; k++) width.set(k, w);
    n = m;
  }

  const out: string[] = [];
  let pendingBlank = false;
  for (let n = 0; n < lines.count; n++) {
    const r = role[n];
    if (r === Role.Collapsible) {
      pendingBlank = out.length > 0;
      continue;
    }
    if (pendingBlank) out.push('');
    pendingBlank = false;
    const zw = source.slice(lines.start[n]!, lines.zwEnd[n]!);
    if (r === Role.Header) {
      const h = headerText.get(n)!;
      out.push(zw + h.name.padEnd(width.get(n)!, ' ') + ' ' + h.rest);
    } else if (r === Role.Comment) {
      out.push(zw + source.slice(lines.eff[n]!, trimEnd(source, lines.eff[n]!, lines.end[n]!)));
    } else {
      out.push(source.slice(lines.start[n]!, lines.end[n]!));
    }
  }
  // A line whose text ends in a lone CR needs a CRLF break, or the CR would join the break.
  return out.map((line) => line + (eol === '\n' && line.endsWith('\r') ? '\r\n' : eol)).join('');
}
