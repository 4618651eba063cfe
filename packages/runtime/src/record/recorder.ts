/**
 * The run recorder: a consumer of the interpreter's events (`onEvent`) and of model calls (an
 * `LlmAgent` wrapped by `wrapAgent`) that writes a run record line by line as things happen
 * (format.ts). Each line goes to the sink whole, at once: a run killed at any moment leaves the
 * lines of what had finished. Every string is redacted (API keys, bearer tokens, URL credentials
 * and the secrets given) before it is written. A failing sink never fails the run: the recorder
 * stops writing and keeps the error for the host to report.
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { redactSecrets } from '@lightsop/core';
import type { RunEvent } from '../interpreter';
import type { LlmAgent, PromptOptions, TokenUsage } from '../llm/agent';
import { textOf, type RootCause, type Status, type Value } from '../values';
import {
  RUN_RECORD_SCHEMA, RUN_RECORD_VERSION, sha256, toRecordedData, type JsonValue, type RecordedMessage, type RecordedOutcome, type RecordedUsage,
  type RunRecordLine,
} from './format';

/** Where record lines go: `write` gets one whole line (with its line feed) at a time. */
export interface RecordSink {
  write(line: string): void;
  close?(): void;
}

export interface RunRecorderOptions {
  /** Values never written (API keys, configured secrets); bearer tokens and URL credentials are always redacted. */
  secrets?: Iterable<string | undefined>;
  tool?: { name: string; version: string };
}

export interface RecordStart {
  /** The plan's path as the host shows it, or null (standard input, an editor buffer). */
  file: string | null;
  text: string;
  english: boolean;
  /** `undefined`: the run has no input. */
  input?: unknown;
  /** What the registry lists (`listCommands()`). */
  commands: unknown;
}

/** A file sink: created (or truncated) with mode 0600, each line written with one synchronous write. */
export function openRecordFile(file: string): RecordSink {
  const fd = openSync(file, 'w', 0o600);
  let open = true;
  return {
    write(line: string) {
      const bytes = Buffer.from(line, 'utf8');
      let offset = 0;
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset);
    },
    close() {
      if (!open) return;
      open = false;
      try {
        fsyncSync(fd);
      } catch {
        // Not every file system syncs (a pipe, /dev/stdout): the lines are written all the same.
      }
      closeSync(fd);
    },
  };
}

/** The messages a model call sends: the history (as role and text) then the prompt as the user's message. */
export function promptMessages(prompt: string, options: PromptOptions | undefined): RecordedMessage[] {
  const out: RecordedMessage[] = [];
  const history = Array.isArray(options?.history) ? (options.history as unknown[]) : [];
  for (const item of history) {
    if (typeof item !== 'object' || item === null) continue;
    const m = item as { role?: unknown; content?: unknown; text?: unknown };
    const content = typeof m.content === 'string' ? m.content : typeof m.text === 'string' ? m.text : m.content !== undefined ? JSON.stringify(m.content) ?? '' : '';
    out.push({ role: typeof m.role === 'string' ? m.role : 'user', content });
  }
  out.push({ role: 'user', content: prompt });
  return out;
}

function outcomeOf(status: Status, data: unknown, rootCause: RootCause | null | undefined): RecordedOutcome {
  if (status === 'success') {
    const { value, lossy } = toRecordedData(data, textOf);
    return lossy ? { status, value, lossy } : { status, value };
  }
  const out: RecordedOutcome = { status, reason: textOf(data ?? '') };
  if (status === 'canceled' && rootCause) {
    out.rootCause = { name: textOf(rootCause.name), reason: textOf(rootCause.reason ?? ''), command: rootCause.command == null ? null : textOf(rootCause.command) };
  }
  return out;
}

/** The outcome of a value record, as a record line states it. */
export function recordedOutcome(value: Value): RecordedOutcome {
  return outcomeOf(value.status, value.data, value.rootCause);
}

export class RunRecorder {
  private readonly secrets: string[];
  private readonly t0 = performance.now();
  private readonly started = Date.now();
  private seq = 0;
  private modelSeq = 0;
  /** Variables whose command is running: their start's seq and time. */
  private readonly running = new Map<string, { seq: number; t: number }>();
  private failure: Error | null = null;
  private closed = false;

  constructor(private readonly sink: RecordSink, private readonly options: RunRecorderOptions = {}) {
    this.secrets = [];
    for (const s of options.secrets ?? []) if (s) this.secrets.push(s);
  }

  /** Why writing stopped (a full disk, a closed pipe), or null. */
  get error(): Error | null {
    return this.failure;
  }

