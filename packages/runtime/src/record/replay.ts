/**
 * Reading run records and answering a run from one (docs/run-records.md). `parseRunRecord`
 * accepts a record cut after any complete line (a run killed half way) and reports a bad line
 * with its number. `replayFromRecord` gives a command registry and a model that answer every call
 * from the record, offline and deterministically: a command is answered by a recorded call of the
 * same command with the same arguments (the same variable's first), a model call by a recorded
 * request with the same messages. A call the record cannot answer fails with a reason that says
 * so, and is listed in `misses`.
 */
import { toTokenUsage, type LlmAgent, type PromptOptions } from '../llm/agent';
import type { CommandRegistry, Responder } from '../skills/registry';
import { textOf } from '../values';
import {
  RUN_RECORD_SCHEMA, RUN_RECORD_VERSION, callKey, toRecordedData, type CommandEndLine, type CommandStartLine, type ModelRequestLine,
  type ModelResponseLine, type PlanGeneratedLine, type RecordedOutcome, type RunEndLine, type RunHeaderLine, type RunRecordLine,
} from './format';
import { promptMessages } from './recorder';

export interface RunRecord {
  readonly header: RunHeaderLine;
  readonly lines: readonly RunRecordLine[];
  /** Each command call, in start order, with its end when it finished before the record stopped. */
  readonly calls: readonly { start: CommandStartLine; end: CommandEndLine | null }[];
  /** Each model call, with its response when it came before the record stopped. */
  readonly modelCalls: readonly { request: ModelRequestLine; response: ModelResponseLine | null }[];
  readonly plans: readonly PlanGeneratedLine[];
  /** Null when the run did not finish (killed, or still running). */
  readonly end: RunEndLine | null;
  /** True when the last line was unfinished (and left out). */
  readonly truncated: boolean;
}

/** A record that cannot be read: `line` is 1-based. */
export class RunRecordError extends Error {
  constructor(message: string, readonly line: number) {
    super(message);
    this.name = 'RunRecordError';
  }
}

const TYPES = new Set(['run', 'command-start', 'command-end', 'variable', 'model-request', 'model-response', 'plan-generated', 'run-end']);

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** Reads a record's text; throws RunRecordError naming the line of the first problem. */
export function parseRunRecord(text: string): RunRecord {
  const rows = text.split('\n');
  // After the last line feed: the empty string, or the unfinished line a killed writer left.
  const last = rows.pop() ?? '';
  const truncated = last.trim() !== '';
  const lines: RunRecordLine[] = [];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!.replace(/\r$/, '');
    if (row.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(row);
    } catch (error) {
      throw new RunRecordError(`not a JSON line: ${(error as Error).message}`, i + 1);
    }
    if (!isObject(parsed) || typeof parsed.type !== 'string') throw new RunRecordError('a record line is a JSON object with a "type"', i + 1);
    if (lines.length === 0) {
      if (parsed.type !== 'run' || parsed.schema !== RUN_RECORD_SCHEMA) throw new RunRecordError(`not a run record: the first line must be {"type":"run","schema":"${RUN_RECORD_SCHEMA}",...}`, i + 1);
      if (typeof parsed.version !== 'number' || parsed.version > RUN_RECORD_VERSION) throw new RunRecordError(`record version ${textOf(parsed.version)} is newer than this lightsop reads (${RUN_RECORD_VERSION})`, i + 1);
      const plan = parsed.plan;
      if (!isObject(plan) || typeof plan.text !== 'string') throw new RunRecordError('the run line has no plan text', i + 1);
    } else if (parsed.type === 'run') {
      throw new RunRecordError('a second "run" line: one record holds one run', i + 1);
    }
    // Lines of types this version does not know are kept out (a newer minor addition).
    if (!TYPES.has(parsed.type)) continue;
    const problem = lineProblem(parsed);
    if (problem) throw new RunRecordError(problem, i + 1);
    lines.push(parsed as unknown as RunRecordLine);
  }
  if (lines.length === 0) throw new RunRecordError('empty record: no "run" line', 1);
  const calls: { start: CommandStartLine; end: CommandEndLine | null }[] = [];
  const bySeq = new Map<number, { start: CommandStartLine; end: CommandEndLine | null }>();
  const modelCalls: { request: ModelRequestLine; response: ModelResponseLine | null }[] = [];
  const modelBySeq = new Map<number, { request: ModelRequestLine; response: ModelResponseLine | null }>();
  const plans: PlanGeneratedLine[] = [];
  let end: RunEndLine | null = null;
  for (const line of lines) {
    if (line.type === 'command-start') {
      const call = { start: line, end: null };
      calls.push(call);
      bySeq.set(line.seq, call);
    } else if (line.type === 'command-end') {
      const call = bySeq.get(line.seq);
      if (call) call.end = line;
    } else if (line.type === 'model-request') {
      const call = { request: line, response: null };
      modelCalls.push(call);
      modelBySeq.set(line.seq, call);
    } else if (line.type === 'model-response') {
      const call = modelBySeq.get(line.seq);
      if (call) call.response = line;
    } else if (line.type === 'plan-generated') plans.push(line);
    else if (line.type === 'run-end') end = line;
  }
  return { header: lines[0] as RunHeaderLine, lines, calls, modelCalls, plans, end, truncated };
}

