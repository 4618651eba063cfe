/**
 * `lightsop worker`: a BullMQ worker that hosts one skills registry and runs the jobs of one queue
 * (single commands for `lightsop run --redis`, whole plans for `lightsop batch`). It announces
 * itself in Redis with an expiring entry (so coordinators know the commands on offer), logs its
 * health to stderr, honours cancel requests, and shuts down gracefully: it takes no new job,
 * finishes the running ones within a grace period and returns the rest to the queue.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { CommandSurface } from '@lightsop/core';
import type { CommandRegistry } from '@lightsop/runtime';
import { executeCommandJob, executePlanJob, PlanJobError } from './execute';
import {
  BULL_PREFIX, COMMAND_JOB, PLAN_JOB, WORKER_HEARTBEAT_MS, WORKER_TTL_MS, cancelChannel, checkCommandJob, checkPlanJob,
  workerKey, workersKey, type WorkerInfo,
} from './protocol';
import { ConnectionWatch, formatMs, redisErrorText, type RedisTarget } from './redis';

export interface WorkerOptions {
  readonly redis: RedisTarget;
  readonly queue: string;
  /** Jobs run at once by this process. */
  readonly concurrency: number;
  readonly registry: CommandRegistry;
  /** How long a job may go without a lock renewal before another worker takes it over. */
  readonly stallTimeoutMs: number;
  /** How long SIGTERM waits for running jobs before returning them to the queue. */
  readonly shutdownTimeoutMs: number;
  /** Period of the `health` log line. */
  readonly healthIntervalMs: number;
  /** One log line (no newline); the CLI writes it to stderr. */
  readonly log: (line: string) => void;
}

export interface WorkerHandle {
  readonly id: string;
  /** Starts the graceful shutdown (a second call hurries it); resolves when the worker is closed. */
  shutdown(reason: string): Promise<void>;
}

interface Running {
  readonly job: Job;
  readonly token: string | undefined;
}