  /** Writes the header: the plan, its hash, the input and the commands the registry lists. */
  start(run: RecordStart): void {
    const input = run.input === undefined
      ? { supplied: false as const }
      : (() => {
          const { value, lossy } = toRecordedData(run.input, textOf);
          return lossy ? { supplied: true as const, value, lossy } : { supplied: true as const, value };
        })();
    let commands: JsonValue[] = [];
    try {
      const listed = run.commands;
      if (Array.isArray(listed)) commands = listed.map((c) => toRecordedData(c, textOf).value);
    } catch {
      // A registry whose list cannot be read: the record lists nothing.
    }
    this.write({
      type: 'run',
      schema: RUN_RECORD_SCHEMA,
      version: RUN_RECORD_VERSION,
      tool: this.options.tool ?? { name: 'lightsop', version: '0' },
      startedAt: new Date(this.started).toISOString(),
      t: 0,
      plan: { file: run.file, text: run.text, sha256: sha256(run.text), english: run.english },
      input,
      commands,
    });
  }

  /** The interpreter's `onEvent`: pass every event (it keeps no reference to them). */
  readonly onEvent = (event: RunEvent): void => {
    if (event.type === 'command-started') {
      const seq = ++this.seq;
      const t = this.now();
      this.running.set(event.variable, { seq, t });
      this.write({
        type: 'command-start', seq, variable: event.variable, command: event.command,
        args: event.args.map((a) => toRecordedData(a, textOf).value), raw: event.raw, lineNumber: event.lineNumber,
        dependencies: [...event.dependencies], comment: event.comment, time: this.time(), t,
      });
    } else if (event.type === 'variable-settled') {
      const outcome = outcomeOf(event.status, event.data, event.rootCause);
      const open = this.running.get(event.variable);
      const t = this.now();
      if (open) {
        this.running.delete(event.variable);
        this.write({ type: 'command-end', seq: open.seq, variable: event.variable, ...outcome, time: this.time(), t, durationMs: round(t - open.t) });
      } else {
        this.write({ type: 'variable', variable: event.variable, ...outcome, lineNumber: event.lineNumber, time: this.time(), t });
      }
    } else if (event.type === 'plan-generated') {
      this.write({ type: 'plan-generated', attempt: event.attempt, reason: event.reason, code: event.code, sha256: sha256(event.code), time: this.time(), t: this.now() });
    }
  };

  /** An agent that records each request (model and messages) and its answer, error and usage. */
  wrapAgent(agent: LlmAgent, defaultModel?: string): LlmAgent {
    return {
      executePrompt: async (prompt: string, options: PromptOptions = {}) => {
        const seq = ++this.modelSeq;
        const model = typeof options.model === 'string' && options.model ? options.model : defaultModel ?? null;
        const t = this.now();
        this.write({ type: 'model-request', seq, model, messages: promptMessages(prompt, options), time: this.time(), t });
        let usage: RecordedUsage | null = null;
        const outer = options.onUsage;
        const onUsage = (u: TokenUsage) => {
          usage = { inputTokens: u.inputTokens, outputTokens: u.outputTokens, totalTokens: u.totalTokens };
          outer?.(u);
        };
        try {
          const answer = await agent.executePrompt(prompt, { ...options, onUsage });
          const end = this.now();
          this.write({ type: 'model-response', seq, content: typeof answer === 'string' ? answer : textOf(answer), usage, time: this.time(), t: end, durationMs: round(end - t) });
          return answer;
        } catch (error) {
          const end = this.now();
          this.write({ type: 'model-response', seq, error: error instanceof Error ? error.message : textOf(error), usage, time: this.time(), t: end, durationMs: round(end - t) });
          throw error;
        }
      },
    };
  }

  /** Writes the closing line with every variable's outcome, then closes the sink. */
  finish(result: { aborted: boolean; variables: Iterable<{ name: string; value: Value }> }): void {
    const variables: Record<string, RecordedOutcome> = {};
    for (const v of result.variables) variables[v.name] = recordedOutcome(v.value);
    const t = this.now();
    this.write({ type: 'run-end', aborted: result.aborted, variables, durationMs: round(t), time: this.time(), t });
    this.close();
  }

  /** Closes the sink without a closing line (the run ended without results). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.sink.close?.();
    } catch (error) {
      this.failure ??= error instanceof Error ? error : new Error(textOf(error));
    }
  }

  private write(line: RunRecordLine): void {
    if (this.failure || this.closed) return;
    try {
      const secrets = this.secrets;
      const text = JSON.stringify(line, (_key, value: unknown) => (typeof value === 'string' ? redactSecrets(value, secrets) : value));
      this.sink.write(`${redactSecrets(text, secrets)}\n`);
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(textOf(error));
    }
  }

  private now(): number {
    return round(performance.now() - this.t0);
  }

  private time(): string {
    return new Date().toISOString();
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

