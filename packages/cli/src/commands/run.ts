/**
 * `lightsop run`: execute a plan with a skills module (contract.md, spec 6.13). An invalid plan
 * runs nothing (exit 2); a bad skills module, a missing file or a missing LLM configuration is a
 * one-line error (exit 3). Ctrl-C or --timeout abort cleanly and still print what finished; a
 * command that ignores the signal is given up on after a grace period, and one that can never
 * settle is reported as failed: a run never ends without its results, and never as a success.
 */
import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import pc from 'picocolors';
import { configure as configureStringify } from 'safe-stable-stringify';
import { analyzePlan, isEnglishSource, type Analysis } from '@lightsop/core';
import {
  ConfigurationError, Interpreter, OpenAiCompatibleAgent, PlanGenerationError, PlanValidationError, RUN_RECORD_SCHEMA, RunRecorder, TokenBudget,
  TokenBudgetExceededError, UnlimitedExecutionMonitor, dataText, openRecordFile, textOf, withTokenBudget, type CommandRegistry, type LlmAgent,
  type RunEvent, type Value,
} from '@lightsop/runtime';
import { findConfig } from '../config';
import { DEFAULT_GRACE_MS } from '../defaults';
import { formatSeconds } from '../duration';
import { CliError } from '../errors';
import { expandPaths, readPlanFile, stripBom } from '../files';
import { exitAfterOutput, leaveWorkBehind, onIdle } from '../idle';
import { writeRunJson } from '../formats/run-json';
import { openRemoteRun, type RemoteRun } from '../distributed';
import type { Io } from '../io';
import { createLlmAgent, resolveLlm, resolveMaxTokens, type LlmFlags } from '../llm';
import { registryWithMcp } from '../mcp';
import { startTracing, type RunTrace } from '../tracing';
import { loadSkills, skillsPathFor } from '../skills';
import { escapeJsonText, jsonLine, rememberedSecrets, oneLine as terminalLine, terminalText } from '../terminal-text';

export interface RunOptions extends LlmFlags {
  readonly skills?: string;
  readonly input?: string;
  readonly json?: boolean;
  readonly timeout?: number;
  /** After --timeout or Ctrl-C, how long (ms) commands get to stop before they are given up on. */
  readonly grace?: number;
  readonly concurrency?: number;
  /** Run the commands on the workers of this Redis (docs/scale-out.md). */
  readonly redis?: string;
  readonly queue?: string;
  readonly reconnectTimeout?: number;
  /** Export OpenTelemetry traces (also on with OTEL_EXPORTER_OTLP_ENDPOINT; docs/tracing.md). */
  readonly otel?: boolean;
  /** Write a run record (docs/run-records.md) to this file. */
  readonly record?: string;
}

const USAGE = 3;


/** The reason given to a command still pending once nothing in the process could settle it. */
const NEVER_SETTLED = 'never finished: its promise was still pending with nothing left that could settle it';

/** A registry for plans run without skills: only the built-in `assign` works. */
const EMPTY_REGISTRY: CommandRegistry = {
  listCommands: () => [],
  executeCommand(payload) {
    throw new Error(`Unknown command ${payload.command}: no skills module was given (--skills or lightsop.config.json)`);
  },
};

/** Model, skill and input text on one line, escaped for the terminal (terminal-text.ts). */
function oneLine(text: string, max = 70): string {
  return terminalLine(text, max);
}

export interface ProcessSignals {
  onInterrupt(handler: () => void): () => void;
}