const STATUSES = new Set(['success', 'fail', 'undefined', 'canceled']);

function lineProblem(x: Record<string, unknown>): string | null {
  const need = (field: string, kind: 'string' | 'number'): string | null => (typeof x[field] === kind ? null : `"${x.type as string}" line without a ${kind} "${field}"`);
  switch (x.type) {
    case 'command-start':
      if (!Array.isArray(x.args)) return '"command-start" line without "args"';
      return need('seq', 'number') ?? need('variable', 'string') ?? need('command', 'string') ?? need('raw', 'string');
    case 'command-end':
    case 'variable':
      if (!STATUSES.has(x.status as string)) return `"${x.type}" line with an unknown status`;
      return need('variable', 'string') ?? (x.type === 'command-end' ? need('seq', 'number') : null);
    case 'model-request':
      if (!Array.isArray(x.messages)) return '"model-request" line without "messages"';
      return need('seq', 'number');
    case 'model-response':
      return need('seq', 'number');
    case 'run-end':
      return isObject(x.variables) ? null : '"run-end" line without "variables"';
    default:
      return null;
  }
}

/**
 * Each variable's last recorded outcome: the closing line's when the run finished, otherwise the
 * last command end or settlement of each variable (what finished before the record stopped).
 */
export function recordedVariables(record: RunRecord): Map<string, RecordedOutcome & { lineNumber?: number }> {
  const out = new Map<string, RecordedOutcome & { lineNumber?: number }>();
  const lineOf = new Map<string, number>();
  for (const call of record.calls) lineOf.set(call.start.variable, call.start.lineNumber);
  if (record.end) {
    for (const [name, outcome] of Object.entries(record.end.variables)) out.set(name, { ...outcomeFields(outcome), lineNumber: lineOf.get(name) });
    return out;
  }
  for (const line of record.lines) {
    if (line.type === 'command-end' || line.type === 'variable') {
      out.set(line.variable, { ...outcomeFields(line), lineNumber: lineOf.get(line.variable) ?? (line.type === 'variable' ? line.lineNumber : undefined) });
    }
  }
  return out;
}

/** The outcome fields of a line. */
export function outcomeFields(line: RecordedOutcome): RecordedOutcome {
  const out: RecordedOutcome = { status: line.status };
  if (line.value !== undefined) out.value = line.value;
  if (line.reason !== undefined) out.reason = line.reason;
  if (line.rootCause !== undefined) out.rootCause = line.rootCause;
  if (line.lossy) out.lossy = true;
  return out;
}

/** A call the record could not answer. */
export interface ReplayMiss {
  readonly kind: 'command' | 'model';
  readonly variable: string | null;
  readonly raw: string;
  readonly lineNumber: number;
  readonly reason: string;
}