/** Starts a worker; resolves once it is connected and announced (it waits for Redis meanwhile). */
export async function startWorker(options: WorkerOptions): Promise<WorkerHandle> {
  const id = `${hostname().replace(/[^A-Za-z0-9.-]/g, '-').slice(0, 40)}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const log = (message: string) => options.log(`lightsop worker ${new Date().toISOString()} ${message}`);
  // Full descriptions (parameters, argument counts, side effects, sources): coordinators validate with them.
  const commands = CommandSurface.fromRegistry(options.registry).commands;
  const running = new Map<string, Running>();
  let completed = 0;
  let failed = 0;
  let returned = 0;
  const started = Date.now();

  // The control connection: heartbeats, and the measure of whether Redis is reachable.
  const control = new Redis({ ...options.redis.options, connectionName: `lightsop-worker-${id}` });
  let lastWaitLog = 0;
  control.on('error', (error) => {
    if (watch.down || control.status !== 'ready') {
      const now = Date.now();
      if (now - lastWaitLog > 10_000) {
        lastWaitLog = now;
        log(`waiting for Redis at ${options.redis.display} (${redisErrorText(error)})`);
      }
    }
  });
  const watch = new ConnectionWatch(control, options.redis, Infinity, {
    onLost: (error) => log(`redis connection lost (${error}); reconnecting`),
    onRestored: (ms) => {
      log(`redis connection restored after ${formatMs(ms)}`);
      void heartbeat();
    },
  });

  const processor = async (job: Job, token?: string, signal?: AbortSignal): Promise<unknown> => {
    const key = job.id ?? '';
    running.set(key, { job, token });
    try {
      const jobKey = { id: key, attempt: Math.max(1, job.attemptsStarted) };
      const jobSignal = signal ?? new AbortController().signal;
      if (job.name === COMMAND_JOB) {
        const data = checkCommandJob(job.data);
        if (typeof data === 'string') throw new UnrecoverableError(`malformed command job: ${data}`);
        return await executeCommandJob(options.registry, data, jobKey, jobSignal);
      }
      if (job.name === PLAN_JOB) {
        const data = checkPlanJob(job.data);
        if (typeof data === 'string') throw new UnrecoverableError(`malformed plan job: ${data}`);
        try {
          return await executePlanJob(options.registry, data, jobKey, jobSignal);
        } catch (error) {
          if (error instanceof PlanJobError) throw new UnrecoverableError(error.message);
          throw error;
        }
      }
      throw new UnrecoverableError(`unknown job kind ${JSON.stringify(job.name)}`);
    } finally {
      running.delete(key);
    }
  };

  const worker = new Worker(options.queue, processor, {
    connection: { ...options.redis.options, connectionName: `lightsop-worker-${id}-bull` },
    prefix: BULL_PREFIX,
    concurrency: options.concurrency,
    lockDuration: options.stallTimeoutMs,
    stalledInterval: options.stallTimeoutMs,
    // A job may lose its worker twice (killed, a machine lost); a third stall fails it instead
    // of letting it circulate.
    maxStalledCount: 2,
    autorun: false,
    name: id,
  });
  let lastErrorLog = '';
  let lastErrorAt = 0;
  worker.on('error', (error) => {
    // Connection errors are reported once by the watch; other errors at most every 10 s each.
    if (watch.down) return;
    const text = redisErrorText(error);
    const now = Date.now();
    if (text === lastErrorLog && now - lastErrorAt < 10_000) return;
    lastErrorLog = text;
    lastErrorAt = now;
    log(`error: ${text}`);
  });
  worker.on('completed', () => void completed++);
  worker.on('failed', (job, error) => {
    failed++;
    if (job && error instanceof UnrecoverableError) log(`job ${job.id} failed: ${error.message}`);
  });
  worker.on('stalled', (jobId) => log(`job ${jobId} stalled (its worker stopped renewing the lock) and goes back to the queue`));

  // Coordinators publish the ids of jobs to abort; the job's skill sees its signal abort.
  const subscriber = control.duplicate({ connectionName: `lightsop-worker-${id}-cancel` });
  subscriber.on('error', () => {});
  subscriber.on('message', (_channel: string, jobId: string) => {
    if (worker.cancelJob(jobId, 'canceled by the coordinator')) log(`job ${jobId} canceled by its coordinator`);
  });

  const info = (): WorkerInfo => ({
    id, host: hostname(), pid: process.pid, concurrency: options.concurrency, commands, started, active: running.size, completed,
  });
  const heartbeat = async () => {
    try {
      await control.multi()
        .set(workerKey(options.queue, id), JSON.stringify(info()), 'PX', WORKER_TTL_MS)
        .sadd(workersKey(options.queue), id)
        .exec();
    } catch {
      // Redis is down: the watch says so, and the next beat after reconnection repairs the entry.
    }
  };

  await subscriber.subscribe(cancelChannel(options.queue));
  await worker.waitUntilReady();
  await heartbeat();
  const beat = setInterval(() => void heartbeat(), WORKER_HEARTBEAT_MS);
  const health = setInterval(() => {
    const rss = Math.round(process.memoryUsage().rss / 1048576);
    log(`health: active=${running.size} completed=${completed} failed=${failed} redis=${watch.down ? 'down' : 'ok'} rss=${rss}MB uptime=${Math.round((Date.now() - started) / 1000)}s`);
  }, options.healthIntervalMs);
  void worker.run().catch((error) => log(`error: ${redisErrorText(error)}`));
  log(`ready: id=${id} queue=${options.queue} concurrency=${options.concurrency} commands=${commands.length} stall-timeout=${formatMs(options.stallTimeoutMs)} redis=${options.redis.display}`);

  let stopping: Promise<void> | null = null;
  let hurry: (() => void) | null = null;
  const shutdown = (reason: string): Promise<void> => {
    if (stopping) {
      hurry?.();
      return stopping;
    }
    log(`shutting down (${reason}): finishing ${running.size} running job(s) within ${formatMs(options.shutdownTimeoutMs)}, taking no new ones`);
    stopping = (async () => {
      clearInterval(health);
      const hurried = new Promise<void>((resolve) => (hurry = resolve));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, options.shutdownTimeoutMs)));
      const closing = worker.close();
      const finished = await Promise.race([closing.then(() => true, () => true), grace.then(() => false), hurried.then(() => false)]);
      clearTimeout(timer);
      if (!finished && running.size > 0) {
        // Hand the unfinished jobs back first, then abort their skills: a skill that returns on
        // the abort must not complete a job that is no longer ours (its lock is gone, so BullMQ
        // refuses that). Another worker runs them again, with a higher attempt.
        const unfinished = [...running.values()];
        log(`returning ${unfinished.length} unfinished job(s) to the queue`);
        for (const r of unfinished) {
          try {
            if (r.token) await r.job.moveToWait(r.token);
            returned++;
          } catch (error) {
            log(`job ${r.job.id} could not be returned (${redisErrorText(error)}); it goes back when its lock expires`);
          }
        }
        worker.cancelAllJobs('the worker is shutting down');
        // The aborted skills may still take a moment; the jobs are no longer ours either way.
        await Promise.race([closing.catch(() => {}), new Promise((r) => setTimeout(r, 2000))]);
      }
      clearInterval(beat);
      try {
        await control.multi().srem(workersKey(options.queue), id).del(workerKey(options.queue, id)).exec();
      } catch {
        // The entry expires by itself.
      }
      watch.stop();
      subscriber.disconnect();
      control.disconnect();
      log(`stopped: completed=${completed} failed=${failed} returned=${returned}`);
    })();
    return stopping;
  };

  return { id, shutdown };
}
