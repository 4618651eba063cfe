/**
 * `lightsop run`: execute a plan with a skills module (contract.md, spec 6.13). An invalid plan
 * runs nothing (exit 2); a bad skills module, a missing file or a missing LLM configuration is a
 * one-line error (exit 3). Ctrl-C or --timeout abort cleanly and still print what finished.
 */
import path from 'node:path';
import pc from 'picocolors';
import { analyzePlan, isEnglishSource } from '@lightsop/core';
import {
  ConfigurationError, Interpreter, OpenAiCompatibleAgent, PlanGenerationError, PlanValidationError, UnlimitedExecutionMonitor,
  dataText, resolveLlmSettings, type CommandRegistry, type RunEvent, type Value,
} from '@lightsop/runtime';
import { findConfig } from '../config';
import { CliError } from '../errors';
import { expandPaths, readPlanFile, stripBom } from '../files';
import { openRemoteRun, type RemoteRun } from '../distributed';
import type { Io } from '../io';
import { loadSkills, skillsPathFor } from '../skills';

export interface RunOptions {
  readonly skills?: string;
  readonly input?: string;
  readonly json?: boolean;
  readonly timeout?: number;
  readonly concurrency?: number;
  readonly llmBaseUrl?: string;
  readonly llmModel?: string;
  /** Run the commands on the workers of this Redis (docs/scale-out.md). */
  readonly redis?: string;
  readonly queue?: string;
  readonly reconnectTimeout?: number;
}

const USAGE = 3;

/** A registry for plans run without skills: only the built-in `assign` works. */
const EMPTY_REGISTRY: CommandRegistry = {
  listCommands: () => [],
  executeCommand(payload) {
    throw new Error(`Unknown command ${payload.command}: no skills module was given (--skills or lightsop.config.json)`);
  },
};

