/**
 * The coordinator's side of a queue, shared by `run --redis` and `batch`: it submits jobs with
 * known ids, hears how they finished through BullMQ's QueueEvents, and never trusts that stream
 * alone. After a lost connection, or when no event came for a while, it asks Redis for the state
 * of every job it still waits for: a finished job is taken from Redis, a job Redis no longer has
 * (a restart without persistence) is submitted again under the same id. When Redis stays away for
 * longer than the reconnect timeout, everything waiting fails with one clear error.
 */
import { Queue, QueueEvents, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { BULL_PREFIX, workerKey, workersKey, type WorkerInfo } from './protocol';
import { ConnectionWatch, RedisUnavailableError, connectOnce, formatMs, redisErrorText, withDeadline, type RedisTarget } from './redis';

/** How a job ended, as the coordinator learns it. */
export type JobEnd = { readonly state: 'completed'; readonly value: unknown } | { readonly state: 'failed'; readonly reason: string };

export interface JobSpec {
  readonly id: string;
  readonly name: string;
  readonly data: unknown;
  readonly opts: JobsOptions;
}

export interface DispatcherOptions {
  readonly redis: RedisTarget;
  readonly queue: string;
  /** How long Redis may be unreachable before everything waiting fails. */
  readonly reconnectTimeoutMs: number;
  /** Called for each tracked job that ended (once per id). */
  readonly onEnd: (id: string, end: JobEnd) => void;
  /** Called once when Redis stayed away too long. */
  readonly onFailure: (error: RedisUnavailableError) => void;
  /** Informational lines (reconnections, resubmissions); the CLI prints them on stderr. */
  readonly log: (line: string) => void;
  /** Kept events (the stream's length); at least a few times the jobs in flight. */
  readonly eventsMaxLen?: number;
  /** Check the tracked jobs when no event came for this long (default 5 s). */
  readonly quietCheckMs?: number;
}

/** Opens a dispatcher; fails at once with a RedisUnavailableError when Redis is not there. */
export async function openDispatcher(options: DispatcherOptions): Promise<Dispatcher> {
  const control = await connectOnce(options.redis, Math.min(options.reconnectTimeoutMs, 10_000), 'lightsop-coordinator');
  // Read the end of the event stream before listening, so no event after this point is missed.
  const eventsKey = `${BULL_PREFIX}:${options.queue}:events`;
  let lastEventId = '0-0';
  try {
    const last = (await control.xrevrange(eventsKey, '+', '-', 'COUNT', 1)) as [string, string[]][];
    if (last.length > 0) lastEventId = last[0]![0];
  } catch (error) {
    control.disconnect();
    throw new RedisUnavailableError(`cannot read the queue's events at ${options.redis.display}: ${redisErrorText(error)}`);
  }
  return new Dispatcher(options, control, lastEventId);
}

export class Dispatcher {
  readonly queue: Queue;
  private readonly events: QueueEvents;
  private readonly watch: ConnectionWatch;
  private readonly tracked = new Map<string, JobSpec>();
  private lastEventAt = Date.now();
  private checking: Promise<void> | null = null;
  private recheck = false;
  private readonly quietTimer: ReturnType<typeof setInterval>;
  private failureError: RedisUnavailableError | null = null;
  private closed = false;

  constructor(private readonly options: DispatcherOptions, private readonly control: Redis, lastEventId: string) {
    const connection = { ...options.redis.options, connectionName: 'lightsop-coordinator-bull' };
    this.queue = new Queue(options.queue, {
      connection,
      prefix: BULL_PREFIX,
      streams: { events: { maxLen: options.eventsMaxLen ?? 10_000 } },
    });
    this.queue.on('error', () => {});
    this.events = new QueueEvents(options.queue, { connection: { ...connection, connectionName: 'lightsop-coordinator-events' }, prefix: BULL_PREFIX, lastEventId });
    this.events.on('error', () => {});
    this.events.on('completed', ({ jobId, returnvalue }) => this.ended(jobId, { state: 'completed', value: returnvalue }));
    this.events.on('failed', ({ jobId, failedReason }) => this.ended(jobId, { state: 'failed', reason: String(failedReason ?? 'unknown reason') }));
    // A job id BullMQ already had (a rerun, a resubmission) is not added again: it may have ended
    // long ago, and then no event will come for it. Look it up.
    this.events.on('duplicated', ({ jobId }) => {
      if (this.tracked.has(jobId)) this.check();
    });
    this.watch = new ConnectionWatch(control, options.redis, options.reconnectTimeoutMs, {
      onLost: (error) => options.log(`lost the connection to Redis (${error}); reconnecting for up to ${formatMs(options.reconnectTimeoutMs)}`),
      onRestored: (ms) => {
        options.log(`reconnected to Redis after ${formatMs(ms)}; checking ${this.tracked.size} job(s) in flight`);
        this.check();
      },
      onExpired: (error) => this.fail(error),
    });
    const quiet = options.quietCheckMs ?? 5000;
    this.quietTimer = setInterval(() => {
      if (this.tracked.size > 0 && !this.watch.down && Date.now() - this.lastEventAt >= quiet) this.check();
    }, Math.max(100, quiet / 2));
    this.quietTimer.unref();
  }

  /** Waits until the queue and its event listener are connected. */
  async ready(): Promise<void> {
    await this.bounded(Promise.all([this.queue.waitUntilReady(), this.events.waitUntilReady()]), 'connect the queue');
  }

  /** The error Redis failed with, once it stayed away too long. */
  get failure(): RedisUnavailableError | null {
    return this.failureError;
  }

  /** Jobs submitted and not yet ended. */
  get inFlight(): number {
    return this.tracked.size;
  }

  /** The workers that announced themselves on this queue (their entries expire without them). */
  async workers(): Promise<WorkerInfo[]> {
    const ids = await this.bounded(this.control.smembers(workersKey(this.options.queue)), 'list the workers');
    if (ids.length === 0) return [];
    const values = await this.bounded(this.control.mget(ids.map((id) => workerKey(this.options.queue, id))), 'list the workers');
    const out: WorkerInfo[] = [];
    const gone: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      const text = values[i];
      if (!text) {
        gone.push(ids[i]!);
        continue;
      }
      try {
        const info = JSON.parse(text) as WorkerInfo;
        if (info && Array.isArray(info.commands)) out.push(info);
      } catch {
        // An entry we cannot read is ignored, as if that worker were gone.
      }
    }
    if (gone.length > 0) await this.control.srem(workersKey(this.options.queue), gone).catch(() => {});
    return out;
  }

  /** Submits jobs and tracks them until they end. An id BullMQ already holds is not run twice. */
  async submit(specs: readonly JobSpec[]): Promise<void> {
    if (this.failureError) throw this.failureError;
    for (const s of specs) this.tracked.set(s.id, s);
    await this.bounded(this.queue.addBulk(specs.map((s) => ({ name: s.name, data: s.data, opts: { ...s.opts, jobId: s.id } }))), 'submit jobs');
  }

  /** Stops tracking a job (its end, if it comes, is ignored). */
  forget(id: string): void {
    this.tracked.delete(id);
  }

  /** Removes a job that no worker has taken yet; false when it is running (or gone). */
  async removeIfWaiting(id: string): Promise<boolean> {
    try {
      return (await this.bounded(this.queue.remove(id), 'remove a job')) === 1;
    } catch {
      return false;
    }
  }

  /** Asks the workers to abort a running job (its skill sees the payload's signal abort). */
  async cancel(id: string, channel: string): Promise<void> {
    await this.bounded(this.control.publish(channel, id), 'cancel a job').catch(() => {});
  }

  /**
   * Looks up every tracked job in Redis: ended jobs are reported, jobs Redis lost are submitted
   * again. Runs one at a time; a request during a check runs one more afterwards.
   */
  check(): void {
    if (this.closed || this.failureError) return;
    if (this.checking) {
      this.recheck = true;
      return;
    }
    this.lastEventAt = Date.now();
    this.checking = this.checkNow()
      .catch((error) => {
        if (!(error instanceof RedisUnavailableError)) this.options.log(`could not check the jobs in flight: ${redisErrorText(error)}`);
      })
      .finally(() => {
        this.checking = null;
        if (this.recheck) {
          this.recheck = false;
          this.check();
        }
      });
  }

  private async checkNow(): Promise<void> {
    const ids = [...this.tracked.keys()];
    const lost: JobSpec[] = [];
    const CHUNK = 500;
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      const states = await this.bounded(Promise.all(chunk.map((id) => this.queue.getJobState(id))), 'check the jobs');
      for (let k = 0; k < chunk.length; k++) {
        const id = chunk[k]!;
        const state = states[k];
        if (!this.tracked.has(id)) continue;
        if (state === 'completed' || state === 'failed') {
          const job = await this.bounded(this.queue.getJob(id), 'read a finished job');
          if (!job) {
            lost.push(this.tracked.get(id)!);
          } else if (state === 'completed') {
            this.ended(id, { state: 'completed', value: job.returnvalue });
          } else {
            this.ended(id, { state: 'failed', reason: job.failedReason || 'unknown reason' });
          }
        } else if (state === 'unknown') {
          lost.push(this.tracked.get(id)!);
        }
      }
    }
    if (lost.length > 0 && !this.closed) {
      this.options.log(`Redis no longer has ${lost.length} job(s) in flight (restarted without persistence?); submitting them again`);
      await this.submit(lost);
    }
  }

  private ended(id: string, end: JobEnd): void {
    this.lastEventAt = Date.now();
    if (!this.tracked.delete(id)) return;
    this.options.onEnd(id, end);
  }

  private fail(error: RedisUnavailableError): void {
    if (this.failureError) return;
    this.failureError = error;
    this.options.onFailure(error);
  }

  /** Bounds one Redis call by the reconnect timeout, so that nothing waits forever. */
  private bounded<T>(promise: Promise<T>, what: string): Promise<T> {
    if (this.failureError) {
      promise.catch(() => {});
      return Promise.reject(this.failureError);
    }
    return withDeadline(promise, this.options.reconnectTimeoutMs + 1000, () => {
      const error = new RedisUnavailableError(`Redis at ${this.options.redis.display} did not answer within ${formatMs(this.options.reconnectTimeoutMs)} (trying to ${what})`);
      this.fail(error);
      return error;
    });
  }

  /** Closes every connection; bounded, so that a dead Redis cannot hold the process. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.quietTimer);
    this.watch.stop();
    const graceful = Promise.allSettled([this.events.close(), this.queue.close()]);
    await Promise.race([graceful, new Promise((r) => setTimeout(r, this.failureError || this.watch.down ? 200 : 3000).unref())]);
    void this.events.disconnect().catch(() => {});
    void this.queue.disconnect().catch(() => {});
    this.control.disconnect();
  }
}
