/**
 * `lightsop replay RECORD [--plan PLAN]` (docs/run-records.md): runs the recorded plan (or an
 * edited one) with every command and model call answered from the record: no skills module is
 * loaded, no model is called, nothing leaves the machine. What the record cannot answer fails
 * with a reason that says so and is listed on standard error as FILE:LINE:COLUMN. Output and exit
 * codes are `lightsop run`'s.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isEnglishSource } from '@lightsop/core';
import { parseRunRecord, replayFromRecord, RunRecordError, type RunRecord } from '@lightsop/runtime';
import { CliError } from '../errors';
import { expandPaths, readPlanFile, stripBom } from '../files';
import type { Io } from '../io';
import { oneLine, terminalText } from '../terminal-text';
import { checkPlan, executeRun, type ProcessSignals, type RunOptions } from './run';

const USAGE = 3;

export interface ReplayOptions extends Pick<RunOptions, 'json' | 'timeout' | 'grace' | 'concurrency' | 'input'> {
  readonly plan?: string;
}

/** Reads and parses a record file; problems are one-line errors with `exitCode`. */
export function readRecordFile(file: string, cwd: string, exitCode: number): { record: RunRecord; shown: string } {
  const absolute = path.resolve(cwd, file);
  const shown = path.relative(cwd, absolute) || absolute;
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(`${shown}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a folder, not a run record' : (error as Error).message}`, exitCode);
  }
  try {
    return { record: parseRunRecord(text), shown };
  } catch (error) {
    if (error instanceof RunRecordError) throw new CliError(`${shown}:${error.line}:1: ${error.message}`, exitCode);
    throw error;
  }
}

export async function replayCommand(recordPath: string, options: ReplayOptions, io: Io, signals?: ProcessSignals): Promise<number> {
  const { record, shown } = readRecordFile(recordPath, io.cwd, USAGE);
  let text = record.header.plan.text;
  let display = `${record.header.plan.file ?? 'plan'} (recorded in ${shown})`;
  if (options.plan !== undefined) {
    const files = expandPaths([options.plan], io.cwd, USAGE);
    if (files.length !== 1) throw new CliError(`${options.plan}: give exactly one plan file`, USAGE);
    text = stripBom(readPlanFile(files[0]!, USAGE)).text;
    display = files[0]!.display;
  }
  const header = record.header;
  const input = options.input !== undefined ? options.input : header.input.supplied ? header.input.value : undefined;
  const checked = checkPlan(text, display, input !== undefined, options, io);
  if (checked === null) return 2;
  if (record.truncated || !record.end) {
    io.stderr(`lightsop: note: ${terminalText(shown)} is the record of a run that did not finish; commands that had not finished cannot be answered\n`);
  }
  const replay = replayFromRecord(record);
  const english = isEnglishSource(text);
  return executeRun({
    display, text, english, declaredNames: checked.names, analysis: checked.analysis, registry: replay.registry, llmAgent: english ? replay.llmAgent : null, input,
    recordFile: null,
    afterReport: (code) => {
      for (const miss of replay.misses) {
        const where = miss.kind === 'command' ? `${display}:${miss.lineNumber}:1` : display;
        const what = miss.kind === 'command' ? `@${miss.variable}: ${oneLine(miss.raw, 120)}` : 'a model call';
        io.stderr(`${terminalText(where)}: replay: ${terminalText(miss.reason)}: ${terminalText(what)}\n`);
      }
      const commands = replay.answered();
      io.stderr(`lightsop: replayed ${terminalText(shown)}: ${commands} command${commands === 1 ? '' : 's'} answered from the record, ${replay.misses.length} call${replay.misses.length === 1 ? '' : 's'} not answered\n`);
      return code === 0 && replay.misses.length > 0 ? 1 : code;
    },
  }, options, io, signals);
}
