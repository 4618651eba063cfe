/**
 * Quick fixes, computed from the analysis of the current version (so they work whether or not
 * the client sends diagnostics and their `data` back): did-you-mean for `unknown-command` and
 * `undefined-variable` (from the diagnostic's suggestions), declaring a missing variable, and
 * removing an `assign` whose value nothing reads.
 */
import type { Diagnostic as CoreDiagnostic } from '@lightsop/core';
import { CodeActionKind, type CodeAction, type Range, type TextEdit } from 'vscode-languageserver';
import type { AnalyzedDocument } from '../documents';
import { toLspDiagnostic, type OffsetSpan } from '../to-lsp';
import { blockStart, declarationAt } from './locate';

export interface CodeActionOptions {
  /** `context.only` of the request: kinds the client wants. */
  readonly only?: readonly string[];
  /** Send versioned `documentChanges` instead of `changes`. */
  readonly versioned: boolean;
}

/** A command name as a token: bare when it can be, else quoted in the original quote style. */
function commandToken(name: string, quote: '"' | "'" | null): string {
  const needsQuotes = name === '' || /[\s"'#\\]/.test(name);
  if (!needsQuotes && quote === null) return name;
  const q = quote ?? '"';
  return q + name.replace(/\\/g, '\\\\').replace(q === '"' ? /"/g : /'/g, `\\${q}`) + q;
}

function overlaps(d: CoreDiagnostic, span: OffsetSpan): boolean {
  return d.range.start <= span.end && span.start <= d.range.end;
}

/** The quick fixes for the diagnostics that overlap `range`. */
export function getCodeActions(doc: AnalyzedDocument, range: Range, options: CodeActionOptions): CodeAction[] {
  if (options.only && !options.only.some((k) => CodeActionKind.QuickFix === k || CodeActionKind.QuickFix.startsWith(`${k}.`) || k === '')) {
    return [];
  }
  const { analysis, positions, text, uri } = doc;
  const span = positions.span(range);
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const out: CodeAction[] = [];
  const action = (title: string, d: CoreDiagnostic, edits: TextEdit[], preferred = false): CodeAction => ({
    title,
    kind: CodeActionKind.QuickFix,
    diagnostics: [toLspDiagnostic(d, positions, uri)],
    isPreferred: preferred || undefined,
    edit: options.versioned
      ? { documentChanges: [{ textDocument: { uri, version: doc.version }, edits }] }
      : { changes: { [uri]: edits } },
  });

  for (const d of analysis.diagnostics) {
    if (!overlaps(d, span)) continue;
    const suggestions = d.data?.suggestions ?? [];
    if (d.code === 'unknown-command') {
      const decl = declarationAt(analysis.plan, d.range.start);
      const quote = decl?.command?.quote ?? null;
      suggestions.forEach((s, i) => {
        out.push(action(`Change to '${s}'`, d, [{ range: positions.range(d.range), newText: commandToken(s, quote) }], i === 0));
      });
    } else if (d.code === 'undefined-variable') {
      const nameSpan = { start: d.range.start + 1, end: d.range.end };
      suggestions.forEach((s, i) => {
        out.push(action(`Change to '$${s}'`, d, [{ range: positions.range(nameSpan), newText: s }], i === 0));
      });
      const name = d.data?.name ?? text.slice(nameSpan.start, nameSpan.end);
      const user = declarationAt(analysis.plan, d.range.start);
      if (name !== '' && user) {
        // Above the block that uses it (and above that block's comments), so it runs first.
        const at = positions.lineStart(positions.lineOf(blockStart(user)));
        out.push(action(`Declare '${name}' with assign`, d, [{ range: positions.range({ start: at, end: at }), newText: `@${name} assign ""${eol}` }]));
      }
    } else if (d.code === 'unused-variable') {
      const decl = analysis.symbols.declarations.get(d.data?.name ?? '');
      if (!decl || decl.command?.name !== 'assign') continue;
      // Whole lines: its comments, header and text, up to the start of the next line.
      const startLine = positions.lineOf(blockStart(decl));
      const endLine = positions.lineOf(decl.range.end);
      const start = positions.lineStart(startLine);
      const end = endLine + 1 < positions.lineCount ? positions.lineStart(endLine + 1) : text.length;
      out.push(action(`Remove unused '${decl.name}'`, d, [{ range: positions.range({ start, end }), newText: '' }]));
    }
  }
  return out;
}
