/**
 * Folding ranges: a declaration whose text runs over several lines (multi-line arguments and
 * here-docs, folded from the header), the here-doc itself, and runs of two or more comment
 * lines. Lines are LSP lines from the position map.
 */
import { FoldingRangeKind, type FoldingRange } from 'vscode-languageserver';
import type { CommentNode } from '@lightsop/core';
import type { AnalyzedDocument } from '../documents';

export function getFoldingRanges(doc: AnalyzedDocument): FoldingRange[] {
  const { positions } = doc;
  const { plan } = doc.analysis;
  const out: FoldingRange[] = [];
  const fold = (startOffset: number, endOffset: number, kind?: string) => {
    const startLine = positions.lineOf(startOffset);
    const endLine = positions.lineOf(endOffset);
    if (endLine > startLine) out.push(kind ? { startLine, endLine, kind } : { startLine, endLine });
  };
  const foldComments = (comments: readonly CommentNode[]) => {
    // Group comment lines that sit on consecutive lines.
    let runStart: CommentNode | null = null;
    let prev: CommentNode | null = null;
    for (const c of comments) {
      if (c.inline) continue;
      if (!prev || positions.lineOf(c.range.start) !== positions.lineOf(prev.range.start) + 1) {
        if (runStart && prev) fold(runStart.range.start, prev.range.end, FoldingRangeKind.Comment);
        runStart = c;
      }
      prev = c;
    }
    if (runStart && prev) fold(runStart.range.start, prev.range.end, FoldingRangeKind.Comment);
  };
  foldComments(plan.freeComments);
  for (const d of plan.declarations) {
    foldComments(d.comments);
    fold(d.headerRange.start, d.range.end);
    if (d.body?.kind === 'heredoc' && d.body.endRange) fold(d.body.beginRange.start, d.body.endRange.end);
  }
  return out;
}