/** Parses `--timeout`: seconds, or a number with `ms`, `s` or `m`. */
export function parseDuration(value: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
  if (!m) throw new Error('expected a duration such as 30, 30s, 500ms or 2m');
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

function oneLine(text: string, max = 70): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
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
  let declaredNames: string[] = [];
  if (!english) {
    const analysis = analyzePlan(text, { inputDeclared: inputSupplied });
    declaredNames = [...analysis.symbols.declarations.keys()];
    const errors = analysis.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) {
      if (options.json) {
        io.stdout(JSON.stringify({ diagnostics: errors.map((d) => ({ code: d.code, severity: d.severity, message: d.message, line: d.range.line, column: d.range.column })) }) + '\n');
      } else {
        for (const d of errors) io.stderr(`${file.display}:${d.range.line}:${d.range.column}: error: ${d.message} [${d.code}]\n`);
        io.stderr(`lightsop: ${file.display} is not a valid plan; nothing was run\n`);
      }
      return 2;
    }
  }

  const skillsPath = options.redis ? undefined : skillsPathFor(options.skills, dir, io.cwd);
  let registry = EMPTY_REGISTRY;
  if (skillsPath) {
    const loaded = await loadSkills(skillsPath, USAGE, io.cwd);
    if (!loaded.registry) throw new CliError(`${path.relative(io.cwd, skillsPath) || skillsPath}: run needs a skills module (.mjs or .js) that executes commands; a JSON description only lists them`, USAGE);
    registry = loaded.registry;
  }

  let llmAgent: OpenAiCompatibleAgent | null = null;
  if (english) {
    const settings = resolveLlmSettings({ baseUrl: options.llmBaseUrl, model: options.llmModel }, process.env, findConfig(dir)?.llm);
    if (!settings.baseUrl || !settings.model) {
      throw new CliError(`${file.display} is an english script and needs a language model: pass --llm-base-url and --llm-model, set LIGHTSOP_LLM_BASE_URL and LIGHTSOP_LLM_MODEL, or add "llm" to lightsop.config.json`, USAGE);
    }
    llmAgent = new OpenAiCompatibleAgent({ baseUrl: settings.baseUrl, model: settings.model, apiKey: settings.apiKey });
  }

  if (inputSupplied && /^\s*@input(\s|$)/m.test(text)) {
    io.stderr(`lightsop: warning: ${file.display} declares @input and --input is given; @input takes the input's value and its command does not run\n`);
  }

  // With --redis the commands run on the workers; nothing of the distributed runner loads otherwise.
  const remote: RemoteRun | null = options.redis ? await openRemoteRun({ ...options, redis: options.redis }, io) : null;
  if (remote) registry = remote.registry;

  const live = io.isTTY && !options.json;
  const c = pc.createColors(io.color);
  const controller = new AbortController();
  let timedOut = false;
  const timer = options.timeout ? setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('timeout'));
  }, options.timeout) : null;
  let interrupts = 0;
  let board: LiveBoard | null = null;
  const detach = signals?.onInterrupt(() => {
    interrupts++;
    if (interrupts > 1) process.exit(130);
    board?.release();
    io.stderr('\nlightsop: interrupted; waiting for running commands to settle (Ctrl-C again to quit at once)\n');
    controller.abort(new Error('interrupted'));
  });

  // On a terminal: a board of every declaration that updates in place when the plan fits on the
  // screen, otherwise (and for english plans, whose declarations are not known yet) a log.
  board = live && declaredNames.length > 0 && declaredNames.length <= Math.min(40, (io.rows || 24) - 3)
    ? new LiveBoard(declaredNames, io, c)
    : null;
  const onEvent = live ? (e: RunEvent) => {
    if (board) board.update(e);
    else if (e.type === 'command-started') io.stdout(`${c.dim('…')} @${e.variable} ${c.dim(oneLine(e.raw))}\n`);
    else if (e.type === 'variable-settled') io.stdout(`${glyph(e.status, c)} @${e.variable} ${c.dim(oneLine(e.value))}\n`);
    else if (e.type === 'plan-generated') io.stdout(c.dim(`generated plan (${e.reason}, attempt ${e.attempt}):\n${e.code}\n`));
  } : undefined;

  const interpreter = new Interpreter({
    registry,
    input: options.input,
    executionMonitor: new UnlimitedExecutionMonitor(),
    llmAgent,
    concurrency: options.concurrency,
    signal: controller.signal,
    onEvent,
  });
  const started = Date.now();
  let commands: string[] = [];
  let aborted = false;
  try {
    const result = await interpreter.updateCode(text);
    commands = result.commands;
    aborted = result.aborted;
  } catch (error) {
    if (error instanceof PlanValidationError) {
      // A generated plan that never became valid, or an english revision error.
      throw new CliError(`${file.display}: ${error.message}`, 1);
    }
    if (error instanceof ConfigurationError) throw new CliError(error.message, USAGE);
    if (error instanceof PlanGenerationError) {
      if (options.json) io.stdout(JSON.stringify({ variables: {}, failures: [], commands: [], error: error.message }) + '\n');
      throw new CliError(`${file.display}: no valid plan was generated: ${error.message}`, 1);
    }
    throw error;
  } finally {
    if (timer) clearTimeout(timer);
    detach?.();
    board?.finish();
    await remote?.close();
  }

  const declared = interpreter.entries().filter((e) => e.declaration !== null);
  const variables: Record<string, { status: string; value: string }> = {};
  for (const e of declared) variables[e.name] = { status: e.value.status, value: dataText(e.value) };
  const failures = declared.filter((e) => e.value.status === 'fail').map((e) => ({ variable: e.name, reason: dataText(e.value) }));
  if (options.json) {
    io.stdout(JSON.stringify({ variables, failures, commands }) + '\n');
  } else {
    io.stdout(summary(declared.map((e) => ({ name: e.name, value: e.value })), Date.now() - started, c, { rows: board === null }));
  }
  if (aborted) io.stderr(`lightsop: ${timedOut ? `timed out after ${options.timeout} ms` : 'interrupted'}; the results above are what finished\n`);
  const lost = remote?.failure();
  if (lost) {
    io.stderr(`lightsop: ${lost.message}; the results above are what finished\n`);
    return USAGE;
  }
  return declared.every((e) => e.value.status === 'success') ? 0 : 1;
}

