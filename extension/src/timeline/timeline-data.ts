/**
 * The run timeline's data, from a run record (docs/run-records.md): one bar per command call
 * (start and end in milliseconds since the run started, status, the declaration's line), and the
 * critical path: from the call that ended last, back through the dependency that ended last
 * before each call started (the one it waited for), to a call that waited for none. Pure data,
 * no `vscode` import and no DOM, so unit tests cover it; the page draws what this gives.
 */
import type { RunRecord } from '@lightsop/runtime';

/** A command's status on the timeline: the runtime's four, or `running` when the record has no end for it. */
export type BarStatus = 'success' | 'fail' | 'canceled' | 'undefined' | 'running';

export interface TimelineBar {
  /** The call's sequence number in the record. */
  readonly seq: number;
  readonly variable: string;
  readonly command: string;
  /** The declaration's text, on one line, shortened. */
  readonly raw: string;
  readonly status: BarStatus;
  /** Milliseconds since the run started. */
  readonly start: number;
  readonly end: number;
  /** The declaration's 1-based line in the plan (lines end at LF), or null when the record has none. */
  readonly line: number | null;
  /**
   * For an #!english run: which of the record's generated plans (`record.plans`, in order) the
   * call belongs to, the last one written before it started; null otherwise.
   */
  readonly plan: number | null;
  readonly dependencies: readonly string[];
  /** The value or reason, shortened (empty while running). */
  readonly value: string;
  /** On the critical path. */
  readonly critical: boolean;
}

export interface Timeline {
  /** The plan's file name (or "plan" for an editor buffer). */
  readonly title: string;
  /** The plan's path as the record names it, or null. */
  readonly planFile: string | null;
  readonly startedAt: string;
  /** The run's length: its closing line's, else the last time the record holds. */
  readonly durationMs: number;
  /** Bars in start order. */
  readonly bars: readonly TimelineBar[];
  /** The critical path's variables, first to last. */
  readonly criticalPath: readonly string[];
  /** Milliseconds of the critical path's calls (their sum, waits between them excluded). */
  readonly criticalMs: number;
  /** The record stops before the run ended (a run killed or still going). */
  readonly unfinished: boolean;
  readonly aborted: boolean;
  /** An #!english script's run: the bars' lines are the generated plan's. */
  readonly english: boolean;
}

const MAX_TEXT = 160;

function short(text: string, max = MAX_TEXT): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function valueText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}

function baseName(file: string): string {
  const parts = file.split(/[\\/]/);
  return parts[parts.length - 1] || file;
}

/** The timeline of a parsed run record. */
export function timelineOf(record: RunRecord): Timeline {
  let last = 0;
  for (const line of record.lines) {
    const t = (line as { t?: unknown }).t;
    if (typeof t === 'number' && Number.isFinite(t) && t > last) last = t;
  }
  const durationMs = record.end && typeof record.end.durationMs === 'number' ? Math.max(record.end.durationMs, last) : last;
  const planOf = generatedPlanOfCalls(record);
  const bars: { seq: number; variable: string; command: string; raw: string; status: BarStatus; start: number; end: number; line: number | null; plan: number | null; dependencies: string[]; value: string }[] = [];
  for (const call of record.calls) {
    const s = call.start;
    const start = typeof s.t === 'number' ? s.t : 0;
    const e = call.end;
    const end = e && typeof e.t === 'number' ? Math.max(start, e.t) : Math.max(start, durationMs);
    const status: BarStatus = e ? e.status : 'running';
    const value = e ? (e.status === 'success' ? valueText(e.value) : e.reason ?? '') : '';
    bars.push({
      seq: s.seq,
      variable: s.variable,
      command: s.command,
      raw: short(s.raw),
      status,
      start,
      end,
      line: typeof s.lineNumber === 'number' && Number.isInteger(s.lineNumber) && s.lineNumber >= 1 ? s.lineNumber : null,
      plan: planOf.get(s.seq) ?? null,
      dependencies: Array.isArray(s.dependencies) ? s.dependencies.filter((d): d is string => typeof d === 'string') : [],
      value: short(value),
    });
  }
  bars.sort((a, b) => a.start - b.start || a.seq - b.seq);
  const path = criticalPath(bars);
  const onPath = new Set(path);
  let criticalMs = 0;
  for (const i of path) criticalMs += bars[i]!.end - bars[i]!.start;
  const file = record.header.plan.file ?? null;
  return {
    title: file ? baseName(file) : 'plan',
    planFile: file,
    startedAt: typeof record.header.startedAt === 'string' ? record.header.startedAt : '',
    durationMs,
    bars: bars.map((b, i) => ({ ...b, critical: onPath.has(i) })),
    criticalPath: path.map((i) => bars[i]!.variable),
    criticalMs,
    unfinished: record.end === null,
    aborted: record.end?.aborted === true,
    english: record.header.plan.english === true,
  };
}

/**
 * For each command call (by seq), the index in `record.plans` of the generated plan it ran from:
 * the last `plan-generated` line before its `command-start` in the record (a revision after a
 * failure comes before the calls of the revised plan).
 */
function generatedPlanOfCalls(record: RunRecord): Map<number, number> {
  const of = new Map<number, number>();
  let plan = -1;
  for (const line of record.lines) {
    const type = (line as { type?: unknown }).type;
    if (type === 'plan-generated') plan++;
    else if (type === 'command-start' && plan >= 0) of.set((line as { seq: number }).seq, plan);
  }
  return of;
}

/**
 * The critical path of bars (in start order) as their indices, first to last: the bar that ended
 * last (of those, the one that started last), then repeatedly the dependency call that ended last no later than the
 * current one started. Linear in bars and dependencies; a call of a variable seen again (a later
 * revision of an #!english plan) counts as the latest call that ended before.
 */
export function criticalPath(bars: readonly { variable: string; start: number; end: number; dependencies: readonly string[] }[]): number[] {
  if (bars.length === 0) return [];
  let tail = 0;
  for (let i = 1; i < bars.length; i++) {
    const b = bars[i]!;
    const t = bars[tail]!;
    if (b.end > t.end || (b.end === t.end && b.start > t.start)) tail = i;
  }
  const byVariable = new Map<string, number[]>();
  bars.forEach((b, i) => {
    const list = byVariable.get(b.variable) ?? [];
    list.push(i);
    byVariable.set(b.variable, list);
  });
  const path = [tail];
  const seen = new Set([tail]);
  let current = tail;
  for (;;) {
    const bar = bars[current]!;
    let best = -1;
    for (const dep of bar.dependencies) {
      for (const i of byVariable.get(dep) ?? []) {
        const d = bars[i]!;
        if (seen.has(i) || d.end > bar.start) continue;
        if (best < 0 || d.end > bars[best]!.end) best = i;
      }
    }
    if (best < 0) break;
    path.push(best);
    seen.add(best);
    current = best;
  }
  return path.reverse();
}

/** Ticks for a time axis of `durationMs`: about `count` round steps (1, 2 or 5 × 10^k ms). */
export function axisTicks(durationMs: number, count = 8): number[] {
  const span = Math.max(durationMs, 1);
  const raw = span / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw;
  const ticks: number[] = [];
  for (let t = 0; t <= span + step / 2 && ticks.length < 100; t += step) ticks.push(Math.round(t * 1000) / 1000);
  return ticks;
}

/** A duration for people: 850 ms, 1.2 s, 3 min 5 s. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} min ${Math.round((ms - m * 60_000) / 1000)} s`;
}