export async function runCommand(plan: string, options: RunOptions, io: Io, signals?: ProcessSignals): Promise<number> {
  const files = expandPaths([plan], io.cwd, USAGE);
  if (files.length !== 1) throw new CliError(`${plan}: give exactly one plan file`, USAGE);
  const file = files[0]!;
  const { text } = stripBom(readPlanFile(file, USAGE));
  const dir = file.absolute ? path.dirname(file.absolute) : io.cwd;
  const inputSupplied = options.input !== undefined;
  const english = isEnglishSource(text);

  // Validate before loading anything: an invalid plan executes nothing.
  const checked = checkPlan(text, file.display, inputSupplied, options, io);
  if (checked === null) return 2;
  const recordFile = options.record === undefined ? null : prepareRecordFile(options.record, io.cwd, file.absolute);

  const skillsPath = options.redis ? undefined : skillsPathFor(options.skills, dir, io.cwd);
  let registry = EMPTY_REGISTRY;
  if (skillsPath) {
    const loaded = await loadSkills(skillsPath, USAGE, io.cwd);
    if (!loaded.registry) throw new CliError(`${path.relative(io.cwd, skillsPath) || skillsPath}: run needs a skills module (.mjs or .js) that executes commands; a JSON description only lists them`, USAGE);
    registry = loaded.registry;
  }
  // The tools of the config's MCP servers join the skills (not with --redis: the workers run the commands).
  // Their calls' progress notifications go to the run board (executeRun fills the slot); progress
  // is asked of the servers only when a terminal shows it.
  const progress: ProgressSlot = { onProgress: null };
  const showsProgress = io.isTTY && !options.json;
  const onProgress = showsProgress ? (p: { variable: string }, shown: string) => progress.onProgress?.(p.variable, shown) : undefined;
  if (!options.redis) registry = (await registryWithMcp(skillsPath ? registry : null, dir, USAGE, onProgress)) ?? registry;

  let llmAgent: OpenAiCompatibleAgent | null = null;
  let budget: TokenBudget | null = null;
  // The run's span, once executeRun has started it: model calls become its children.
  const trace: TraceSlot = { run: null };
  if (english) {
    const config = findConfig(dir);
    const settings = resolveLlm(options, process.env, config, USAGE);
    if (!settings.baseUrl || !settings.model) {
      throw new CliError(`${file.display} is an english script and needs a language model: pass --llm-base-url and --llm-model, set LIGHTSOP_LLM_BASE_URL and LIGHTSOP_LLM_MODEL, or add "llm" to lightsop.config.json`, USAGE);
    }
    budget = new TokenBudget(resolveMaxTokens(options, config));
    llmAgent = createLlmAgent({ ...settings, baseUrl: settings.baseUrl, model: settings.model }, io, (call) => trace.run?.modelCall(call));
  }

  if (inputSupplied && /^\s*@input(\s|$)/m.test(text)) {
    io.stderr(`lightsop: warning: ${terminalText(file.display)} declares @input and --input is given; @input takes the input's value and its command does not run\n`);
  }

  // With --redis the commands run on the workers; nothing of the distributed runner loads otherwise.
  const remote: RemoteRun | null = options.redis ? await openRemoteRun({ ...options, redis: options.redis }, io) : null;
  if (remote) registry = remote.registry;
  return executeRun({
    display: file.display, text, english, declaredNames: checked.names, analysis: checked.analysis, registry, llmAgent, model: llmAgent?.model, input: options.input, remote,
    recordFile, budget, trace, progress,
  }, options, io, signals);
}

/** A plan that `checkPlan` found valid: its declared names and the analysis, for the interpreter. */
export interface CheckedPlan {
  readonly names: string[];
  /** Null for an `#!english` source (analysed once generated). */
  readonly analysis: Analysis | null;
}

/**
 * Checks a plan before anything runs: the declared names and the analysis (handed to the
 * interpreter, which then does not analyse the same text again), or null when it has errors (they
 * are printed, as JSON with --json, and the caller exits 2). An `#!english` source is checked
 * once generated.
 */
