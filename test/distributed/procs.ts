/**
 * Processes of the distributed tests: the built `lightsop` CLI spawned as workers and
 * coordinators, whose output is watched line by line, and waits on states (a log line, a file
 * reaching N lines), never on fixed sleeps. Every process a test starts is stopped by its id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { ensureBuilt, repoRoot } from '../helpers/cli';
import { startRedis, type RedisServer } from '../helpers/redis';
import { waitFor } from '../helpers/sync';

export const BIN = path.join(repoRoot, 'packages/cli/bin/lightsop.js');

export interface CliProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stderr (or stdout) text matching, or rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** The exit code (or 128 + signal number). */
  readonly exited: Promise<number>;
  signal(name: NodeJS.Signals): void;
}

const SIGNALS: Record<string, number> = { SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

const live = new Set<ChildProcess>();

/** Spawns the built CLI. */
export function spawnCli(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let out = '';
  let err = '';
  const waiters: { pattern: RegExp; resolve: (s: string) => void }[] = [];
  const check = () => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i]!;
      const m = w.pattern.exec(err) ?? w.pattern.exec(out);
      if (m) {
        waiters.splice(i, 1);
        w.resolve(m[0]);
      }
    }
  };
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    check();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    check();
  });
  const exited = new Promise<number>((resolve) => {
    child.on('close', (code, signal) => {
      live.delete(child);
      resolve(code ?? 128 + (SIGNALS[signal ?? ''] ?? 0));
    });
  });
  return {
    child,
    pid: child.pid!,
    stdout: () => out,
    stderr: () => err,
    exited,
    signal: (name) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(name);
    },
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const m = pattern.exec(err) ?? pattern.exec(out);
        if (m) return resolve(m[0]);
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern} in the output of lightsop ${args.join(' ')}:\n${err.slice(-2000)}`)), timeoutMs);
        waiters.push({
          pattern,
          resolve: (s) => {
            clearTimeout(timer);
            resolve(s);
          },
        });
        void exited.then(() => {
          setTimeout(() => {
            const idx = waiters.findIndex((w) => w.pattern === pattern);
            if (idx !== -1) {
              waiters.splice(idx, 1);
              clearTimeout(timer);
              reject(new Error(`lightsop ${args.join(' ')} exited before printing ${pattern}:\n${err.slice(-2000)}`));
            }
          }, 0);
        });
      });
    },
  };
}

/** Kills every CLI process the tests started and did not see exit (by its id). */
export async function killAll(): Promise<void> {
  const waits: Promise<void>[] = [];
  for (const child of live) {
    waits.push(new Promise((r) => child.once('close', () => r())));
    child.kill('SIGKILL');
  }
  await Promise.all(waits);
}

/** Starts a worker and waits for its `ready` line. */
export async function startWorkerProcess(redisUrl: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<CliProcess> {
  const worker = spawnCli(['worker', '--redis', redisUrl, ...args], options);
  await worker.waitFor(/ ready: id=/, 60_000);
  return worker;
}

/** Stops a worker with SIGTERM, expects a clean exit, and returns how many jobs it completed. */
export async function stopWorker(worker: CliProcess): Promise<number> {
  worker.signal('SIGTERM');
  expect(await worker.exited).toBe(0);
  return Number(/stopped: completed=(\d+)/.exec(worker.stderr())?.[1] ?? NaN);
}

/**
 * Registers the hooks of a describe block that runs workers and coordinators: before its tests the
 * CLI is built and a private redis-server started (with `options.password`, if given); after each
 * test every CLI process it started and did not see exit is killed; after them all, Redis is
 * stopped and the temporary folders (`tempDir`) are removed. Returns the server, to be used in the
 * tests (its fields are read from the started server).
 */
export function useRedisServer(options: { password?: string } = {}): RedisServer {
  let server: RedisServer | undefined;
  const started = (): RedisServer => {
    if (!server) throw new Error('useRedisServer: redis-server is started in beforeAll; read it in a test or a later hook');
    return server;
  };
  beforeAll(async () => {
    ensureBuilt();
    server = await startRedis(options);
  }, 120_000);
  afterEach(async () => {
    await killAll();
  });
  afterAll(async () => {
    await killAll();
    await server?.dispose();
    removeTempDirs();
  });
  return {
    get port() {
      return started().port;
    },
    get url() {
      return started().url;
    },
    get dir() {
      return started().dir;
    },
    stop: () => started().stop(),
    restart: () => started().restart(),
    dispose: () => started().dispose(),
  };
}

/** Polls a condition on some state (a file, Redis) until it holds, or fails after `timeoutMs` (the shared `waitFor`). */
export async function waitUntil(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  await waitFor(what, condition, { timeoutMs, every: 25 });
}

/** Complete lines of a file (0 when it does not exist). */
export function lineCount(file: string): number {
  if (!existsSync(file)) return 0;
  const text = readFileSync(file, 'utf8');
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Parsed JSON lines of a file. */
export function jsonLines(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
}

const tempDirs: string[] = [];

/** A temporary folder that `removeTempDirs` deletes (call it in afterAll). */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