type Colors = ReturnType<typeof pc.createColors>;

function glyph(status: string, c: Colors): string {
  if (status === 'success') return c.green('✓');
  if (status === 'fail') return c.red('✗');
  if (status === 'canceled') return c.yellow('⊘');
  return c.dim('○');
}

function summary(rows: { name: string; value: Value }[], ms: number, c: Colors, options: { rows: boolean }): string {
  const width = Math.min(24, Math.max(0, ...rows.map((r) => r.name.length + 1)));
  // After a live board the rows are already on the screen: only the answer and the totals follow.
  const out = options.rows ? rows.map((r) => `${glyph(r.value.status, c)} ${`@${r.name}`.padEnd(width)}  ${r.value.status.padEnd(9)} ${oneLine(dataText(r.value))}`) : [];
  const count = (s: string) => rows.filter((r) => r.value.status === s).length;
  const answer = rows.find((r) => r.name === 'lastAnswer' && r.value.status === 'success');
  if (answer) out.push('', c.bold('Answer:'), dataText(answer.value), '');
  out.push(`${rows.length} variable${rows.length === 1 ? '' : 's'}: ${count('success')} succeeded, ${count('fail')} failed, ${count('canceled')} canceled, ${count('undefined')} not run (${ms} ms)`);
  return out.join('\n') + '\n';
}

/**
 * The live view of `lightsop run` on a terminal: one row per declaration (status and value),
 * redrawn in place at most every 50 ms and once more at the end. Rows are cut to the terminal
 * width, so a long value never wraps and the cursor arithmetic stays right.
 */
class LiveBoard {
  private readonly rows = new Map<string, { status: string; text: string }>();
  private drawn = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly names: readonly string[], private readonly io: Io, private readonly c: Colors) {
    for (const name of names) this.rows.set(name, { status: 'pending', text: '' });
    this.draw();
  }

  update(e: RunEvent): void {
    if (e.type === 'command-started') this.rows.set(e.variable, { status: 'running', text: e.raw });
    else if (e.type === 'variable-settled' && this.rows.has(e.variable)) {
      // The status has its own column: show the reason without the public form's prefix.
      const text = e.status === 'success' ? e.value : e.value.startsWith(e.status) ? e.value.slice(e.status.length).replace(/^:/, '') : e.value;
      this.rows.set(e.variable, { status: e.status, text });
    }
    else return;
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

  /** Draws once more and leaves the rows on the screen: the next draw starts below other output. */
  release(): void {
    this.finish();
    this.drawn = 0;
  }

  private draw(): void {
    const c = this.c;
    const width = Math.min(24, Math.max(0, ...this.names.map((n) => n.length + 1)));
    const columns = Math.max(40, (this.io.columns || 80) - 1);
    let out = this.drawn > 0 ? `\x1b[${this.drawn}A` : '';
    for (const name of this.names) {
      const row = this.rows.get(name)!;
      const mark = row.status === 'pending' ? c.dim('·') : row.status === 'running' ? c.cyan('…') : glyph(row.status, c);
      const plain = `  ${`@${name}`.padEnd(width)}  ${row.status.padEnd(9)} ${oneLine(row.text, columns)}`;
      const line = plain.length > columns - 2 ? `${plain.slice(0, columns - 3)}…` : plain;
      out += `\x1b[2K${mark}${row.status === 'running' || row.status === 'pending' ? c.dim(line) : line}\n`;
    }
    this.drawn = this.names.length;
    this.io.stdout(out);
  }
}
