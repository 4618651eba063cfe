/**
 * Run records of Run Plan and Debug Plan (docs/run-records.md): every run is recorded in memory
 * for the run timeline (the last one is kept), and written to a file too when the
 * `lightsop.run.recordFile` setting names one. The file is refused, like `lightsop run --record`
 * refuses it, when it is the plan, a folder, or an existing file that is not a run record, so a
 * setting never overwrites a user's file. No `vscode` import: the hosts pass the settings in.
 */
import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { openRecordFile, RunRecorder, RUN_RECORD_SCHEMA, type RecordSink } from '@lightsop/runtime';

/** A finished (or stopped) run's record, as the timeline reads it. */
export interface RecordedRun {
  /** The record's JSON Lines text. */
  readonly text: string;
  /** The plan's document URI (the timeline reveals declarations in it). */
  readonly planUri: string;
  /** The record file written for it, if any. */
  readonly file: string | null;
}

/** The last run of the window, with listeners for the next. */
export class RunHistory {
  private last: RecordedRun | null = null;
  private readonly listeners = new Set<(run: RecordedRun) => void>();

  get lastRun(): RecordedRun | null {
    return this.last;
  }

  onDidRecord(listener: (run: RecordedRun) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Stores a finished run and tells the listeners. */
  record(run: RecordedRun): void {
    this.last = run;
    for (const l of this.listeners) l(run);
  }
}

/** Why `target` may not receive a record, or null when it may (absent, or an earlier record). */
export function recordTargetProblem(target: string, planFile: string | null): string | null {
  let stat;
  try {
    stat = statSync(target);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : (error as Error).message;
  }
  if (stat.isDirectory()) return 'is a folder; give a file for the record';
  try {
    if (planFile && realpathSync(target) === realpathSync(planFile)) return 'is the plan file; give another file for the record';
  } catch {
    // The plan is not on disk: it cannot be the target.
  }
  if (stat.size === 0) return null;
  const head = Buffer.alloc(200);
  let read = 0;
  try {
    const fd = openSync(target, 'r');
    try {
      read = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    return (error as Error).message;
  }
  const first = head.subarray(0, read).toString('utf8');
  return first.startsWith(`{"type":"run","schema":"${RUN_RECORD_SCHEMA}"`) ? null : 'the file exists and is not a run record; refusing to overwrite it';
}

/** The absolute record file a `lightsop.run.recordFile` value names (relative to `base`), or null. */
export function recordFileFor(setting: string | undefined, base: string | null): string | null {
  const value = (setting ?? '').trim();
  if (!value) return null;
  return path.resolve(base ?? process.cwd(), value);
}

/** A sink that keeps the lines in memory and also writes them to `file`, if given. */
function teeSink(file: string | null, lines: string[]): RecordSink {
  const disk = file ? openRecordFile(file) : null;
  return {
    write(line) {
      lines.push(line);
      disk?.write(line);
    },
    close() {
      disk?.close?.();
    },
  };
}

export interface RecorderOptions {
  readonly planUri: string;
  readonly planFile: string | null;
  /** The absolute record file (lightsop.run.recordFile), or null for memory only. */
  readonly file: string | null;
  /** Values never written (the LLM API key). */
  readonly secrets?: readonly (string | undefined)[];
  readonly version: string;
  readonly history: RunHistory;
}

/**
 * A recorder whose lines go to memory (and the file); the run is stored in `history` when the
 * sink closes. Throws (with a one-line message) when the file is refused or cannot be opened.
 */
export function openRunRecorder(o: RecorderOptions): RunRecorder {
  if (o.file) {
    const problem = recordTargetProblem(o.file, o.planFile);
    if (problem) throw new Error(`lightsop.run.recordFile ${o.file}: ${problem}`);
  }
  const lines: string[] = [];
  let sink: RecordSink;
  try {
    sink = teeSink(o.file, lines);
  } catch (error) {
    throw new Error(`lightsop.run.recordFile ${o.file ?? ''}: ${(error as Error).message}`);
  }
  const closing: RecordSink = {
    write: (line) => sink.write(line),
    close: () => {
      try {
        sink.close?.();
      } finally {
        o.history.record({ text: lines.join(''), planUri: o.planUri, file: o.file });
      }
    },
  };
  return new RunRecorder(closing, { secrets: o.secrets, tool: { name: 'lightsop-vscode', version: o.version } });
}