export interface Replay {
  readonly registry: CommandRegistry;
  readonly llmAgent: LlmAgent;
  /** Filled as the run goes: every call the record could not answer, in order. */
  readonly misses: ReplayMiss[];
  /** How many command calls the record answered. */
  answered(): number;
}

/** A recorded outcome given back through the responder as the command gave it. */
export function answerWith(outcome: RecordedOutcome, responder: Responder): unknown {
  switch (outcome.status) {
    case 'success':
      return responder.success(outcome.value ?? '');
    case 'fail':
      return responder.fail(outcome.reason ?? '');
    case 'canceled':
      return responder.cancel(outcome.rootCause?.reason ?? outcome.reason ?? '');
    default:
      // The command returned no response: nothing again.
      return undefined;
  }
}

/** A registry and a model that answer from `record` (see the module comment). */
export function replayFromRecord(record: RunRecord): Replay {
  const byKey = new Map<string, { start: CommandStartLine; end: CommandEndLine | null; used: boolean }[]>();
  for (const call of record.calls) {
    const key = callKey(call.start.command, call.start.args);
    let list = byKey.get(key);
    if (!list) byKey.set(key, (list = []));
    list.push({ ...call, used: false });
  }
  const byMessages = new Map<string, { request: ModelRequestLine; response: ModelResponseLine | null; used: boolean }[]>();
  for (const call of record.modelCalls) {
    const key = JSON.stringify(call.request.messages);
    let list = byMessages.get(key);
    if (!list) byMessages.set(key, (list = []));
    list.push({ ...call, used: false });
  }
  const misses: ReplayMiss[] = [];
  let answered = 0;
  const registry: CommandRegistry = {
    listCommands: () => record.header.commands,
    executeCommand(payload, responder) {
      const args = payload.args.map((a) => toRecordedData(a, textOf).value);
      const list = byKey.get(callKey(payload.command, args)) ?? [];
      // The same variable's first unused call, else any unused one, else the last one used
      // (the same call made again, as a revised #!english plan does, gets the same answer).
      const pick = list.find((c) => !c.used && c.start.variable === payload.variable)
        ?? list.find((c) => !c.used)
        ?? [...list].reverse().find((c) => c.end !== null);
      if (!pick || !pick.end) {
        const reason = pick
          ? 'the recorded run stopped before this command finished'
          : list.length === 0 && record.calls.some((c) => c.start.variable === payload.variable)
            ? 'the record has no call of this command with these arguments (the plan or its inputs changed)'
            : 'the record has no call of this command with these arguments';
        misses.push({ kind: 'command', variable: payload.variable, raw: payload.raw, lineNumber: payload.lineNumber, reason });
        return responder.fail(`replay: ${reason}: ${payload.raw}`);
      }
      pick.used = true;
      answered++;
      return answerWith(pick.end, responder);
    },
  };
  const llmAgent: LlmAgent = {
    executePrompt(prompt: string, options?: PromptOptions) {
      const messages = promptMessages(prompt, options);
      const list = byMessages.get(JSON.stringify(messages)) ?? [];
      const pick = list.find((c) => !c.used) ?? [...list].reverse().find((c) => c.response !== null);
      if (!pick || !pick.response) {
        const reason = pick ? 'the recorded run stopped before this model call answered' : 'the record has no model call with these messages';
        misses.push({ kind: 'model', variable: null, raw: prompt.length > 200 ? `${prompt.slice(0, 200)}…` : prompt, lineNumber: 0, reason });
        return Promise.reject(new Error(`replay: ${reason}`));
      }
      pick.used = true;
      if (pick.response.error !== undefined || pick.response.content === undefined) return Promise.reject(new Error(pick.response.error ?? 'the model call failed'));
      const usage = pick.response.usage;
      if (usage && typeof options?.onUsage === 'function') options.onUsage(toTokenUsage(usage.inputTokens, usage.outputTokens, usage.totalTokens));
      return Promise.resolve(pick.response.content);
    },
  };
  return { registry, llmAgent, misses, answered: () => answered };
}
