/**
 * The executor of `lightsop run --redis`: a CommandRegistry whose `executeCommand` sends the
 * command to the workers as a BullMQ job and gives back the value the worker's registry gave.
 * The Interpreter keeps scheduling locally and cannot tell the difference, except that values
 * travel as JSON. Aborting the run removes commands no worker has taken and asks the workers to
 * abort the running ones; a command whose worker does not answer in time fails instead of holding
 * the run.
 */
import { randomBytes } from 'node:crypto';
import { CommandSurface, readRegistryCommands, type CommandSpec } from '@lightsop/core';
import { nextTimestamp, type CommandPayload, type CommandRegistry, type Responder } from '@lightsop/runtime';
import { openDispatcher, type Dispatcher, type JobEnd } from './dispatcher';
import { COMMAND_JOB, cancelChannel, type CommandJobData, type CommandOutcome, type WorkerInfo } from './protocol';
import { RedisUnavailableError, formatMs, type RedisTarget } from './redis';

export interface RemoteRegistryOptions {
  readonly redis: RedisTarget;
  readonly queue: string;
  readonly reconnectTimeoutMs: number;
  /** After an abort, how long to wait for a running command's worker to answer. */
  readonly cancelGraceMs: number;
  readonly log: (line: string) => void;
}

export interface RemoteRegistry {
  readonly registry: CommandRegistry;
  readonly workers: readonly WorkerInfo[];
  /** Set when Redis was lost for good during the run. */
  readonly failure: RedisUnavailableError | null;
  close(): Promise<void>;
}

/** No worker is listening on the queue: nothing could run. */
export class NoWorkersError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoWorkersError';
  }
}

interface Waiting {
  resolve(end: JobEnd): void;
}

