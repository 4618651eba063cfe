/**
 * `lightsop worker`: hosts a skills module and runs the jobs of one Redis queue until SIGTERM or
 * Ctrl-C (docs/scale-out.md). Its log (stderr) has a `ready` line, a `health` line every
 * `--health-interval`, and a line for each connection loss, cancel, stall and shutdown step.
 */
import path from 'node:path';
import type { CommandRegistry } from '@lightsop/runtime';
import { asCliError, loadDistributed } from '../distributed';
import { CliError } from '../errors';
import type { Io } from '../io';
import { loadSkills, skillsPathFor } from '../skills';

export interface WorkerCommandOptions {
  readonly redis: string;
  readonly skills?: string;
  readonly concurrency?: number;
  readonly queue?: string;
  readonly stallTimeout?: number;
  readonly shutdownTimeout?: number;
  readonly healthInterval?: number;
}

/** The process around a worker: its stop signals and its exit. */
export interface WorkerHost {
  /** Calls `handler` with the signal's name on SIGTERM and SIGINT. */
  onStop(handler: (signal: string) => void): void;
  exit(code: number): void;
}

const USAGE = 3;

const NO_SKILLS: CommandRegistry = {
  listCommands: () => [],
  executeCommand(payload) {
    throw new Error(`Unknown command ${payload.command}: this worker has no skills module (lightsop worker --skills MODULE)`);
  },
};

export async function workerCommand(options: WorkerCommandOptions, io: Io, host: WorkerHost): Promise<number> {
  const d = await loadDistributed();
  let redis;
  let queue: string;
  try {
    redis = d.parseRedisUrl(options.redis);
    queue = d.checkQueueName(options.queue ?? d.DEFAULT_QUEUE);
  } catch (error) {
    throw asCliError(error);
  }
  const skillsPath = skillsPathFor(options.skills, io.cwd, io.cwd);
  let registry = NO_SKILLS;
  if (skillsPath) {
    const loaded = await loadSkills(skillsPath, USAGE, io.cwd);
    if (!loaded.registry) throw new CliError(`${path.relative(io.cwd, skillsPath) || skillsPath}: a worker needs a skills module (.mjs or .js) that executes commands; a JSON description only lists them`, USAGE);
    registry = loaded.registry;
  } else {
    io.stderr('lightsop worker: warning: no skills module (--skills or lightsop.config.json); only the built-in assign works\n');
  }

  let handle: Awaited<ReturnType<typeof d.startWorker>> | null = null;
  let stopped: (() => void) | null = null;
  const done = new Promise<void>((resolve) => (stopped = resolve));
  host.onStop((signal) => {
    if (!handle) {
      // Still waiting for Redis: nothing is running, nothing to return.
      io.stderr(`lightsop worker: ${signal} before the worker was ready; exiting\n`);
      host.exit(0);
      return;
    }
    void handle.shutdown(signal).then(() => stopped?.());
  });
  handle = await d.startWorker({
    redis,
    queue,
    concurrency: options.concurrency ?? 1,
    registry,
    stallTimeoutMs: options.stallTimeout ?? 30_000,
    shutdownTimeoutMs: options.shutdownTimeout ?? 30_000,
    healthIntervalMs: options.healthInterval ?? 30_000,
    log: (line) => io.stderr(`${line}\n`),
  });
  await done;
  // A skill that ignored its abort may still hold the event loop; its job was returned to the
  // queue, so nothing is lost by leaving now.
  setTimeout(() => host.exit(0), 1000).unref();
  return 0;
}
