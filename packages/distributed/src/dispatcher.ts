/**
 * The coordinator's side of a queue, shared by `run --redis` and `batch`: it submits jobs with
 * known ids, hears how they finished by reading BullMQ's event stream itself (one blocking XREAD
 * for many ends; `batch` lets ends gather for a few milliseconds between reads), and never trusts
 * that stream alone. After a lost connection, or when no event came for a while, it asks Redis for the state
 * of every job it still waits for: a finished job is taken from Redis, a job Redis no longer has
 * (a restart without persistence) is submitted again under the same id. When Redis stays away for
 * longer than the reconnect timeout, everything waiting fails with one clear error.
 */
import { Queue, type JobsOptions } from 'bullmq';
import { Redis } from 'ioredis';
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
  /**
   * After a read that found events, wait this long before the next one so that ends arrive in
   * batches (fewer round trips and wake-ups per job; default 0: every end at once, for `run`).
   */
  readonly eventBatchMs?: number;
}

/** Events read from the stream at most per XREAD. */
const EVENTS_PER_READ = 1000;
/** How long one blocking XREAD waits before it is issued again (bounds how long close() waits). */
const EVENTS_BLOCK_MS = 1000;

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
  /** The connection that blocks on the event stream (XREAD), nothing else. */
  private readonly reader: Redis;
  private readonly eventsKey: string;
  private reading: Promise<void> | null = null;
  private readonly watch: ConnectionWatch;
  private readonly tracked = new Map<string, JobSpec>();
  private lastEventAt = Date.now();
  private checking: Promise<void> | null = null;
  private recheck = false;
  private readonly quietTimer: ReturnType<typeof setInterval>;
  private failureError: RedisUnavailableError | null = null;
  private closed = false;

  constructor(private readonly options: DispatcherOptions, private readonly control: Redis, private lastEventId: string) {
    const connection = { ...options.redis.options, connectionName: 'lightsop-coordinator-bull' };
    this.queue = new Queue(options.queue, {
      connection,
      prefix: BULL_PREFIX,
      streams: { events: { maxLen: options.eventsMaxLen ?? 10_000 } },
    });
    this.queue.on('error', () => {});
    this.eventsKey = `${BULL_PREFIX}:${options.queue}:events`;
    this.reader = new Redis({ ...options.redis.options, connectionName: 'lightsop-coordinator-events' });
    this.reader.on('error', () => {});
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

  /** Waits until the queue and the event reader are connected, and starts reading the events. */
  async ready(): Promise<void> {
    await this.bounded(Promise.all([this.queue.waitUntilReady(), this.reader.ping()]), 'connect the queue');
    this.reading ??= this.readEvents();
  }

  /**
   * Reads the queue's event stream from where the dispatcher opened it: every job that completed
   * or failed there is an end (for the jobs this dispatcher tracks). A read that fails (Redis
   * restarting) is retried: ioredis reconnects, and the watch's check covers what was missed.
   */
  private async readEvents(): Promise<void> {
    const batchMs = this.options.eventBatchMs ?? 0;
    while (!this.closed) {
      let reply: [string, [string, string[]][]][] | null;
      try {
        reply = (await this.reader.xread('COUNT', EVENTS_PER_READ, 'BLOCK', EVENTS_BLOCK_MS, 'STREAMS', this.eventsKey, this.lastEventId)) as [string, [string, string[]][]][] | null;
      } catch {
        if (this.closed) return;
        await pause(200);
        continue;
      }
      const entries = reply?.[0]?.[1];
      if (!entries || entries.length === 0) continue;
      for (const [id, fields] of entries) {
        this.lastEventId = id;
        this.event(fields);
      }
      if (batchMs > 0 && entries.length < EVENTS_PER_READ && this.tracked.size > 0) await pause(batchMs);
    }
  }

  /** One entry of BullMQ's event stream: `event`, `jobId` and the event's fields, as a flat list. */
  private event(fields: readonly string[]): void {
    let event = '';
    let jobId = '';
    let returnvalue: string | undefined;
    let failedReason: string | undefined;
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const key = fields[i];
      const value = fields[i + 1]!;
      if (key === 'event') event = value;
      else if (key === 'jobId') jobId = value;
      else if (key === 'returnvalue') returnvalue = value;
      else if (key === 'failedReason') failedReason = value;
    }
    if (!this.tracked.has(jobId)) return;
    if (event === 'completed') {
      let value: unknown = null;
      try {
        value = returnvalue === undefined ? null : JSON.parse(returnvalue);
      } catch {
        // Not JSON: the reader of the value says it does not understand it.
        value = returnvalue;
      }
      this.ended(jobId, { state: 'completed', value });
    } else if (event === 'failed') {
      this.ended(jobId, { state: 'failed', reason: failedReason ?? 'unknown reason' });
    } else if (event === 'duplicated') {
      // A job id BullMQ already had (a rerun, a resubmission) is not added again: it may have
      // ended long ago, and then no event will come for it. Look it up.
      this.check();
    }
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
    // The reader may be blocked in XREAD: disconnecting ends its read, and the loop sees `closed`.
    this.reader.disconnect();
    const graceful = Promise.allSettled([this.queue.close(), this.reading ?? Promise.resolve()]);
    await Promise.race([graceful, new Promise((r) => setTimeout(r, this.failureError || this.watch.down ? 200 : 3000).unref())]);
    void this.queue.disconnect().catch(() => {});
    this.control.disconnect();
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