export function checkPlan(text: string, display: string, inputSupplied: boolean, options: { json?: boolean }, io: Io): CheckedPlan | null {
  if (isEnglishSource(text)) return { names: [], analysis: null };
  const analysis = analyzePlan(text, { inputDeclared: inputSupplied });
  const errors = analysis.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length === 0) return { names: [...analysis.symbols.declarations.keys()], analysis };
  if (options.json) {
    io.stdout(jsonLine({ diagnostics: errors.map((d) => ({ code: d.code, severity: d.severity, message: d.message, line: d.range.line, column: d.range.column })) }) + '\n');
  } else {
    for (const d of errors) io.stderr(`${terminalText(display)}:${d.range.line}:${d.range.column}: error: ${terminalText(d.message)} [${d.code}]\n`);
    io.stderr(`lightsop: ${terminalText(display)} is not a valid plan; nothing was run\n`);
  }
  return null;
}

/**
 * Where `--record` writes: refused (exit 3) when it is the plan itself, a folder, or an existing
 * file that is not a run record, so a typo never overwrites a user's file.
 */
function prepareRecordFile(record: string, cwd: string, planFile: string | null): { path: string; shown: string } {
  const target = path.resolve(cwd, record);
  const shown = path.relative(cwd, target) || target;
  let existing: Buffer | null = null;
  try {
    if (planFile && realpathSync(target) === realpathSync(planFile)) throw new CliError(`--record ${shown}: that is the plan file; give another file for the record`, USAGE);
    if (statSync(target).isDirectory()) throw new CliError(`--record ${shown}: is a folder; give a file for the record`, USAGE);
    const fd = openSync(target, 'r');
    try {
      existing = Buffer.alloc(64);
      existing = existing.subarray(0, readSync(fd, existing, 0, 64, 0));
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new CliError(`--record ${shown}: ${(error as Error).message}`, USAGE);
  }
  if (existing && existing.length > 0 && !existing.toString('utf8').startsWith(`{"type":"run","schema":"${RUN_RECORD_SCHEMA}"`)) {
    throw new CliError(`--record ${shown}: the file exists and is not a run record; refusing to overwrite it`, USAGE);
  }
  return { path: target, shown };
}

/** A plan ready to run: checked, with its registry and model (live, remote or a record's). */
export interface PreparedRun {
  readonly display: string;
  readonly text: string;
  readonly english: boolean;
  readonly declaredNames: readonly string[];
  /** `checkPlan`'s analysis of `text`, handed to the interpreter (`UpdateOptions.analysis`). */
  readonly analysis?: Analysis | null;
  readonly registry: CommandRegistry;
  readonly llmAgent: LlmAgent | null;
  readonly model?: string;
  readonly input: unknown;
  readonly remote?: RemoteRun | null;
  readonly recordFile?: { path: string; shown: string } | null;
  /** Called after the results are printed (replay lists the calls its record could not answer); may change the exit code. */
  readonly afterReport?: (code: number) => number;
  /** Counts the model's tokens (usage in the summary and --json) and refuses requests once it is spent. */
  readonly budget?: TokenBudget | null;
  /** Where executeRun puts the run's span, for the model's `onCall` hook (createLlmAgent). */
  readonly trace?: TraceSlot;
  /** Where executeRun puts its progress listener, for the registry's progress (MCP tool calls). */
  readonly progress?: ProgressSlot;
}

/** Where executeRun puts its listener for progress of a command in flight (an MCP tool's notifications). */
export interface ProgressSlot {
  onProgress: ((variable: string, text: string) => void) | null;
}

/** The run's span once it has started (null before and after). */
export interface TraceSlot {
  run: RunTrace | null;
}

/** Runs a prepared plan: the live board or log, the summary or JSON, Ctrl-C, --timeout and the record. */
export async function executeRun(prepared: PreparedRun, options: RunOptions, io: Io, signals?: ProcessSignals): Promise<number> {
  const { remote = null } = prepared;
  const file = { display: prepared.display };
  const text = prepared.text;
  const declaredNames = prepared.declaredNames;
  let recorder: RunRecorder | null = null;
  if (prepared.recordFile) {
    try {
      recorder = new RunRecorder(openRecordFile(prepared.recordFile.path), { secrets: rememberedSecrets(), tool: { name: 'lightsop', version: io.version } });
    } catch (error) {
      throw new CliError(`--record ${prepared.recordFile.shown}: ${(error as Error).message}`, USAGE);
    }
    let commands: unknown = [];
    try {
      commands = prepared.registry.listCommands();
    } catch {
      // The run reports a registry that cannot list its commands; the record lists none.
    }
    recorder.start({ file: prepared.display, text, english: prepared.english, input: prepared.input, commands });
  }
  const registry = prepared.registry;
  const budget = prepared.budget ?? null;
  const recorded = prepared.llmAgent && recorder ? recorder.wrapAgent(prepared.llmAgent, prepared.model) : prepared.llmAgent;
  // The budget wraps the recorder: a refused request reaches neither the provider nor the record.
  // Both count through the one `onUsage` hook of each request.
  const llmAgent: LlmAgent | null = recorded && budget ? withTokenBudget(recorded, budget) : recorded;
  const trace: TraceSlot = prepared.trace ?? { run: null };

  // Traces: nothing of OpenTelemetry loads unless --otel or the OTLP endpoint variables ask for it.
  const tracing = await startTracing(options.otel, process.env, io);
  trace.run = tracing?.startRun('lightsop run', { 'lightsop.plan': path.basename(file.display), 'lightsop.plan.english': prepared.english }) ?? null;
  /** Ends the run's span with the outcome and exports what is left (bounded); safe to call twice. */
  const endTrace = async (code: number, error?: string) => {
    if (!tracing) return;
    trace.run?.end({ 'lightsop.exit_code': code, ...(budget ? { 'gen_ai.usage.input_tokens': budget.inputTokens, 'gen_ai.usage.output_tokens': budget.outputTokens } : {}) }, error ?? (code === 0 ? undefined : `exit code ${code}`));
    trace.run = null;
    await tracing.shutdown();
  };

  const live = io.isTTY && !options.json;
  const c = pc.createColors(io.color);
  const graceMs = options.grace ?? DEFAULT_GRACE_MS;
  const controller = new AbortController();
  let timedOut = false;
  let graceTimer: ReturnType<typeof setTimeout> | null = null;
  // The commands the run stopped waiting for, for the notes after the results.
  const leftRunning: { name: string; status: 'fail' | 'canceled'; reason: string }[] = [];
  /** Gives up on the commands in flight: each gets `status` and `reason` now, a late result is dropped. */
  const stopWaiting = (status: 'fail' | 'canceled', reason: string): number => {
    const names = interpreter.abandonRunning(status, reason);
    for (const name of names) leftRunning.push({ name, status, reason });
    if (names.length > 0) leaveWorkBehind();
    return names.length;
  };
  const abort = (reason: Error) => {
    if (controller.signal.aborted) return;
    controller.abort(reason);
    // Commands get the grace to honour the signal, then the run stops waiting for them. Neither
    // timer keeps the process alive: when nothing else does, the idle check below answers.
    graceTimer = setTimeout(() => stopWaiting('canceled', `did not stop within ${formatSeconds(graceMs)} of the signal`), graceMs);
    graceTimer.unref();
  };
  const timer = options.timeout ? setTimeout(() => {
    timedOut = true;
    abort(new Error('timeout'));
  }, options.timeout) : null;
  timer?.unref();
  let interrupts = 0;
  let board: LiveBoard | null = null;
  const detach = signals?.onInterrupt(() => {
    interrupts++;
    if (interrupts > 1) {
      // Stop waiting at once, but still print what finished.
      stopWaiting('canceled', 'interrupted twice');
      finishNow(130);
      return;
    }
    board?.release();
    io.stderr(`\nlightsop: interrupted; waiting up to ${formatSeconds(graceMs)} for running commands to stop (Ctrl-C again to stop waiting)\n`);
    abort(new Error('interrupted'));
  });
  // Node's event loop is empty: no command still pending can ever settle, so each one fails. When
  // there is none, the run itself is stuck (a model call that never answers): print and stop.
  const offIdle = onIdle(() => {
    if (stopWaiting('fail', NEVER_SETTLED) === 0) finishNow(1);
  });

  // On a terminal: a board of every declaration that updates in place when the plan fits on the
  // screen, otherwise (and for english plans, whose declarations are not known yet) a log.
  board = live && declaredNames.length > 0 && declaredNames.length <= Math.min(40, (io.rows || 24) - 3)
    ? new LiveBoard(declaredNames, io, c)
    : null;
  const commandLog: string[] = [];
  const shownNow = (name: string) => {
    const value = interpreter.getValue(name);
    return value ? shownText(value) : '';
  };
  const onEvent = (e: RunEvent) => {
    recorder?.onEvent(e);
    if (e.type === 'command-started') {
      commandLog.push(e.raw);
      trace.run?.commandStarted(e.variable, e.command, e.raw, e.lineNumber);
    } else if (e.type === 'variable-settled' && trace.run) {
      const value = e.status === 'success' ? undefined : interpreter.getValue(e.variable);
      trace.run.commandSettled(e.variable, { status: e.status, reason: value ? dataText(value) : undefined });
    }
    if (!live) return;
    if (board) board.update(e, e.type === 'variable-settled' ? shownNow(e.variable) : undefined);
    else if (e.type === 'command-started') io.stdout(`${c.dim('…')} @${e.variable} ${c.dim(oneLine(e.raw))}\n`);
    else if (e.type === 'variable-settled') io.stdout(`${glyph(e.status, c)} @${e.variable} ${c.dim(oneLine(shownNow(e.variable)))}\n`);
    else if (e.type === 'plan-generated') io.stdout(c.dim(`generated plan (${e.reason}, attempt ${e.attempt}):\n${terminalText(e.code, { multiline: true })}\n`));
  };

  // Progress of a command in flight (an MCP tool's notifications): on its board row, or a log line.
  if (prepared.progress && live) {
    prepared.progress.onProgress = (variable, shown) => {
      if (board) board.progress(variable, shown);
      else io.stdout(`${c.dim('…')} @${variable} ${c.dim(oneLine(shown))}\n`);
    };
  }

  const interpreter = new Interpreter({
    registry,
    input: prepared.input,
    executionMonitor: new UnlimitedExecutionMonitor(),
    llmAgent,
    concurrency: options.concurrency,
    signal: controller.signal,
    // Events only when something reads them: the board or log, the record, the trace, or the
    // commands --json lists should the run stop before it returns (finishNow). Otherwise the
    // interpreter builds no event per command.
    onEvent: live || recorder || trace.run || options.json ? onEvent : undefined,
  });
  const started = Date.now();
  let cleaned = false;
  const cleanUp = () => {
    if (cleaned) return;
    cleaned = true;
    if (timer) clearTimeout(timer);
    if (graceTimer) clearTimeout(graceTimer);
    detach?.();
    offIdle();
    if (prepared.progress) prepared.progress.onProgress = null;
    board?.finish();
  };
  let reported = false;
  /** Prints the variables (JSON or the summary) and the notes; returns the exit code. */
  const report = (commands: readonly string[], aborted: boolean): number => {
    reported = true;
    const declared = interpreter.entries().filter((e) => e.declaration !== null);
    recorder?.finish({ aborted, variables: declared.map((e) => ({ name: e.name, value: e.value })) });
    if (options.json) {
      // The variables as text only for JSON: the summary shows each value its own way.
      const variables: Record<string, { status: string; value: string }> = {};
      for (const e of declared) variables[e.name] = { status: e.value.status, value: dataText(e.value) };
      const failures = declared.filter((e) => e.value.status === 'fail').map((e) => ({ variable: e.name, reason: dataText(e.value) }));
      writeRunJson(io.stdout, { variables: Object.entries(variables), failures, commands, ...(budget ? { usage: budget.toJSON() } : {}) }, escapeJsonText);
    } else {
      for (const piece of summary(declared.map((e) => ({ name: e.name, value: e.value })), Date.now() - started, c, { rows: board === null, columns: io.isTTY ? io.columns || 80 : null, board })) io.stdout(piece);
      if (budget) io.stdout(`${usageLine(budget)}\n`);
    }
    if (budget?.refused) io.stderr(`lightsop: ${budgetNote(budget)}\n`);
    for (const left of leftRunning) io.stderr(`lightsop: @${left.name} ${left.reason}${left.status === 'canceled' ? '; it was left running' : ''}\n`);
    if (aborted) io.stderr(`lightsop: ${timedOut ? `timed out after ${options.timeout} ms` : 'interrupted'}; the results above are what finished\n`);
    return declared.every((e) => e.value.status === 'success') ? 0 : 1;
  };
  let exitingWith: number | null = null;
  /** The spans' flush before the exit of `finishNow`. */
  let finishing: Promise<void> | null = null;
  /** Reports what finished and exits with `code`, without waiting for the run to settle. */
  const finishNow = (code: number) => {
    exitingWith ??= code;
    if (!reported) {
      cleanUp();
      report(commandLog, controller.signal.aborted);
      if (code !== 130) io.stderr('lightsop: the run stopped with nothing left that could finish it; the results above are what finished\n');
    }
    leaveWorkBehind();
    process.exitCode = code;
    // The spans go first, within the flush bound; the process exits either way.
    finishing = endTrace(code, code === 130 ? 'interrupted' : 'stuck').finally(() => exitAfterOutput(code));
  };

  let commands: string[] = [];
  let aborted = false;
  let failedWith: unknown = null;
  try {
    const result = await interpreter.updateCode(text, prepared.analysis ? { analysis: prepared.analysis } : {});
    commands = result.commands;
    aborted = result.aborted;
  } catch (error) {
    // The record keeps what ran; it has no closing line, since the run has no results.
    recorder?.close();
    const fail = (cliError: CliError): never => {
      failedWith = cliError;
      throw cliError;
    };
    if (error instanceof PlanValidationError) {
      // A generated plan that never became valid, or an english revision error.
      fail(new CliError(`${file.display}: ${error.message}`, 1));
    }
    if (error instanceof ConfigurationError) fail(new CliError(error.message, USAGE));
    if (error instanceof PlanGenerationError) {
      if (options.json) io.stdout(jsonLine({ variables: {}, failures: [], commands: [], error: error.message, ...(budget ? { usage: budget.toJSON() } : {}) }) + '\n');
      else if (budget) io.stderr(`${usageLine(budget)}\n`);
      const reason = error instanceof TokenBudgetExceededError ? error.message : `no valid plan was generated: ${error.message}`;
      fail(new CliError(`${file.display}: ${reason}`, 1));
    }
    failedWith = error;
    throw error;
  } finally {
    cleanUp();
    await remote?.close();
    if (failedWith !== null && exitingWith === null) {
      await endTrace(failedWith instanceof CliError ? failedWith.exitCode : USAGE, failedWith instanceof Error ? failedWith.message : 'internal error');
    }
  }
  // The results are already printed and the process is exiting (a second Ctrl-C, a stuck run).
  if (exitingWith !== null) {
    await finishing;
    return exitingWith;
  }
  let code = report(commands, aborted);
  if (recorder?.error) {
    io.stderr(`lightsop: the run record ${terminalText(prepared.recordFile!.shown)} could not be written: ${terminalText(recorder.error.message)}\n`);
    code = USAGE;
  }
  if (prepared.afterReport) code = prepared.afterReport(code);
  // Redis was lost for good: what finished is printed, and the run is an error, never a success.
  const lost = remote?.failure();
  if (lost) {
    io.stderr(`lightsop: ${terminalText(lost.message)}; the results above are what finished\n`);
    await endTrace(USAGE, lost.message);
    return USAGE;
  }
  await endTrace(code, aborted ? (timedOut ? 'timed out' : 'interrupted') : undefined);
  return code;
}

/** The usage line after an english run's summary: what the provider reported, and the budget. */
function usageLine(budget: TokenBudget): string {
  const total = budget.totalTokens;
  return `tokens: ${budget.inputTokens} input, ${budget.outputTokens} output (${total}${budget.maxTokens === null ? '' : ` of ${budget.maxTokens} budgeted`})`;
}

/** Why generation stopped early. */
function budgetNote(budget: TokenBudget): string {
  return `token budget reached (${budget.totalTokens} of ${budget.maxTokens ?? 0} tokens): no further plan generation or revision was requested`;
}

type Colors = ReturnType<typeof pc.createColors>;

function glyph(status: string, c: Colors): string {
  if (status === 'success') return c.green('✓');
  if (status === 'fail') return c.red('✗');
  if (status === 'canceled') return c.yellow('⊘');
  return c.dim('○');
}

/** The width of the `@name` column: the longest name, at most 24 (a loop: a plan can have 200k names). */
function nameColumnWidth(names: readonly string[]): number {
  let width = 0;
  for (const name of names) width = Math.max(width, name.length + 1);
  return Math.min(24, width);
}

/** Rows per piece of the summary: the text of 200k rows is written in parts, never joined whole. */
const SUMMARY_ROWS_PER_CHUNK = 10_000;

const stringify = configureStringify({ bigint: true, circularValue: '[Circular]', deterministic: false });

/**
 * Success data as text output shows it: a string as it is, an object or an array as JSON (cycles
 * and BigInt included), an object with its own text form (a Date, an Error) by that form, and
 * anything else by `String()`. Never throws, whatever the skill returned.
 */
export function showData(data: unknown): string {
  if (typeof data === 'string') return data;
  if (data === null || data === undefined) return '';
  if (typeof data === 'function') return '[function]';
  if (typeof data !== 'object') return textOf(data);
  let text: string | null = null;
  try {
    if (!Array.isArray(data)) text = String(data);
  } catch {
    // No text form (a null-prototype object): JSON below.
  }
  if (text !== null && !/^\[object [^\]]*\]$/.test(text)) return text;
  try {
    return stringify(data) ?? text ?? textOf(data);
  } catch {
    // A getter, a toJSON or a Proxy trap threw.
    return text ?? textOf(data);
  }
}

