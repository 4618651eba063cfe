/**
 * `run_plan`: one run of a plan in a fresh Interpreter with the workspace's skills, as `lightsop
 * run` runs it: an invalid plan runs nothing, the run is aborted after its timeout (or when the
 * client cancels the request), commands get a grace period to honour the signal and are then given
 * up on, so a run always ends with its results. The result has the shape of `run --json`.
 */
import { analyzePlan, isEnglishSource, type Analysis } from '@lightsop/core';
import {
  ConfigurationError, dataText, Interpreter, PlanGenerationError, PlanValidationError, UnlimitedExecutionMonitor, type CommandRegistry,
  type LlmAgent, type RunEvent,
} from '@lightsop/runtime';
import { progressText, type McpProgress } from '@lightsop/runtime/mcp';
import { formatSeconds } from '../duration';
import { ToolInputError } from './workspace';

/** A value longer than this is cut in the result (the rest is counted, not sent). */
export const MAX_VALUE_CHARS = 100_000;

export interface RunPlanOptions {
  readonly registry: CommandRegistry;
  readonly input?: string;
  readonly timeoutMs: number;
  readonly graceMs: number;
  /** Aborted when the client cancels the request. */
  readonly signal?: AbortSignal;
  readonly llmAgent?: LlmAgent | null;
  /** The run's progress for the client: each settled variable (and, when the registry reports them, tool calls' progress). */
  readonly progress?: RunProgress | null;
}

/** How many progress notifications of tool calls are forwarded between two settled variables. */
export const MAX_TOOL_PROGRESS_PER_STEP = 10_000;

/**
 * The progress of one run as the client of `run_plan` sees it (`notifications/progress` for its
 * token): `progress` counts the settled variables of `total` declarations, message `@name status`;
 * between two of them, each progress notification of a tool call the plan makes (an MCP tool of
 * the workspace's servers) is forwarded with the message `@name SERVER.TOOL: 2/5 (40%) – its
 * message`, at `settled + n/(n+1)` for the n-th since the last settled variable, so the value
 * always increases (MCP requires it) and stays below the next settled count.
 */
export class RunProgress {
  #settled = 0;
  #total = 0;
  #sinceStep = 0;

  constructor(private readonly send: (progress: number, total: number, message: string) => void) {}

  /** The plan's number of declarations (0 for an `#!english` script until it is generated). */
  start(total: number): void {
    this.#total = total;
  }

  /** A variable settled: `settled` of them so far. */
  step(settled: number, variable: string, status: string): void {
    this.#settled = settled;
    this.#sinceStep = 0;
    this.send(settled, Math.max(this.#total, settled), `@${variable} ${status}`);
  }

  /** A progress notification of a tool call in flight (withMcpTools' `onProgress`). */
  tool = (p: McpProgress): void => {
    if (this.#sinceStep >= MAX_TOOL_PROGRESS_PER_STEP) return;
    const n = ++this.#sinceStep;
    this.send(this.#settled + n / (n + 1), Math.max(this.#total, this.#settled + 1), `@${p.variable} ${p.command}: ${progressText(p)}`);
  };
}

export interface RunPlanResult {
  readonly variables: Record<string, { status: string; value: string }>;
  readonly failures: { variable: string; reason: string }[];
  readonly commands: string[];
  /** Set when the run was stopped: "timeout" or "canceled". */
  readonly stopped?: 'timeout' | 'canceled';
  /** Commands the run stopped waiting for after the grace. */
  readonly leftRunning?: string[];
}

/** The text cut to MAX_VALUE_CHARS, saying how much was left out. */
export function capText(text: string, max = MAX_VALUE_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

/** The plan's errors as `file:line:column: message [code]` lines, or null when it has none. */
export function planErrors(text: string, display: string, inputDeclared: boolean): string[] | null {
  return errorLines(analyzePlan(text, { inputDeclared }), display);
}

function errorLines(analysis: Analysis, display: string): string[] | null {
  const errors = analysis.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length === 0) return null;
  return errors.slice(0, 50).map((d) => `${display}:${d.range.line}:${d.range.column}: ${d.message} [${d.code}]`);
}

export async function runPlan(text: string, display: string, options: RunPlanOptions): Promise<RunPlanResult> {
  const english = isEnglishSource(text);
  // Analysed once: for the errors, the progress total and the interpreter (`UpdateOptions.analysis`).
  const analysis = english ? null : analyzePlan(text, { inputDeclared: options.input !== undefined });
  if (analysis) {
    const errors = errorLines(analysis, display);
    if (errors) throw new ToolInputError(`${display} is not a valid plan; nothing was run:\n${errors.join('\n')}`);
  }
  const controller = new AbortController();
  let stopped: 'timeout' | 'canceled' | undefined;
  const leftRunning: string[] = [];
  let graceTimer: ReturnType<typeof setTimeout> | null = null;
  const abort = (why: 'timeout' | 'canceled') => {
    if (controller.signal.aborted) return;
    stopped = why;
    controller.abort(new Error(why === 'timeout' ? `timed out after ${formatSeconds(options.timeoutMs)}` : 'canceled by the client'));
    graceTimer = setTimeout(() => {
      for (const name of interpreter.abandonRunning('canceled', `did not stop within ${formatSeconds(options.graceMs)} of the signal`)) leftRunning.push(name);
    }, options.graceMs);
  };
  const timer = setTimeout(() => abort('timeout'), options.timeoutMs);
  const onClientAbort = () => abort('canceled');
  if (options.signal?.aborted) onClientAbort();
  options.signal?.addEventListener('abort', onClientAbort, { once: true });

  let settled = 0;
  const onEvent = (e: RunEvent) => {
    if (e.type !== 'variable-settled') return;
    settled++;
    options.progress?.step(settled, e.variable, e.status);
  };
  const interpreter = new Interpreter({
    registry: options.registry,
    input: options.input,
    executionMonitor: new UnlimitedExecutionMonitor(),
    llmAgent: options.llmAgent ?? null,
    signal: controller.signal,
    onEvent,
  });
  options.progress?.start(analysis ? analysis.tree.count : 0);
  let commands: string[];
  try {
    commands = (await interpreter.updateCode(text, analysis ? { analysis } : {})).commands;
  } catch (error) {
    if (error instanceof PlanValidationError || error instanceof ConfigurationError) throw new ToolInputError(`${display}: ${error.message}`);
    if (error instanceof PlanGenerationError) throw new ToolInputError(`${display}: no valid plan was generated: ${error.message}`);
    throw error;
  } finally {
    clearTimeout(timer);
    if (graceTimer) clearTimeout(graceTimer);
    options.signal?.removeEventListener('abort', onClientAbort);
  }
  const variables: Record<string, { status: string; value: string }> = {};
  const failures: { variable: string; reason: string }[] = [];
  for (const e of interpreter.entries()) {
    if (e.declaration === null) continue;
    const value = capText(dataText(e.value));
    variables[e.name] = { status: e.value.status, value };
    if (e.value.status === 'fail') failures.push({ variable: e.name, reason: value });
  }
  const result: { -readonly [K in keyof RunPlanResult]: RunPlanResult[K] } = { variables, failures, commands: commands.map((c) => capText(c, 1000)) };
  if (stopped) result.stopped = stopped;
  if (leftRunning.length > 0) result.leftRunning = leftRunning;
  return result;
}
