/**
 * The CLI's door to @lightsop/distributed. That package (and BullMQ and ioredis with it) is only
 * ever imported dynamically, from `lightsop worker`, `lightsop batch` and `lightsop run --redis`,
 * so `lint`, `fmt`, `graph` and a local `run` never load it (the bundle keeps it in its own chunk).
 */
import type { CommandRegistry } from '@lightsop/runtime';
import { CliError } from './errors';
import type { Io } from './io';

export type DistributedModule = typeof import('@lightsop/distributed');

const USAGE = 3;

/** Loads the distributed package. */
export function loadDistributed(): Promise<DistributedModule> {
  return import('@lightsop/distributed');
}

/** The package's own errors (bad URL, Redis not there, no workers, a bad batch file) as one-line CLI errors. */
export function asCliError(error: unknown): unknown {
  const name = (error as Error | undefined)?.name;
  if (name === 'DistributedUsageError' || name === 'RedisUnavailableError' || name === 'NoWorkersError' || name === 'BatchFileError') {
    return new CliError((error as Error).message, USAGE);
  }
  return error;
}

export interface RemoteRun {
  readonly registry: CommandRegistry;
  /** Redis lost for good during the run, if it was. */
  failure(): Error | null;
  close(): Promise<void>;
}

/** The hook of `lightsop run --redis`: a registry whose commands run on the queue's workers. */
export async function openRemoteRun(options: { redis: string; queue?: string; skills?: string; reconnectTimeout?: number }, io: Io): Promise<RemoteRun> {
  if (options.skills) {
    throw new CliError('--skills loads skills into this process; with --redis the commands run on the workers, which load their own (lightsop worker --skills MODULE)', USAGE);
  }
  const d = await loadDistributed();
  try {
    const remote = await d.openRemoteRegistry({
      redis: d.parseRedisUrl(options.redis),
      queue: d.checkQueueName(options.queue ?? d.DEFAULT_QUEUE),
      reconnectTimeoutMs: options.reconnectTimeout ?? 30_000,
      cancelGraceMs: 5000,
      log: (line) => io.stderr(`lightsop: ${line}\n`),
    });
    return { registry: remote.registry, failure: () => remote.failure, close: () => remote.close() };
  } catch (error) {
    throw asCliError(error);
  }
}
