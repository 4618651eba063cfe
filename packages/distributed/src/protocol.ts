/**
 * What coordinators and workers exchange through Redis: the two kinds of jobs (one command of a
 * plan, or a whole plan over one input), their results, the keys of the worker registry and the
 * cancel channel. Every job's data is checked on arrival: Redis is shared, and a job is only
 * trusted to name one of the worker's own skills.
 */
import type { CommandSpec } from '@lightsop/core';
import type { CommandPayload } from '@lightsop/runtime';
import { DistributedUsageError } from './redis';

/** The default BullMQ queue name (`--queue`). */
export const DEFAULT_QUEUE = 'lightsop';

/** Job names. A worker takes both kinds from its queue. */
export const COMMAND_JOB = 'command';
export const PLAN_JOB = 'plan';

/** BullMQ's key prefix; kept at its default so that standard BullMQ tools see our queues. */
export const BULL_PREFIX = 'bull';

/**
 * One command of a plan that a coordinator runs (`lightsop run --redis`): the payload a command
 * receives (6.4) without what only exists in the coordinator's process (the signal) or is given
 * by the worker (the job key).
 */
export type CommandJobData = Omit<CommandPayload, 'signal' | 'job'>;

/**
 * What a worker answers for a command job: the value `executeCommand` gave (its return value, or
 * else the responder's last value; JSON), or the message of the exception it threw.
 */
export type CommandOutcome = { readonly type: 'value'; readonly value: unknown } | { readonly type: 'throw'; readonly message: string };

/** A whole plan run on one input (`lightsop batch`). */
export interface PlanJobData {
  readonly plan: string;
  /** The value of `$input`. */
  readonly input: string;
  /** Stop the run after this long (0: no limit). */
  readonly timeoutMs: number;
}

/** The result of a plan job: the same fields as `lightsop run --json`, and whether it stopped early. */
export interface PlanOutcome {
  readonly status: 'success' | 'fail';
  readonly variables: Record<string, { status: string; value: string }>;
  readonly failures: { variable: string; reason: string }[];
  readonly commands: string[];
  readonly aborted?: string;
}

const MAX_NAME = 512;

function isStringArray(x: unknown): x is string[] {
  return Array.isArray(x) && x.every((s) => typeof s === 'string');
}

/** The command job's data, or a message saying what is wrong with it. */
export function checkCommandJob(data: unknown): CommandJobData | string {
  const d = data as Partial<CommandJobData> | null;
  if (!d || typeof d !== 'object') return 'the job carries no data';
  if (typeof d.command !== 'string' || d.command.length === 0 || d.command.length > MAX_NAME) return 'the job names no command';
  if (!Array.isArray(d.args)) return 'the job has no argument list';
  if (typeof d.raw !== 'string' || typeof d.variable !== 'string' || typeof d.comment !== 'string') return 'the job misses raw, variable or comment';
  if (typeof d.lineNumber !== 'number' || !Number.isSafeInteger(d.lineNumber)) return 'the job has no line number';
  if (!isStringArray(d.commentLines)) return 'the job has no comment lines';
  return d as CommandJobData;
}

/** The plan job's data, or a message saying what is wrong with it. */
export function checkPlanJob(data: unknown): PlanJobData | string {
  const d = data as Partial<PlanJobData> | null;
  if (!d || typeof d !== 'object') return 'the job carries no data';
  if (typeof d.plan !== 'string') return 'the job carries no plan';
  if (typeof d.input !== 'string') return 'the job carries no input';
  if (typeof d.timeoutMs !== 'number' || !(d.timeoutMs >= 0)) return 'the job has no timeout';
  return d as PlanJobData;
}

/** Redis keys of our own, beside BullMQ's. Queue names are checked to keep them simple. */
export function workersKey(queue: string): string {
  return `lightsop:${queue}:workers`;
}

export function workerKey(queue: string, id: string): string {
  return `lightsop:${queue}:worker:${id}`;
}

/** The pub/sub channel on which coordinators ask workers to abort a running job. */
export function cancelChannel(queue: string): string {
  return `lightsop:${queue}:cancel`;
}

/** What a worker publishes about itself every few seconds (with an expiry). */
export interface WorkerInfo {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly concurrency: number;
  /**
   * Every command it hosts as core's command surface reads it (description, parameters, argument
   * counts, side effects, source: an MCP tool says so), so that a coordinator checks and describes
   * plans with the same knowledge as a local run.
   */
  readonly commands: readonly CommandSpec[];
  readonly started: number;
  readonly active: number;
  readonly completed: number;
}

/** Checks `--queue`: letters, digits, `.`, `_` and `-` (no `:`, which BullMQ uses in keys). */
export function checkQueueName(name: string): string {
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(name)) {
    throw new DistributedUsageError(`--queue: use 1 to 100 letters, digits, '.', '_' or '-' (got ${JSON.stringify(name)})`);
  }
  return name;
}

/** How long a worker's entry lives without a refresh; workers refresh it three times as often. */
export const WORKER_TTL_MS = 15_000;
export const WORKER_HEARTBEAT_MS = 5_000;
