/**
 * `--format text`: on a terminal, rustc-style entries with a code frame and colour; otherwise
 * one grep-friendly line per diagnostic (`file:line:col: severity: message [code]`). Human
 * output is sorted by position; a summary line ends it.
 */
import pc from 'picocolors';
import { sortByPosition, type Diagnostic } from '@lightsop/core';
import { countSeverities, type FileReport, type Totals } from './types';

type Colors = ReturnType<typeof pc.createColors>;

/** Lines joined per chunk of the output. */
const CHUNK_LINES = 256;

export interface TextOptions {
  /** Code frames (a terminal). */
  readonly frames: boolean;
  readonly color: boolean;
}

function severityLabel(d: Diagnostic, c: Colors): string {
  if (d.severity === 'error') return c.bold(c.red('error'));
  if (d.severity === 'warning') return c.bold(c.yellow('warning'));
  return c.bold(c.cyan('info'));
}

function frame(source: string, d: Diagnostic, c: Colors): string[] {
  const lines = source.split('\n');
  const n = d.range.line;
  const text = (lines[n - 1] ?? '').replace(/\r$/, '').replace(/\t/g, ' ');
  const gutter = String(n).length;
  const pad = ' '.repeat(gutter);
  const endCol = d.range.endLine === n ? d.range.endColumn : text.length + 1;
  const width = Math.max(1, endCol - d.range.column);
  const marker = ' '.repeat(Math.max(0, d.range.column - 1)) + '^'.repeat(width);
  const paint = d.severity === 'error' ? c.red : d.severity === 'warning' ? c.yellow : c.cyan;
  return [`${pad} ${c.blue('|')}`, `${c.blue(String(n))} ${c.blue('|')} ${text}`, `${pad} ${c.blue('|')} ${paint(marker)}`];
}

/** `totals`, when the caller has counted them already (`countSeverities`), are not counted again. */
export function formatText(reports: readonly FileReport[], options: TextOptions, totals?: Totals): string {
  const c = pc.createColors(options.color);
  if (!options.frames) return plainText(reports, c, totals);
  const out: string[] = [];
  // Lines are joined into flat chunks as they come, so the many small strings of a long report
  // die young instead of being copied by every garbage collection until the end.
  const chunks: string[] = [];
  const flush = () => {
    chunks.push(out.join('\n'));
    out.length = 0;
  };
  let files = 0;
  for (const r of reports) {
    files++;
    for (const d of sortByPosition(r.diagnostics)) {
      if (out.length >= CHUNK_LINES) flush();
      if (options.frames) {
        const where = `${r.file}:${d.range.line}:${d.range.column}`;
        out.push(`${severityLabel(d, c)}${c.bold(`[${d.code}]`)}${c.bold(': ' + d.message)}`);
        out.push(`  ${c.blue('-->')} ${where}`);
        for (const line of frame(r.source, d, c)) out.push(' ' + line);
        for (const rel of d.related ?? []) out.push(`  ${c.blue('=')} ${rel.message} (${r.file}:${rel.range.line}:${rel.range.column})`);
        out.push('');
      } else {
        out.push(`${r.file}:${d.range.line}:${d.range.column}: ${d.severity}: ${d.message} [${d.code}]`);
      }
    }
  }
  out.push(summaryLine(files, totals ?? countSeverities(reports), c));
  flush();
  return chunks.join('\n') + '\n';
}

function summaryLine(files: number, t: Totals, c: Colors): string {
  const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  const summary = `${plural(files, 'file')} checked: ${plural(t.errors, 'error')}, ${plural(t.warnings, 'warning')}, ${plural(t.infos, 'info')}`;
  return t.errors ? c.red(summary) : t.warnings ? c.yellow(summary) : c.green(summary);
}

/**
 * One line per diagnostic, `file:line:col: severity: message [code]`. The pieces of a chunk of
 * lines go into one array joined once, so no intermediate string is built per line.
 */
function plainText(reports: readonly FileReport[], c: Colors, totals: Totals | undefined): string {
  const parts: (string | number)[] = [];
  const chunks: string[] = [];
  for (const r of reports) {
    const file = r.file;
    let lines = 0;
    for (const d of sortByPosition(r.diagnostics)) {
      parts.push(file, ':', d.range.line, ':', d.range.column, ': ', d.severity, ': ', d.message, ' [', d.code, ']\n');
      if (++lines === CHUNK_LINES) {
        chunks.push(parts.join(''));
        parts.length = 0;
        lines = 0;
      }
    }
  }
  parts.push(summaryLine(reports.length, totals ?? countSeverities(reports), c), '\n');
  chunks.push(parts.join(''));
  return chunks.join('');
}