/** The successful `lastAnswer` row, shown as the run's answer. */
function answerOf(rows: readonly { name: string; value: Value }[]) {
  return rows.find((r) => r.name === 'lastAnswer' && r.value.status === 'success');
}

/** A value in text output: the success data (see `showData`), otherwise the reason. */
function shownText(value: Value): string {
  return value.status === 'success' ? showData(value.data) : dataText(value);
}

/**
 * The summary after a run. Without a terminal the rows are never cut; on a terminal they are cut
 * to its width. Each failure whose reason its row (or the board's) could not show as it is, being
 * cut or spread over lines, is printed in full below the rows.
 */
function summary(rows: { name: string; value: Value }[], ms: number, c: Colors, options: { rows: boolean; columns: number | null; board: LiveBoard | null }): string[] {
  const width = nameColumnWidth(rows.map((r) => r.name));
  const pieces: string[] = [];
  let out: string[] = [];
  // Rows are written in pieces of SUMMARY_ROWS_PER_CHUNK: the text of 200k rows is never joined whole.
  const flush = () => {
    if (out.length > 0) pieces.push(out.join('\n') + '\n');
    out = [];
  };
  const whole = new Set<string>();
  // After a live board the rows are already on the screen: only the answer and the totals follow.
  for (const r of options.rows ? rows : []) {
    const head = `${`@${r.name}`.padEnd(width)}  ${r.value.status.padEnd(9)} `;
    const full = shownText(r.value);
    const shown = oneLine(full, options.columns === null ? Infinity : Math.max(20, options.columns - 3 - head.length));
    if (shown === full) whole.add(r.name);
    out.push(`${glyph(r.value.status, c)} ${head}${shown}`);
    if (out.length >= SUMMARY_ROWS_PER_CHUNK) flush();
  }
  const failed = rows.filter((r) => r.value.status === 'fail' && !(options.board ? options.board.showedWhole(r.name) : whole.has(r.name)));
  if (failed.length > 0) {
    out.push('', c.bold('Failures in full:'));
    for (const r of failed) out.push(`@${r.name}: ${terminalText(dataText(r.value), { multiline: true }).split('\n').join('\n    ')}`);
    if (!answerOf(rows)) out.push('');
  }
  const count = (s: string) => rows.filter((r) => r.value.status === s).length;
  const answer = answerOf(rows);
  if (answer) {
    // The answer is a piece of its own: an answer of hundreds of millions of characters is
    // printed whole and never concatenated with the rows.
    out.push('', c.bold('Answer:'));
    flush();
    pieces.push(terminalText(shownText(answer.value), { multiline: true }), '\n\n');
  }
  out.push(`${rows.length} variable${rows.length === 1 ? '' : 's'}: ${count('success')} succeeded, ${count('fail')} failed, ${count('canceled')} canceled, ${count('undefined')} not run (${ms} ms)`);
  flush();
  return pieces;
}