/** Connects to Redis, finds the workers of the queue and returns the registry that uses them. */
export async function openRemoteRegistry(options: RemoteRegistryOptions): Promise<RemoteRegistry> {
  const waiting = new Map<string, Waiting>();
  const dispatcher: Dispatcher = await openDispatcher({
    redis: options.redis,
    queue: options.queue,
    reconnectTimeoutMs: options.reconnectTimeoutMs,
    log: options.log,
    onEnd: (id, end) => {
      const w = waiting.get(id);
      waiting.delete(id);
      w?.resolve(end);
    },
    onFailure: (error) => {
      for (const w of waiting.values()) w.resolve({ state: 'failed', reason: error.message });
      waiting.clear();
    },
  });
  let workers: WorkerInfo[];
  try {
    await dispatcher.ready();
    workers = await dispatcher.workers();
  } catch (error) {
    await dispatcher.close();
    throw error;
  }
  if (workers.length === 0) {
    await dispatcher.close();
    throw new NoWorkersError(`no worker is listening on queue "${options.queue}" at ${options.redis.display}; start one with: lightsop worker --redis URL --skills MODULE${options.queue === 'lightsop' ? '' : ` --queue ${options.queue}`}`);
  }
  const commands = unionOfCommands(workers, options.log);
  const runId = randomBytes(6).toString('hex');
  const submissions = new Map<string, Promise<void>>();
  let sequence = 0;

  const executeCommand = async (payload: CommandPayload, responder: Responder): Promise<unknown> => {
    const data: CommandJobData = {
      command: payload.command,
      args: payload.args,
      raw: payload.raw,
      variable: payload.variable,
      lineNumber: payload.lineNumber,
      comment: payload.comment,
      commentLines: payload.commentLines,
    };
    try {
      JSON.stringify(data);
    } catch (error) {
      return responder.fail(`the command's arguments cannot be sent to a worker (${(error as Error).message})`);
    }
    if (dispatcher.failure) throw dispatcher.failure;
    const id = `${runId}-${++sequence}`;
    const signal = payload.signal;
    if (signal?.aborted) return responder.fail('interrupted before the command was sent to a worker');
    const end = new Promise<JobEnd>((resolve) => waiting.set(id, { resolve }));
    if (signal) watchSignal(signal).add(id);
    const submitted = dispatcher.submit([{ id, name: COMMAND_JOB, data, opts: { attempts: 1, removeOnComplete: { age: 3600, count: 10_000 }, removeOnFail: { age: 24 * 3600, count: 10_000 } } }]);
    submissions.set(id, submitted);
    try {
      await submitted;
    } catch (error) {
      waiting.delete(id);
      dispatcher.forget(id);
      if (signal) signals.get(signal)?.delete(id);
      throw error;
    } finally {
      submissions.delete(id);
    }
    const result = await end;
    if (signal) signals.get(signal)?.delete(id);
    if (result.state === 'failed') throw new Error(result.reason);
    return fromOutcome(result.value);
  };

  // One listener per run signal (not one per command: a wide plan would pass Node's listener
  // warning limit); it aborts every job of that run still waiting for its end.
  const signals = new WeakMap<AbortSignal, Set<string>>();
  const watchSignal = (signal: AbortSignal): Set<string> => {
    let ids = signals.get(signal);
    if (!ids) {
      const set = new Set<string>();
      ids = set;
      signals.set(signal, set);
      signal.addEventListener('abort', () => {
        for (const id of set) void abortJob(id);
      }, { once: true });
    }
    return ids;
  };

  /** Removes a job nobody took, else asks its worker to abort it and bounds the wait. */
  const abortJob = async (id: string): Promise<void> => {
    // A job still being added is removed (or canceled) once it is in Redis.
    await submissions.get(id)?.catch(() => {});
    if (!waiting.has(id)) return;
    if (await dispatcher.removeIfWaiting(id)) {
      dispatcher.forget(id);
      settle(id, { state: 'completed', value: { type: 'value', value: { status: 'fail', data: 'interrupted before a worker started the command (its job was removed)', raw: 'fail' } } });
      return;
    }
    await dispatcher.cancel(id, cancelChannel(options.queue));
    setTimeout(() => {
      if (!waiting.has(id)) return;
      dispatcher.forget(id);
      settle(id, { state: 'failed', reason: `interrupted; the worker did not answer within ${formatMs(options.cancelGraceMs)} (job ${id} may still be running there)` });
    }, options.cancelGraceMs).unref();
  };
  const settle = (id: string, end: JobEnd) => {
    const w = waiting.get(id);
    waiting.delete(id);
    w?.resolve(end);
  };

  const registry: CommandRegistry = {
    listCommands: () => commands,
    executeCommand,
  };
  return {
    registry,
    workers,
    get failure() {
      return dispatcher.failure;
    },
    close: () => dispatcher.close(),
  };
}

/**
 * Turns a worker's answer back into what a local `executeCommand` would have returned. A value
 * record gets a fresh local timestamp: timestamps increase strictly within one run (5.4), and the
 * worker's clock is another machine's.
 */
function fromOutcome(outcome: unknown): unknown {
  const o = outcome as CommandOutcome | null;
  if (!o || typeof o !== 'object' || (o.type !== 'value' && o.type !== 'throw')) throw new Error('a worker sent an answer this coordinator does not understand');
  if (o.type === 'throw') throw new Error(String(o.message));
  const value = o.value;
  const record = value as Record<string, unknown> | null;
  if (record && typeof record === 'object' && !Array.isArray(record) && record.status && record.raw) {
    const timestamp = nextTimestamp();
    return { ...record, timestamp, raw: `${timestamp}:${String(record.status)}:${String(record.data ?? '')}` };
  }
  return value;
}

/** Every command some worker offers; a warning when the workers of one queue differ. */
export function unionOfCommands(workers: readonly WorkerInfo[], log: (line: string) => void): readonly CommandSpec[] {
  // A worker's list comes through Redis: core's reader takes only usable entries, the first worker naming a command wins.
  const listings = workers.map((w) => readRegistryCommands({ listCommands: () => w.commands }, { kind: 'registry', name: 'lightsop worker' }));
  const signatures = new Set(listings.map((l) => l.map((c) => c.name).sort().join(',')));
  if (signatures.size > 1) log(`warning: the workers on this queue host different skills; a command may reach a worker that lacks it`);
  return new CommandSurface(listings).commands;
}
