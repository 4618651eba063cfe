/**
 * `lightsop batch`: one plan over many inputs, one BullMQ job per input, run by whole-plan
 * workers. The coordinator keeps a bounded window of jobs in Redis, writes each input's result to
 * the results file exactly once (in completion order), and can be stopped and rerun: a rerun
 * skips the ids already in the results file and takes the results Redis still holds.
 */
import { closeSync, openSync } from 'node:fs';
import { CommandSurface, analyzePlan, type Diagnostic } from '@lightsop/core';
import { PLAN_JOB, type PlanJobData, type PlanOutcome } from './protocol';
import { indexInputs, inputText, openResults, readInput, shortHash } from './batch-files';
import { openDispatcher, type JobEnd, type JobSpec } from './dispatcher';
import { ProgressReporter } from './progress';
import { RedisUnavailableError, type RedisTarget } from './redis';
import { NoWorkersError, unionOfCommands } from './remote-registry';

/**
 * The plan calls a command no worker of the queue hosts, or gives a command with known arguments
 * (an MCP tool) the wrong ones: checked against the workers' published commands before anything
 * is submitted, so a typo does not fail a million inputs one by one.
 */
export class PlanCommandsError extends Error {
  constructor(readonly diagnostics: readonly Diagnostic[]) {
    super(`the plan does not fit the commands of the queue's workers (${diagnostics.length} error(s))`);
    this.name = 'PlanCommandsError';
  }
}

export interface BatchOptions {
  readonly redis: RedisTarget;
  readonly queue: string;
  readonly plan: string;
  readonly inputs: { readonly path: string; readonly display: string };
  readonly out: { readonly path: string; readonly display: string };
  /** Per-input run limit on the worker (0: none). */
  readonly timeoutMs: number;
  /** Most jobs of this batch in Redis at once. */
  readonly maxPending: number;
  readonly reconnectTimeoutMs: number;
  readonly progress: { readonly tty: boolean; readonly columns: number; readonly intervalMs: number };
  /** stderr. */
  readonly write: (text: string) => void;
  /** Aborting stops the batch: jobs not started are removed, results so far are kept. */
  readonly signal?: AbortSignal;
}

export interface BatchSummary {
  readonly total: number;
  /** Inputs whose result was in the file before this run. */
  readonly skipped: number;
  /** Results written by this run. */
  readonly written: number;
  /** Results (old and new) that are not a success. */
  readonly notOk: number;
  readonly interrupted: boolean;
  /** Set when Redis was lost for good. */
  readonly failure: RedisUnavailableError | null;
}

