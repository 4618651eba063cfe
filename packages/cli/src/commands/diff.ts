/**
 * `lightsop diff A B` (docs/run-records.md): compares two run records declaration by declaration:
 * status and value changes, declarations only in one of them, and timing changes. Text or
 * `--json`. Exit 0 when no declaration changed status or value and none was added or removed
 * (timing alone does not count), 1 otherwise, 2 for usage and I/O errors (as lint).
 */
import type { RecordedOutcome, RunRecord } from '@lightsop/runtime';
import { recordedVariables } from '@lightsop/runtime';
import type { Io } from '../io';
import { jsonLine, oneLine, terminalText } from '../terminal-text';
import { readRecordFile } from './replay';

const USAGE = 2;

export interface DiffOptions {
  readonly json?: boolean;
  /** A duration change is shown in text when it is at least this many milliseconds and 50 %. */
  readonly timingThreshold?: number;
}

interface Side {
  readonly outcome: RecordedOutcome | null;
  readonly durationMs: number | null;
}

/** The duration of each variable's last command in a record. */
function durations(record: RunRecord): Map<string, number> {
  const out = new Map<string, number>();
  for (const call of record.calls) if (call.end) out.set(call.start.variable, call.end.durationMs);
  return out;
}

function same(a: RecordedOutcome, b: RecordedOutcome): boolean {
  return a.status === b.status && JSON.stringify(a.value ?? null) === JSON.stringify(b.value ?? null) && (a.reason ?? null) === (b.reason ?? null);
}

function detailOf(o: RecordedOutcome): string {
  return o.status === 'success' ? (typeof o.value === 'string' ? o.value : JSON.stringify(o.value ?? '')) : o.reason ?? '';
}

/** An outcome on one line: the status, then the value or the reason from `from` on (… marks a cut). */
function shown(o: RecordedOutcome, from = 0): string {
  const detail = detailOf(o);
  return `${o.status} ${JSON.stringify(`${from > 0 ? '…' : ''}${oneLine(detail.slice(from), 60)}`)}`;
}

/** Where two outcomes' texts start to differ, less some context: both are shown from there. */
function divergence(a: RecordedOutcome, b: RecordedOutcome): number {
  const x = detailOf(a);
  const y = detailOf(b);
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return i > 40 ? i - 20 : 0;
}

export function diffCommand(a: string, b: string, options: DiffOptions, io: Io): number {
  const left = readRecordFile(a, io.cwd, USAGE);
  const right = readRecordFile(b, io.cwd, USAGE);
  const va = recordedVariables(left.record);
  const vb = recordedVariables(right.record);
  const da = durations(left.record);
  const db = durations(right.record);
  const names: string[] = [...va.keys()];
  for (const name of vb.keys()) if (!va.has(name)) names.push(name);
  const changed: { variable: string; a: RecordedOutcome; b: RecordedOutcome }[] = [];
  const added: { variable: string; b: RecordedOutcome }[] = [];
  const removed: { variable: string; a: RecordedOutcome }[] = [];
  const timing: { variable: string; a: number | null; b: number | null; deltaMs: number | null }[] = [];
  for (const name of names) {
    const sa: Side = { outcome: va.get(name) ?? null, durationMs: da.get(name) ?? null };
    const sb: Side = { outcome: vb.get(name) ?? null, durationMs: db.get(name) ?? null };
    if (sa.outcome && sb.outcome) {
      if (!same(sa.outcome, sb.outcome)) changed.push({ variable: name, a: strip(sa.outcome), b: strip(sb.outcome) });
    } else if (sb.outcome) added.push({ variable: name, b: strip(sb.outcome) });
    else if (sa.outcome) removed.push({ variable: name, a: strip(sa.outcome) });
    if (sa.durationMs !== null || sb.durationMs !== null) {
      timing.push({ variable: name, a: sa.durationMs, b: sb.durationMs, deltaMs: sa.durationMs !== null && sb.durationMs !== null ? round(sb.durationMs - sa.durationMs) : null });
    }
  }
  const total = { a: left.record.end?.durationMs ?? null, b: right.record.end?.durationMs ?? null };
  const plan = { a: left.record.header.plan.sha256, b: right.record.header.plan.sha256 };
  const differs = changed.length + added.length + removed.length > 0;
  if (options.json) {
    io.stdout(jsonLine({
      a: { file: left.shown, plan: plan.a, finished: left.record.end !== null },
      b: { file: right.shown, plan: plan.b, finished: right.record.end !== null },
      planChanged: plan.a !== plan.b,
      changed, added, removed, timing, totalMs: total,
    }) + '\n');
    return differs ? 1 : 0;
  }
  const threshold = options.timingThreshold ?? 50;
  const out: string[] = [];
  out.push(`--- ${left.shown}${left.record.end ? '' : ' (unfinished run)'}`, `+++ ${right.shown}${right.record.end ? '' : ' (unfinished run)'}`);
  if (plan.a !== plan.b) out.push('plan text differs');
  for (const c of changed) {
    const from = divergence(c.a, c.b);
    out.push(`~ @${c.variable}: ${shown(c.a, from)} -> ${shown(c.b, from)}`);
  }
  for (const c of added) out.push(`+ @${c.variable}: ${shown(c.b)}`);
  for (const c of removed) out.push(`- @${c.variable}: ${shown(c.a)}`);
  const slow = timing.filter((t) => t.a !== null && t.b !== null && Math.abs(t.b - t.a) >= threshold && Math.abs(t.b - t.a) >= 0.5 * Math.min(t.a, t.b));
  for (const t of slow) out.push(`time @${t.variable}: ${t.a} ms -> ${t.b} ms (${t.deltaMs! > 0 ? '+' : ''}${t.deltaMs} ms)`);
  if (total.a !== null && total.b !== null) out.push(`run: ${total.a} ms -> ${total.b} ms`);
  out.push(differs
    ? `${changed.length} changed, ${added.length} added, ${removed.length} removed`
    : 'no status or value changes');
  io.stdout(out.map((line) => terminalText(line)).join('\n') + '\n');
  return differs ? 1 : 0;
}

function strip(o: RecordedOutcome & { lineNumber?: number }): RecordedOutcome {
  const { lineNumber: _line, ...rest } = o;
  return rest;
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
