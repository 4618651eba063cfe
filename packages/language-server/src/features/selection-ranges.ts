/**
 * Selection ranges (expand selection): from the innermost piece under the cursor outwards,
 * the name without its sigil or a string without its quotes, the token, the header's code,
 * the declaration, the declaration with its comments, then the whole plan.
 */
import type { Position, SelectionRange } from 'vscode-languageserver';
import type { AnalyzedDocument } from '../documents';
import type { OffsetSpan } from '../to-lsp';
import { blockStart, declarationAt, targetAt } from './locate';

function candidates(doc: AnalyzedDocument, offset: number): OffsetSpan[] {
  const { plan } = doc.analysis;
  const spans: OffsetSpan[] = [];
  const target = targetAt(plan, offset);
  if (target) {
    const r = target.range;
    if (target.kind === 'declaration' || target.kind === 'reference') spans.push({ start: r.start + 1, end: r.end });
    if (target.kind === 'literal' && target.arg.quote && r.end - r.start >= 2) spans.push({ start: r.start + 1, end: r.end - 1 });
    spans.push(r);
  }
  const decl = declarationAt(plan, offset);
  if (decl) {
    spans.push(decl.headerRange);
    let headerEnd = decl.headerRange.end;
    for (const c of decl.comments) if (c.inline) headerEnd = Math.max(headerEnd, c.range.end);
    spans.push({ start: decl.headerRange.start, end: headerEnd });
    const attached = decl.comments.filter((c) => !c.inline);
    if (attached.length > 0) spans.push({ start: attached[0]!.range.start, end: attached[attached.length - 1]!.range.end });
    if (decl.body) spans.push(decl.body.kind === 'continuation' ? decl.body.range : { start: decl.body.beginRange.start, end: (decl.body.endRange ?? decl.body.bodyRange).end });
    spans.push(decl.range);
    spans.push({ start: blockStart(decl), end: decl.range.end });
  }
  spans.push({ start: 0, end: doc.text.length });
  return spans;
}

/** For each position, a chain of ever larger ranges that contain it. */
export function getSelectionRanges(doc: AnalyzedDocument, positions: readonly Position[]): SelectionRange[] {
  return positions.map((position) => {
    const offset = doc.positions.offset(position);
    const spans = candidates(doc, offset)
      .filter((s) => s.start <= offset && offset <= s.end)
      .sort((a, b) => (a.end - a.start) - (b.end - b.start));
    // Keep a chain where each range strictly contains the previous one.
    const chain: OffsetSpan[] = [];
    for (const s of spans) {
      const last = chain[chain.length - 1];
      if (!last || (s.start <= last.start && s.end >= last.end && (s.start < last.start || s.end > last.end))) chain.push(s);
    }
    let result: SelectionRange | undefined;
    for (let i = chain.length - 1; i >= 0; i--) result = { range: doc.positions.range(chain[i]!), parent: result };
    return result ?? { range: doc.positions.range({ start: offset, end: offset }) };
  });
}
