/**
 * `lightsop worker`: hosts a skills module and runs the jobs of one Redis queue until SIGTERM or
 * Ctrl-C (docs/scale-out.md). Its log (stderr) has a `ready` line, a `health` line every
 * `--health-interval`, and a line for each connection loss, cancel, stall and shutdown step.
 */
import path from 'node:path';
import type { CommandRegistry } from '@lightsop/runtime';
import { findConfig, readConfigFile, type Config } from '../config';
import { asCliError, loadDistributed } from '../distributed';
import { CliError } from '../errors';
import type { Io } from '../io';
import { closeMcpServers, mcpToolsOf } from '../mcp';
import { loadSkills } from '../skills';

export interface WorkerCommandOptions {
  readonly redis: string;
  readonly skills?: string;
  /** A lightsop.config.json to take `skills` and `mcpServers` from (default: the nearest one above the current folder). */
  readonly config?: string;
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
    throw new Error(`Unknown command ${payload.command}: this worker has no skills module or MCP server (lightsop worker --skills MODULE, or --config with mcpServers)`);
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
  const config = workerConfig(options.config, io.cwd);
  // --skills wins over the config's skills, as for every other command.
  const skillsPath = options.skills ? path.resolve(io.cwd, options.skills) : config?.skills;
  let base: CommandRegistry | null = null;
  if (skillsPath) {
    const loaded = await loadSkills(skillsPath, USAGE, io.cwd);
    if (!loaded.registry) throw new CliError(`${path.relative(io.cwd, skillsPath) || skillsPath}: a worker needs a skills module (.mjs or .js) that executes commands; a JSON description only lists them`, USAGE);
    base = loaded.registry;
  }
  // The config's MCP servers start here, once, and serve every job of this worker (docs/mcp.md).
  const tools = config ? await mcpToolsOf(config, USAGE) : null;
  const servers = tools?.connections.map((c) => c.server.name) ?? [];
  let registry = base ?? NO_SKILLS;
  if (tools && servers.length > 0) {
    const { withMcpTools } = await import('@lightsop/runtime/mcp');
    registry = withMcpTools(base, tools);
  }
  if (!base && servers.length === 0) {
    io.stderr('lightsop worker: warning: no skills module and no MCP server (--skills, --config or lightsop.config.json); only the built-in assign works\n');
  }
  if (servers.length > 0) io.stderr(`lightsop worker: MCP server(s) started: ${servers.join(', ')}\n`);

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
  if (servers.length > 0) {
    // Every job has ended or gone back to the queue: the servers are closed before the process
    // exits (stdio servers see their input end, then SIGTERM), bounded so a stuck one cannot hold it.
    const closing = closeMcpServers().then(() => true, () => true);
    const closed = await Promise.race([closing, new Promise<false>((r) => setTimeout(() => r(false), 10_000).unref())]);
    io.stderr(`lightsop worker: ${closed ? 'closed' : 'gave up closing'} MCP server(s): ${servers.join(', ')}\n`);
  }
  // A skill that ignored its abort may still hold the event loop; its job was returned to the
  // queue, so nothing is lost by leaving now.
  setTimeout(() => host.exit(0), 1000).unref();
  return 0;
}

/** `--config FILE` (read with the one config reader; a missing or invalid file is exit 3), else the nearest config above the current folder. */
function workerConfig(file: string | undefined, cwd: string): Config | null {
  if (file === undefined) return findConfig(cwd);
  return readConfigFile(path.resolve(cwd, file));
}