/**
 * The live view of `lightsop run` on a terminal: one row per declaration (status and value),
 * redrawn in place at most every 50 ms and once more at the end. Rows are cut to the terminal
 * width, so a long value never wraps and the cursor arithmetic stays right.
 */
class LiveBoard {
  private readonly rows = new Map<string, { status: string; text: string; progress?: string }>();
  /** The rows whose last draw showed their whole text: neither cut nor joined from several lines. */
  private readonly whole = new Set<string>();
  private drawn = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly names: readonly string[], private readonly io: Io, private readonly c: Colors) {
    for (const name of names) this.rows.set(name, { status: 'pending', text: '' });
    this.draw();
  }

  /** `shown` is the settled value as text output shows it (the status has its own column). */
  update(e: RunEvent, shown?: string): void {
    if (e.type === 'command-started') this.rows.set(e.variable, { status: 'running', text: e.raw });
    else if (e.type === 'variable-settled' && this.rows.has(e.variable)) {
      const text = shown ?? (e.status === 'success' ? e.value : e.value.startsWith(e.status) ? e.value.slice(e.status.length).replace(/^:/, '') : e.value);
      this.rows.set(e.variable, { status: e.status, text });
    }
    else return;
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.draw();
    }, 50);
  }

  /** The progress of a running row's command (`3/5 (60%)`), shown before its text until it settles. */
  progress(name: string, text: string): void {
    const row = this.rows.get(name);
    if (row?.status !== 'running') return;
    this.rows.set(name, { ...row, progress: text });
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.draw();
    }, 50);
  }

  finish(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.draw();
  }

  /** Whether the board's last draw showed the whole text of that row. */
  showedWhole(name: string): boolean {
    return this.whole.has(name);
  }

  /** Draws once more and leaves the rows on the screen: the next draw starts below other output. */
  release(): void {
    this.finish();
    this.drawn = 0;
  }

  private draw(): void {
    const c = this.c;
    const width = nameColumnWidth(this.names);
    const columns = Math.max(40, (this.io.columns || 80) - 1);
    let out = this.drawn > 0 ? `\x1b[${this.drawn}A` : '';
    for (const name of this.names) {
      const row = this.rows.get(name)!;
      const mark = row.status === 'pending' ? c.dim('·') : row.status === 'running' ? c.cyan('…') : glyph(row.status, c);
      const text = oneLine(row.progress === undefined ? row.text : `[${row.progress}] ${row.text}`, columns);
      const plain = `  ${`@${name}`.padEnd(width)}  ${row.status.padEnd(9)} ${text}`;
      const line = plain.length > columns - 2 ? `${plain.slice(0, columns - 3)}…` : plain;
      if (line === plain && text === row.text) this.whole.add(name);
      else this.whole.delete(name);
      out += `\x1b[2K${mark}${row.status === 'running' || row.status === 'pending' ? c.dim(line) : line}\n`;
    }
    this.drawn = this.names.length;
    this.io.stdout(out);
  }
}