/** Runs a batch to the end (or until aborted, or until Redis is lost for good). */
export async function runBatch(options: BatchOptions): Promise<BatchSummary> {
  const planHash = shortHash(options.plan, 10);
  const index = indexInputs(options.inputs.path, options.inputs.display, planHash);
  const results = openResults(options.out.path, options.out.display);
  const log = (line: string) => {
    progress?.clear();
    options.write(`lightsop batch: ${line}\n`);
  };
  let progress: ProgressReporter | null = null;
  let inputFd = -1;
  try {
    if (results.repaired) log(results.repaired);
    let skipped = 0;
    let notOkBefore = 0;
    for (let i = 0; i < index.count; i++) {
      const id = index.idOf(i);
      if (!results.done.has(id)) continue;
      skipped++;
      if (results.notOkBefore.has(id)) notOkBefore++;
    }
    if (skipped > 0) log(`${skipped} of ${index.count} inputs already have a result in ${options.out.display}; running the other ${index.count - skipped}`);
    if (skipped === index.count) return { total: index.count, skipped, written: 0, notOk: notOkBefore, interrupted: false, failure: null };

    inputFd = openSync(options.inputs.path, 'r');
    // The inputs in flight: job id to input number and text (read once from the file).
    const slot = new Map<string, { i: number; input: string }>();
    let next = 0;
    let written = 0;
    let notOk = notOkBefore;
    let finish: (() => void) | null = null;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    let stopped = false;
    let failure: RedisUnavailableError | null = null;
    let submitting = false;
    let pumpAgain = false;
    let pumpScheduled = false;
    // Submits jobs while the window has room; set once the dispatcher is ready.
    let pump: () => Promise<void> = async () => {};

    const onEnd = (id: string, end: JobEnd) => {
      const entry = slot.get(id);
      if (entry === undefined) return;
      slot.delete(id);
      const record = resultRecord(index.lines[entry.i]!, id, entry.input, end);
      if (results.append(id, record)) {
        written++;
        const ok = record.status === 'success';
        if (!ok) notOk++;
        progress?.add(ok);
      }
      // Ends come in batches (one read of the event stream): one submission refills the window for all of them.
      if (!pumpScheduled) {
        pumpScheduled = true;
        setImmediate(() => {
          pumpScheduled = false;
          void pump();
        });
      }
    };

    const dispatcher = await openDispatcher({
      redis: options.redis,
      queue: options.queue,
      reconnectTimeoutMs: options.reconnectTimeoutMs,
      log,
      onEnd,
      onFailure: (error) => {
        failure = error;
        stopped = true;
        finish?.();
      },
      eventsMaxLen: Math.max(10_000, options.maxPending * 20),
      // Plan jobs take a while each: gathering their ends for 20 ms costs nothing and saves the
      // coordinator a wake-up, a read and a submission per input.
      eventBatchMs: 20,
    });
    const syncTimer = setInterval(() => results.sync(), 200);
    syncTimer.unref();
    try {
      await dispatcher.ready();
      const workers = await dispatcher.workers();
      if (workers.length === 0) {
        throw new NoWorkersError(`no worker is listening on queue "${options.queue}" at ${options.redis.display}; start one with: lightsop worker --redis URL --skills MODULE${options.queue === 'lightsop' ? '' : ` --queue ${options.queue}`}`);
      }
      const commands = new CommandSurface([unionOfCommands(workers, log)]);
      const misfits = analyzePlan(options.plan, { commands, inputDeclared: true }).diagnostics.filter((d) => d.severity === 'error');
      if (misfits.length > 0) throw new PlanCommandsError(misfits);
      log(`${index.count - skipped} inputs to run on ${workers.length} worker(s), ${workers.reduce((n, w) => n + w.concurrency, 0)} job slot(s), queue "${options.queue}"`);
      progress = new ProgressReporter({ total: index.count, skipped, tty: options.progress.tty, columns: options.progress.columns, write: options.write, intervalMs: options.progress.intervalMs });

      const jobOpts = {
        attempts: 1,
        // Kept after they end so that a coordinator that missed the end (a reconnection, a rerun)
        // still finds the result; older ones make room as new ones end.
        removeOnComplete: { count: Math.max(10_000, options.maxPending * 4) },
        removeOnFail: { count: Math.max(10_000, options.maxPending * 4) },
      };
      pump = async (): Promise<void> => {
        if (submitting) {
          pumpAgain = true;
          return;
        }
        submitting = true;
        try {
          do {
            pumpAgain = false;
            while (!stopped && next < index.count && slot.size < options.maxPending) {
              const specs: JobSpec[] = [];
              while (next < index.count && slot.size < options.maxPending && specs.length < 500) {
                const i = next++;
                const id = index.idOf(i);
                if (results.done.has(id)) continue;
                const input = inputText(readInput(inputFd, index, i));
                slot.set(id, { i, input });
                const data: PlanJobData = { plan: options.plan, input, timeoutMs: options.timeoutMs };
                specs.push({ id, name: PLAN_JOB, data, opts: jobOpts });
              }
              if (specs.length > 0) await dispatcher.submit(specs);
            }
          } while (pumpAgain && !stopped);
          if (!stopped && next >= index.count && slot.size === 0) finish?.();
        } catch (error) {
          if (error instanceof RedisUnavailableError) {
            failure = error;
            stopped = true;
            finish?.();
          } else {
            throw error;
          }
        } finally {
          submitting = false;
        }
      };

      const onAbort = () => {
        if (stopped) return;
        stopped = true;
        log(`interrupted; removing the jobs no worker has started (results so far are in ${options.out.display})`);
        void (async () => {
          const ids = [...slot.keys()];
          for (let k = 0; k < ids.length; k += 200) {
            await Promise.all(ids.slice(k, k + 200).map(async (id) => {
              dispatcher.forget(id);
              await dispatcher.removeIfWaiting(id);
            }));
          }
          finish?.();
        })();
      };
      if (options.signal?.aborted) onAbort();
      else options.signal?.addEventListener('abort', onAbort, { once: true });
      await pump();
      await finished;
      options.signal?.removeEventListener('abort', onAbort);
    } finally {
      clearInterval(syncTimer);
      progress?.finish();
      await dispatcher.close();
    }
    if (failure) log(`${(failure as RedisUnavailableError).message}; ${written} result(s) were written; rerun the same command to go on`);
    return { total: index.count, skipped, written, notOk, interrupted: Boolean(options.signal?.aborted), failure };
  } finally {
    if (inputFd >= 0) closeSync(inputFd);
    results.close();
  }
}

/** A result line. The status is `success` (every variable succeeded), `fail`, or `error` (the job itself failed). */
function resultRecord(line: number, id: string, input: string, end: JobEnd): Record<string, unknown> & { status: string } {
  if (end.state === 'failed') return { line, id, input, status: 'error', error: end.reason };
  const o = end.value as PlanOutcome | null;
  if (!o || typeof o !== 'object' || (o.status !== 'success' && o.status !== 'fail') || typeof o.variables !== 'object' || !Array.isArray(o.failures) || !Array.isArray(o.commands)) {
    return { line, id, input, status: 'error', error: 'a worker sent a result this coordinator does not understand' };
  }
  const record: Record<string, unknown> & { status: string } = { line, id, input, status: o.status, variables: o.variables, failures: o.failures, commands: o.commands };
  if (typeof o.aborted === 'string') record.aborted = o.aborted;
  return record;
}
