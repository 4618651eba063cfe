/**
 * A private redis-server for a test: 127.0.0.1, a free port, its own data directory, no
 * persistence; ready when it answers PING (never after a sleep). When redis-server is missing, a
 * root user with apt-get gets it installed once (as .ci/run does); anyone else gets an error that
 * says how to install it. The distributed tests never skip.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** Stops it (SIGTERM) and waits for the exit. */
  stop(): Promise<void>;
  /** Stops it and starts it again on the same port: without persistence, every key is gone. */
  restart(): Promise<void>;
  /** Removes the data directory (after stop). */
  dispose(): Promise<void>;
}

function findRedisServer(): string | null {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/bin', '/usr/sbin', '/usr/local/bin'];
  for (const dir of dirs) {
    const file = path.join(dir, 'redis-server');
    try {
      if (dir && statSync(file).isFile()) return file;
    } catch {
      // Not in this folder.
    }
  }
  return null;
}

/** Installs redis-server with apt-get when running as root; one installer at a time across test files. */
function installRedisServer(): void {
  const lock = path.join(tmpdir(), 'lightsop-redis-install.lock');
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (findRedisServer()) return;
      if (Date.now() > deadline) throw new Error('timed out waiting for another test file to install redis-server');
      execFileSync('sleep', ['1']);
    }
  }
  try {
    if (findRedisServer()) return;
    process.stderr.write('redis-server is missing; installing it with apt-get (the distributed tests need it)\n');
    execFileSync('apt-get', ['update'], { stdio: 'ignore', timeout: 240_000 });
    execFileSync('apt-get', ['install', '-y', 'redis-server'], { stdio: 'ignore', timeout: 240_000, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The redis-server binary; installs it when it can, else throws an error that says how. */
export function redisServerBinary(): string {
  let found = findRedisServer();
  if (found) return found;
  const canInstall = process.getuid?.() === 0 && existsSync('/usr/bin/apt-get');
  if (canInstall) {
    installRedisServer();
    found = findRedisServer();
    if (found) return found;
  }
  throw new Error(
    'redis-server is not installed, and the distributed tests (test/distributed) need a real one. ' +
      'Install it: `sudo apt-get install -y redis-server` (Debian/Ubuntu) or `brew install redis` (macOS); ' +
      'no Redis service needs to run, the tests start their own.',
  );
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

/** Sends PING and resolves true on +PONG (false on anything else, or no connection). */
export function ping(port: number, password?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let answer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write(password ? `AUTH ${password}\r\nPING\r\n` : 'PING\r\n'));
    socket.on('data', (d) => {
      answer += d.toString('utf8');
      if (answer.includes('+PONG')) done(true);
      else if (answer.includes('-')) done(false);
    });
  });
}

interface StartOptions {
  readonly port?: number;
  readonly password?: string;
}

async function launch(binary: string, dir: string, port: number, password: string | undefined): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--logfile', ''];
  if (password) args.push('--requirepass', password);
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (d) => (log = (log + d).slice(-4000)));
  child.stderr!.on('data', (d) => (log = (log + d).slice(-4000)));
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + 15_000;
  while (!(await ping(port, password))) {
    if (exited) throw new Error(`redis-server exited on port ${port}: ${log.trim().split('\n').slice(-3).join(' | ')}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not answer PING on port ${port} within 15 s`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return child;
}

function waitExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts a private redis-server (a few tries when another process takes the free port first). */
export async function startRedis(options: StartOptions = {}): Promise<RedisServer> {
  const binary = redisServerBinary();
  const dir = mkdtempSync(path.join(tmpdir(), 'lightsop-redis-'));
  let port = options.port ?? 0;
  let child: ChildProcess | null = null;
  let lastError: unknown = null;
  for (let attempt = 0; attempt < 5 && !child; attempt++) {
    const p = port || (await freePort());
    try {
      child = await launch(binary, dir, p, options.password);
      port = p;
    } catch (error) {
      lastError = error;
      if (options.port) break;
    }
  }
  if (!child) throw lastError;
  let current: ChildProcess = child;
  const auth = options.password ? `:${options.password}@` : '';
  const server: RedisServer = {
    port,
    url: `redis://${auth}127.0.0.1:${port}`,
    dir,
    async stop() {
      current.kill('SIGTERM');
      await waitExit(current);
    },
    async restart() {
      await server.stop();
      current = await launch(binary, dir, port, options.password);
    },
    async dispose() {
      current.kill('SIGKILL');
      await waitExit(current);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}
