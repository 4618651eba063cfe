/**
 * Redis connections for the distributed runner: parsing and redacting `--redis` URLs, the
 * connection options BullMQ and our own clients share, and a watch that turns a lost connection
 * into either a reconnection or, after a bound, a clear error. Nothing here hangs forever: every
 * wait has a deadline.
 */
import { redactSecrets } from '@lightsop/core';
import { Redis, type RedisOptions } from 'ioredis';

/** A problem the user must fix (a bad URL, a bad option): one line, no stack. */
export class DistributedUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DistributedUsageError';
  }
}

/** Redis cannot be reached, or was lost for longer than the reconnect timeout. */
export class RedisUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedisUnavailableError';
  }
}

export interface RedisTarget {
  /** The URL as shown to people: the password is replaced by `***`. */
  readonly display: string;
  /** ioredis options for a plain (non-blocking) client; BullMQ copies them for its own. */
  readonly options: RedisOptions;
}

/**
 * Parses `redis://[user:password@]host[:port][/db]` (or `rediss://` for TLS). A password can also
 * come from LIGHTSOP_REDIS_PASSWORD, which keeps it out of `ps` and shell history.
 */
export function parseRedisUrl(url: string, env: NodeJS.ProcessEnv = process.env): RedisTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DistributedUsageError(`--redis: expected a URL such as redis://127.0.0.1:6379, got ${JSON.stringify(redactText(url))}`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new DistributedUsageError(`--redis: expected a redis:// or rediss:// URL, got ${JSON.stringify(redactUrl(parsed))}`);
  }
  if (!parsed.hostname) throw new DistributedUsageError('--redis: the URL names no host');
  const port = parsed.port ? Number(parsed.port) : 6379;
  const dbText = parsed.pathname.replace(/^\//, '');
  if (dbText !== '' && !/^\d+$/.test(dbText)) throw new DistributedUsageError(`--redis: the database must be a number (redis://host:port/0), got ${JSON.stringify(dbText)}`);
  const password = env.LIGHTSOP_REDIS_PASSWORD || (parsed.password ? decodeURIComponent(parsed.password) : undefined);
  const username = parsed.username ? decodeURIComponent(parsed.username) : undefined;
  const options: RedisOptions = {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
    db: dbText === '' ? 0 : Number(dbText),
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: { servername: parsed.hostname } } : {}),
    // Reconnect quickly and forever at the socket level; the callers decide how long an outage
    // may last (ConnectionWatch), so a restart of Redis is survived and a dead one is reported.
    retryStrategy: (times: number) => Math.min(100 * times, 1000),
    // BullMQ needs this for its blocking connections; our own calls are bounded by the watch.
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    connectTimeout: 5000,
  };
  return { display: redactUrl(parsed), options };
}

function redactUrl(parsed: URL): string {
  return redactText(parsed.href.replace(/\/$/, ''));
}

/** Removes credentials from anything that looks like a URL with them (core's one redaction). */
export function redactText(text: string): string {
  return redactSecrets(text);
}

/** The message of an ioredis error, without credentials. */
export function redisErrorText(error: unknown): string {
  const err = error as NodeJS.ErrnoException | undefined;
  const text = err?.code && !String(err.message).includes(err.code) ? `${err.code}: ${err.message}` : String(err?.message ?? error);
  return redactText(text);
}

/**
 * Opens a plain client and waits until it is ready, or fails with a RedisUnavailableError after
 * the first connection error (a coordinator should say at once that Redis is not there) or after
 * `timeoutMs`.
 */
export async function connectOnce(target: RedisTarget, timeoutMs: number, name: string): Promise<Redis> {
  const client = new Redis({ ...target.options, lazyConnect: true, connectionName: name });
  // ioredis rejects connect() with a generic "Connection is closed."; the cause comes as an event.
  let cause: unknown = null;
  client.on('error', (error) => {
    cause ??= error;
  });
  try {
    await withDeadline(client.connect(), timeoutMs, () => new RedisUnavailableError(`cannot reach Redis at ${target.display}: no answer within ${Math.round(timeoutMs / 1000)} s`));
    await withDeadline(client.ping(), timeoutMs, () => new RedisUnavailableError(`Redis at ${target.display} does not answer PING`));
  } catch (error) {
    client.disconnect();
    if (error instanceof RedisUnavailableError) throw error;
    throw new RedisUnavailableError(`cannot reach Redis at ${target.display}: ${redisErrorText(cause ?? error)}`);
  }
  return client;
}

/** Resolves with the promise, or rejects with `onTimeout()` after `ms`. */
export function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

export interface ConnectionWatchEvents {
  /** The connection dropped; ioredis is reconnecting. */
  onLost?(error: string): void;
  /** The connection is back: callers check what they were waiting for. */
  onRestored?(downMs: number): void;
  /** Down for longer than the timeout: callers fail what they wait for. */
  onExpired?(error: RedisUnavailableError): void;
}

/**
 * Follows one client's connection: a drop starts a clock, a `ready` stops it, and when the clock
 * passes `timeoutMs` the watch expires once with a RedisUnavailableError naming the last error.
 * Passing `timeoutMs: Infinity` (workers) only reports losses and restorations.
 */
export class ConnectionWatch {
  private downSince: number | null = null;
  private lastError = 'connection closed';
  private timer: ReturnType<typeof setInterval> | null = null;
  private expiredError: RedisUnavailableError | null = null;
  private stopped = false;

  constructor(private readonly client: Redis, private readonly target: RedisTarget, private readonly timeoutMs: number, private readonly events: ConnectionWatchEvents) {
    client.on('error', (error) => {
      this.lastError = redisErrorText(error);
    });
    client.on('close', () => this.lost());
    client.on('end', () => this.lost());
    client.on('ready', () => this.restored());
    if (Number.isFinite(timeoutMs)) {
      this.timer = setInterval(() => this.check(), Math.max(50, Math.min(500, timeoutMs / 4)));
      this.timer.unref();
    }
  }

  /** True while the connection is down. */
  get down(): boolean {
    return this.downSince !== null;
  }

  /** The error the watch expired with, if it did. */
  get expired(): RedisUnavailableError | null {
    return this.expiredError;
  }

  /** Stops watching: a close that follows (ours) is not reported. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private lost(): void {
    if (this.stopped || this.downSince !== null || this.expiredError) return;
    this.downSince = Date.now();
    this.events.onLost?.(this.lastError);
  }

  private restored(): void {
    if (this.stopped || this.downSince === null || this.expiredError) return;
    const downMs = Date.now() - this.downSince;
    this.downSince = null;
    this.events.onRestored?.(downMs);
  }

  private check(): void {
    if (this.downSince === null || this.expiredError) return;
    if (Date.now() - this.downSince < this.timeoutMs) return;
    this.expiredError = new RedisUnavailableError(
      `lost the connection to Redis at ${this.target.display} and could not reconnect within ${formatMs(this.timeoutMs)} (${this.lastError})`,
    );
    this.stop();
    this.events.onExpired?.(this.expiredError);
  }
}

/** `30 s`, `500 ms`, `2 min`: durations in messages. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms / 6000) / 10} min`;
}
