/**
 * `lightsop batch`: runs one plan over every line of a JSON Lines file on the workers of a Redis
 * queue, writing one result line per input to `--out` (docs/scale-out.md). The plan is checked
 * here first: an invalid plan submits nothing (exit 2). Exit 0 when every input's run succeeded,
 * 1 when some did not or the batch was interrupted, 3 for usage, file and Redis errors.
 */
import path from 'node:path';
import { analyzePlan, isEnglishSource } from '@lightsop/core';
import { asCliError, loadDistributed } from '../distributed';
import { CliError } from '../errors';
import { expandPaths, readPlanFile, stripBom } from '../files';
import type { Io } from '../io';

export interface BatchCommandOptions {
  readonly inputs: string;
  readonly redis: string;
  readonly out: string;
  readonly queue?: string;
  readonly timeout?: number;
  readonly maxPending?: number;
  readonly reconnectTimeout?: number;
  readonly progressInterval?: number;
}

export interface BatchHost {
  readonly stderrIsTTY: boolean;
  readonly stderrColumns: number;
  onInterrupt(handler: () => void): () => void;
  exit(code: number): void;
}

const USAGE = 3;

export async function batchCommand(plan: string, options: BatchCommandOptions, io: Io, host: BatchHost): Promise<number> {
  const files = expandPaths([plan], io.cwd, USAGE);
  if (files.length !== 1) throw new CliError(`${plan}: give exactly one plan file`, USAGE);
  const file = files[0]!;
  const { text } = stripBom(readPlanFile(file, USAGE));
  if (isEnglishSource(text)) {
    throw new CliError(`${file.display}: batch runs plans, not english scripts; generate the plan once (lightsop run) and batch that`, USAGE);
  }
  const errors = analyzePlan(text, { inputDeclared: true }).diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) {
    for (const d of errors) io.stderr(`${file.display}:${d.range.line}:${d.range.column}: error: ${d.message} [${d.code}]\n`);
    io.stderr(`lightsop: ${file.display} is not a valid plan; nothing was submitted\n`);
    return 2;
  }
  const inputsPath = path.resolve(io.cwd, options.inputs);
  const outPath = path.resolve(io.cwd, options.out);
  if (inputsPath === outPath) throw new CliError('--inputs and --out name the same file', USAGE);

  const d = await loadDistributed();
  const controller = new AbortController();
  let interrupts = 0;
  const detach = host.onInterrupt(() => {
    interrupts++;
    if (interrupts > 1) host.exit(130);
    controller.abort(new Error('interrupted'));
  });
  const started = Date.now();
  try {
    const summary = await d.runBatch({
      redis: d.parseRedisUrl(options.redis),
      queue: d.checkQueueName(options.queue ?? d.DEFAULT_QUEUE),
      plan: text,
      inputs: { path: inputsPath, display: options.inputs },
      out: { path: outPath, display: options.out },
      timeoutMs: options.timeout ?? 0,
      maxPending: options.maxPending ?? 2000,
      reconnectTimeoutMs: options.reconnectTimeout ?? 30_000,
      progress: { tty: host.stderrIsTTY, columns: host.stderrColumns, intervalMs: options.progressInterval ?? 5000 },
      write: (t) => io.stderr(t),
      signal: controller.signal,
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const complete = summary.skipped + summary.written;
    io.stderr(`lightsop batch: ${complete} of ${summary.total} inputs have a result in ${options.out} (${summary.written} written now, ${summary.skipped} before); ${summary.notOk} not ok (${seconds} s)\n`);
    if (summary.failure) return USAGE;
    if (summary.interrupted || complete < summary.total) return 1;
    return summary.notOk > 0 ? 1 : 0;
  } catch (error) {
    if (error instanceof d.PlanCommandsError) {
      for (const x of error.diagnostics) io.stderr(`${file.display}:${x.range.line}:${x.range.column}: error: ${x.message} [${x.code}]\n`);
      io.stderr(`lightsop: ${file.display} calls commands the workers on the queue do not host as written; nothing was submitted\n`);
      return 2;
    }
    throw asCliError(error);
  } finally {
    detach();
  }
}
