/**
 * The run record format (docs/run-records.md, schemas/run-record.schema.json): JSON Lines, one
 * object per line, each with a `type`. The first line is the `run` header; `run-end` closes a
 * record whose run finished. Version 1. A reader accepts a record cut after any complete line
 * (a run killed half way), and ignores an unfinished last line.
 */
import { createHash } from 'node:crypto';

export const RUN_RECORD_SCHEMA = 'lightsop-run-record';
export const RUN_RECORD_VERSION = 1;

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface RecordedMessage {
  role: string;
  content: string;
}

export interface RecordedUsage {
  inputTokens: number | null;
  outputTokens: number | null;
  totalTokens: number | null;
}

export type RecordedStatus = 'success' | 'fail' | 'undefined' | 'canceled';

/** How a variable settled: a success's value, otherwise its reason (and a cancellation's root cause). */
export interface RecordedOutcome {
  status: RecordedStatus;
  /** Success: the data as JSON (text when it had no faithful JSON form, with `lossy`). */
  value?: JsonValue;
  /** Not a success: the reason text. */
  reason?: string;
  /** Canceled: the root cause (the variable and reason the cancellation started from). */
  rootCause?: { name: string; reason: string; command: string | null };
  /** The value had no faithful JSON form (a function, a cycle, a class instance): `value` is its text. */
  lossy?: true;
}

export interface RunHeaderLine {
  type: 'run';
  schema: typeof RUN_RECORD_SCHEMA;
  version: number;
  tool: { name: string; version: string };
  startedAt: string;
  t: number;
  plan: { file: string | null; text: string; sha256: string; english: boolean };
  input: { supplied: false } | { supplied: true; value: JsonValue; lossy?: true };
  /** What the registry listed (names, descriptions, ...): an `#!english` prompt shows it. */
  commands: JsonValue[];
}

export interface CommandStartLine {
  type: 'command-start';
  seq: number;
  variable: string;
  command: string;
  args: JsonValue[];
  raw: string;
  lineNumber: number;
  dependencies: string[];
  comment: string;
  time: string;
  t: number;
}

export interface CommandEndLine extends RecordedOutcome {
  type: 'command-end';
  seq: number;
  variable: string;
  time: string;
  t: number;
  durationMs: number;
}

/** A variable that settled without a command of its own running (propagation, abort). */
export interface VariableLine extends RecordedOutcome {
  type: 'variable';
  variable: string;
  lineNumber: number;
  time: string;
  t: number;
}

export interface ModelRequestLine {
  type: 'model-request';
  seq: number;
  model: string | null;
  messages: RecordedMessage[];
  time: string;
  t: number;
}

export interface ModelResponseLine {
  type: 'model-response';
  seq: number;
  /** The answer; absent when the call failed. */
  content?: string;
  error?: string;
  usage: RecordedUsage | null;
  time: string;
  t: number;
  durationMs: number;
}

export interface PlanGeneratedLine {
  type: 'plan-generated';
  attempt: number;
  reason: 'initial' | 'failure';
  code: string;
  sha256: string;
  time: string;
  t: number;
}

export interface RunEndLine {
  type: 'run-end';
  aborted: boolean;
  variables: Record<string, RecordedOutcome>;
  durationMs: number;
  time: string;
  t: number;
}

export type RunRecordLine =
  | RunHeaderLine | CommandStartLine | CommandEndLine | VariableLine | ModelRequestLine | ModelResponseLine | PlanGeneratedLine | RunEndLine;

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function isPlainJson(x: unknown, seen: Set<unknown>, depth: number): boolean {
  if (x === null || typeof x === 'string' || typeof x === 'boolean') return true;
  if (typeof x === 'number') return Number.isFinite(x);
  if (typeof x !== 'object' || depth > 64 || seen.has(x)) return false;
  seen.add(x);
  try {
    if (Array.isArray(x)) {
      for (const item of x) if (!isPlainJson(item, seen, depth + 1)) return false;
      return true;
    }
    const proto: unknown = Object.getPrototypeOf(x);
    if (proto !== Object.prototype && proto !== null) return false;
    for (const key of Object.keys(x)) if (!isPlainJson((x as Record<string, unknown>)[key], seen, depth + 1)) return false;
    return true;
  } catch {
    // A getter or Proxy trap threw: not plain data.
    return false;
  } finally {
    seen.delete(x);
  }
}

/**
 * Data as JSON for the record: plain data (text, finite numbers, booleans, null, arrays and plain
 * objects of them) as it is; anything else as `text` (the value's text form) with `lossy`.
 * `undefined` is recorded as the empty text, as the value's text form shows it. Never throws.
 */
export function toRecordedData(data: unknown, text: (x: unknown) => string): { value: JsonValue; lossy?: true } {
  if (data === undefined) return { value: '' };
  if (isPlainJson(data, new Set(), 0)) return { value: data as JsonValue };
  return { value: text(data), lossy: true };
}

/** The key two calls of one command share when they got the same arguments. */
export function callKey(command: string, args: readonly JsonValue[]): string {
  return JSON.stringify([command, args]);
}
