/**
 * `lightsop chat`: an agent session in the terminal (contract.md). One prompt per line from
 * standard input (interactively on a TTY); each runs as a turn of a live loop of the session
 * registry: SOP first with the loop fallback, or the loop session with `--mode loop`. Approvals
 * are asked on the TTY (yes / no / always); without a TTY, calls that need approval are denied
 * unless `--approve-all`. An approval shows the whole call, each argument quoted and escaped, and
 * only a line typed after the question answers it. Ctrl-C interrupts the current turn and keeps
 * the session. `--json` prints one JSON object per line. Text from the model, skills and tools is
 * escaped before it reaches the terminal (terminal-text.ts), and the API key is never printed.
 */
import { createInterface, type Interface } from 'node:readline';
import path from 'node:path';
import pc from 'picocolors';
import { CANNOT_COMPLETE } from '@lightsop/core';
import { TokenBudget, withTokenBudget, type CommandRegistry } from '@lightsop/runtime';
import {
  approveAllSupervisor, combineRegistries, createSessionAgent, createSessionRegistry, createStandardSkills, defineAgentLoop, type CommandId,
  type RegistryEvent, type SessionEvent, type ApprovalDecision, type SopPromptResult, type Supervisor, type ToolChoice, type TurnOutcome,
} from '@lightsop/sessions';
import { findConfig } from '../config';
import { CliError } from '../errors';
import type { Io } from '../io';
import { createLlmAgent, resolveLlm, resolveMaxTokens, type LlmFlags } from '../llm';
import { registryWithMcp } from '../mcp';
import { startTracing, type RunTrace } from '../tracing';
import { loadSkills, skillsPathFor } from '../skills';
import { guardIo, hasHiddenCharacters, jsonLine, oneLine, quoteArgument, terminalText } from '../terminal-text';

export interface ChatOptions extends LlmFlags {
  readonly skills?: string;
  readonly mode?: 'sop' | 'loop';
  readonly json?: boolean;
  readonly approveAll?: boolean;
  /** The standard skills (files, shell, fetch); on unless `--no-stdlib`. */
  readonly stdlib?: boolean;
  /** The workspace root for file skills and the session's project root (default: the current folder). */
  readonly root?: string;
  readonly maxPlanAttempts?: number;
  /** Export OpenTelemetry traces (also on with OTEL_EXPORTER_OTLP_ENDPOINT; docs/tracing.md). */
  readonly otel?: boolean;
}

/** The process surface chat needs beyond `Io`, so tests can drive it in-process. */
export interface ChatHost {
  readonly input: NodeJS.ReadableStream;
  /** Standard input is a terminal: show prompts and ask approvals there. */
  readonly interactive: boolean;
  /** Use readline's terminal mode (line editing; Ctrl-C arrives as a readline event). */
  readonly terminal?: boolean;
  readonly output?: NodeJS.WritableStream;
  /** Subscribes to process interrupts (SIGINT); returns the unsubscribe function. */
  onInterrupt(handler: () => void): () => void;
  readonly env: NodeJS.ProcessEnv;
  /** Leaves at once (a second Ctrl-C while a turn ignores cancellation). */
  exit?(code: number): void;
}

const USAGE = 3;

/** Reads lines one at a time; `next` can be cancelled by a signal (an approval that was interrupted). */
class LineReader {
  private readonly lines: string[] = [];
  private readonly waiters: { resolve: (line: string | null) => void; signal?: AbortSignal; onAbort?: () => void }[] = [];
  private ended = false;
  private readonly terminal: boolean;
  readonly rl: Interface;

  constructor(host: ChatHost) {
    this.terminal = Boolean(host.terminal && host.output);
    this.rl = createInterface({ input: host.input, ...(this.terminal ? { output: host.output, terminal: true } : { terminal: false }), crlfDelay: Infinity });
    // Readline redraws its prompt when the edited line is cleared; the chat prints its own.
    this.rl.setPrompt('');
    this.rl.on('line', (line) => this.push(line));
    this.rl.on('close', () => this.end());
  }

  private push(line: string): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve(line);
    } else this.lines.push(line);
  }

  private end(): void {
    this.ended = true;
    for (const w of this.waiters.splice(0)) w.resolve(null);
  }

  next(signal?: AbortSignal): Promise<string | null> {
    if (this.lines.length > 0) return Promise.resolve(this.lines.shift()!);
    if (this.ended || signal?.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter: { resolve: (line: string | null) => void; signal?: AbortSignal; onAbort?: () => void } = { resolve };
      if (signal) {
        waiter.signal = signal;
        waiter.onAbort = () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          resolve(null);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
    });
  }

  /**
   * Drops what was typed before a question, so only a line typed after it can answer: the lines
   * waiting to be read (typed while the turn ran) and, on a terminal, the line being edited.
   * Input that has arrived but not been read yet is read first (one pass of the event loop's I/O
   * phase). Returns what was dropped, so the person can be told.
   */
  async discardTypedAhead(): Promise<string[]> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const dropped = this.lines.splice(0);
    if (this.terminal && this.rl.line !== '') {
      dropped.push(this.rl.line);
      // Ctrl-E then Ctrl-U: to the end of the line, then delete everything before the cursor.
      this.rl.write(null, { ctrl: true, name: 'e' });
      this.rl.write(null, { ctrl: true, name: 'u' });
    }
    return dropped;
  }

  close(): void {
    this.rl.close();
    this.end();
  }
}

function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The call as a person reads it: the raw command of a plan step, or a loop tool's input. */
function describeCall(choice: ToolChoice): string {
  const params = choice.params as { raw?: unknown } | string;
  if (typeof params === 'string') return params;
  if (params && typeof params === 'object' && typeof params.raw === 'string') return params.raw;
  return JSON.stringify(params);
}

/** The status of a settled turn, as `--json` reports it. */
export function turnStatus(outcome: TurnOutcome): { status: string; text: string; extra: Record<string, unknown> } {
  if (outcome.kind === 'interrupted') return { status: 'interrupted', text: outcome.message, extra: {} };
  if (outcome.kind === 'error') return { status: 'error', text: outcome.message, extra: {} };
  const extra: Record<string, unknown> = {};
  if (outcome.kind === 'sop' && outcome.fellBackToLoop) {
    extra.fallback = { from: 'sop', reason: outcome.result.kind === 'failed' ? outcome.result.reason : outcome.result.kind };
  }
  const loop = outcome.kind === 'loop' ? outcome.result : outcome.kind === 'sop' ? outcome.fellBackToLoop : undefined;
  if (loop) {
    const status = loop.kind === 'answer' ? 'answered' : loop.kind === 'tool_failure' || loop.kind === 'limit' ? 'failed' : loop.kind;
    if (loop.kind === 'limit') extra.limit = loop.limit;
    return { status, text: loop.answer, extra };
  }
  const sop = (outcome as { result: SopPromptResult }).result;
  if (sop.kind === 'failed') {
    extra.reason = sop.reason;
    extra.failures = sop.failures;
  }
  return { status: sop.kind, text: asText(sop.answer), extra };
}

export async function chatCommand(options: ChatOptions, rawIo: Io, host: ChatHost): Promise<number> {
  // Every write is redacted (the key, URL credentials); model text is escaped where it is printed.
  const io = guardIo(rawIo);
  const json = options.json === true;
  const c = pc.createColors(io.color && !json);
  const root = path.resolve(io.cwd, options.root ?? '.');
  const config = findConfig(io.cwd);
  const settings = resolveLlm(options, host.env, config, USAGE);
  const { baseUrl, model } = settings;
  if (!baseUrl || !model) {
    throw new CliError('chat needs a language model: pass --llm-base-url and --llm-model, set LIGHTSOP_LLM_BASE_URL and LIGHTSOP_LLM_MODEL, or add "llm" to lightsop.config.json', USAGE);
  }

  // Skills: the module's commands (reserved names dropped), then the standard skills.
  let user: CommandRegistry | null = null;
  const skillsPath = skillsPathFor(options.skills, io.cwd, io.cwd);
  if (skillsPath) {
    const loaded = await loadSkills(skillsPath, USAGE, io.cwd);
    if (!loaded.registry) throw new CliError(`${path.relative(io.cwd, skillsPath) || skillsPath}: chat needs a skills module (.mjs or .js) that executes commands; a JSON description only lists them`, USAGE);
    const named = loaded.commands.commands.filter((c) => c.reserved).map((c) => c.name);
    if (named.length > 0) {
      io.stderr(`lightsop: note: the session provides ${named.join(', ')}; the skills module's own ${named.length === 1 ? 'command is' : 'commands are'} not used\n`);
    }
    // The sessions leave the reserved names out of the surface they offer and provide their own.
    user = loaded.registry;
  }
  // The tools of the config's MCP servers join the module's commands (docs/mcp.md).
  user = await registryWithMcp(user, io.cwd, USAGE);
  const registry = combineRegistries(user, options.stdlib === false ? null : createStandardSkills({ root }));

  const reader = new LineReader(host);
  const supervisor: Supervisor = options.approveAll
    ? approveAllSupervisor
    : host.interactive
      ? terminalSupervisor(reader, json ? (text) => io.stderr(text) : (text) => io.stdout(text), pc.createColors(io.color))
      : {
          async approve(choice) {
            return choice.sideEffects === false
              ? 'approve'
              : { decision: 'deny', reason: 'standard input is not a terminal, so nobody can approve this call (rerun with --approve-all to allow it)' };
          },
        };

  // The session's token budget (--max-tokens, llm.maxTokens) and its traces: a span for the
  // session, one per turn under it, and the turn's model calls, plan steps and tools under that.
  const budget = new TokenBudget(resolveMaxTokens(options, config));
  const tracing = await startTracing(options.otel, host.env, io);
  const sessionTrace = tracing?.startRun('lightsop chat', { 'lightsop.chat.mode': options.mode ?? 'sop' }) ?? null;
  let turnTrace: RunTrace | null = null;
  const toolStarts = new Map<string, number>();
  let tracesEnded = false;
  const endTraces = async (error?: string) => {
    if (!tracing || tracesEnded) return;
    tracesEnded = true;
    turnTrace?.end({}, error);
    sessionTrace?.end({ 'gen_ai.usage.input_tokens': budget.inputTokens, 'gen_ai.usage.output_tokens': budget.outputTokens }, error);
    await tracing.shutdown();
  };
  const agent = createSessionAgent(withTokenBudget(createLlmAgent({ ...settings, baseUrl, model }, io, (call) => (turnTrace ?? sessionTrace)?.modelCall(call)), budget));
  const definition = defineAgentLoop({
    name: 'chat',
    displayName: 'lightsop chat',
    agent,
    model: { name: model },
    registry,
    initialMode: options.mode ?? 'sop',
    sop: options.maxPlanAttempts ? { maxPlanAttempts: options.maxPlanAttempts } : {},
    logger: (message) => io.stderr(`lightsop: ${terminalText(message, { multiline: true })}\n`),
  });
  const sessions = await createSessionRegistry({ definitions: [definition], roots: ['chat'], activeRoot: 'chat', projectRoot: root, supervisor });
  const loopId = sessions.activeLoop()!.id;

  const print = (value: Record<string, unknown>) => io.stdout(jsonLine(value) + '\n');
  const settled = new Map<CommandId, RegistryEvent & { type: 'TurnSettled' }>();
  let wake: (() => void) | null = null;
  sessions.onEvent((event) => {
    if (event.type === 'SessionProgress') {
      traceProgress(event.event);
      renderProgress(event.event);
    } else if (event.type === 'TurnStarted' && json) print({ type: 'turn', regime: event.regime });
    else if (event.type === 'TurnSettled') {
      settled.set(event.commandId, event);
      wake?.();
    }
  });

  function traceProgress(e: SessionEvent): void {
    if (!turnTrace) return;
    if (e.type === 'variable_status') {
      if (e.state === 'running') turnTrace.commandStarted(e.variable, e.command.split(/\s/, 1)[0] ?? e.command, e.command, 0);
      else if (e.state === 'success' || e.state === 'fail' || e.state === 'canceled') turnTrace.commandSettled(e.variable, { status: e.state, reason: e.state === 'success' ? undefined : asText(e.value) });
    } else if (e.type === 'tool_started') toolStarts.set(e.tool, Date.now());
    else if (e.type === 'tool_settled') {
      const startTime = toolStarts.get(e.tool) ?? Date.now();
      toolStarts.delete(e.tool);
      turnTrace.toolCall({ name: e.tool, startTime, endTime: Date.now(), error: e.outcome === 'ok' ? null : e.outcome });
    }
  }

  function renderProgress(e: SessionEvent): void {
    if (json) {
      switch (e.type) {
        case 'plan_generated':
          return print({ type: 'plan', attempt: e.attempt, plan: e.plan });
        case 'plan_rejected':
          return print({ type: 'plan_rejected', attempt: e.attempt, failures: e.failures });
        case 'variable_status':
          return print({ type: 'variable', variable: e.variable, command: e.command, state: e.state, ...(e.value !== undefined ? { value: e.value } : {}) });
        case 'tool_reason':
          return print({ type: 'tool_reason', tool: e.tool, reason: e.reason, step: e.stepIndex });
        case 'approval_resolved':
          return print({ type: 'approval', tool: e.choice.toolName, input: describeCall(e.choice), verdict: e.verdict });
        case 'tool_started':
          return print({ type: 'tool', tool: e.tool, state: 'started', input: typeof e.input === 'string' ? e.input : describeCall({ toolName: e.tool, params: e.input, origin: 'sop' }) });
        case 'tool_settled':
          return print({ type: 'tool', tool: e.tool, state: e.outcome, ...(e.resultRef ? { resultRef: e.resultRef } : {}) });
        case 'history_compressed':
          return print({ type: 'history_compressed', entries: e.compressedFromCount });
        default:
          return;
      }
    }
    switch (e.type) {
      case 'plan_generated':
        io.stdout(c.dim(`plan${e.attempt > 1 ? ` (attempt ${e.attempt})` : ''}:\n${e.plan.split('\n').map((l) => `  ${terminalText(l, { multiline: true })}`).join('\n')}\n`));
        return;
      case 'plan_rejected':
        io.stdout(c.yellow(`plan rejected:\n${e.failures.map((f) => `  - ${oneLine(f.variable, 100)}: ${oneLine(f.reason, 100)}`).join('\n')}\n`));
        return;
      case 'variable_status': {
        const value = oneLine(asText(e.value), 70);
        const name = oneLine(e.variable, 100);
        if (e.state === 'running') io.stdout(`${c.dim('…')} @${name} ${c.dim(oneLine(e.command, 100))}\n`);
        else if (e.state === 'success') io.stdout(`${c.green('✓')} @${name} ${c.dim(value)}\n`);
        else if (e.state === 'fail') io.stdout(`${c.red('✗')} @${name} ${c.dim(value)}\n`);
        else if (e.state === 'canceled') io.stdout(`${c.yellow('⊘')} @${name} ${c.dim(value)}\n`);
        else if (e.state === 'awaiting_input') io.stdout(`${c.cyan('?')} @${name} waiting for you\n`);
        return;
      }
      case 'tool_reason':
        io.stdout(c.dim(`→ ${oneLine(e.reason, 100)}\n`));
        return;
      case 'tool_started':
        if (typeof e.input === 'string') io.stdout(`${c.dim('…')} ${oneLine(e.tool, 100)} ${c.dim(oneLine(e.input, 70))}\n`);
        return;
      case 'tool_settled':
        if (e.resultRef) io.stdout(`${e.outcome === 'ok' ? c.green('✓') : e.outcome === 'denied' ? c.yellow('⊘') : e.outcome === 'needs_input' ? c.cyan('?') : c.red('✗')} ${oneLine(e.tool, 100)} ${c.dim(oneLine(e.resultRef, 100))}\n`);
        return;
      case 'approval_resolved':
        if (e.verdict === 'deny') io.stdout(`${c.yellow('⊘')} ${oneLine(e.choice.toolName, 100)} was denied\n`);
        return;
      case 'history_compressed':
        io.stdout(c.dim(`(older history compressed: ${e.compressedFromCount} entries)\n`));
        return;
      default:
        return;
    }
  }

  let running = false;
  let quitting = false;
  let interrupts = 0;
  const onInterrupt = () => {
    if (running) {
      interrupts++;
      if (interrupts > 1 && host.exit) {
        io.stderr('\nlightsop: quitting\n');
        const exit = host.exit;
        // The spans go first, within the flush bound.
        void endTraces('interrupted').finally(() => exit(130));
        return;
      }
      if (!json) io.stderr(`\n${c.yellow('interrupting the current turn…')} (the session is kept)\n`);
      void sessions.loopController(loopId)?.interrupt({ reason: 'user' });
      return;
    }
    quitting = true;
    if (host.interactive && !json) io.stdout('\n');
    reader.close();
  };
  const detach = host.onInterrupt(onInterrupt);
  reader.rl.on('SIGINT', onInterrupt);

  if (host.interactive && !json) {
    io.stdout(`${c.bold('lightsop chat')} ${c.dim(`${oneLine(model, 200)} at ${oneLine(baseUrl, 200)}, ${options.mode ?? 'sop'} mode. Ctrl-C interrupts a turn; Ctrl-D or /exit quits.`)}\n`);
  }

  let lastStatus: string | null = null;
  let budgetNoted = false;
  try {
    for (;;) {
      if (host.interactive && !json) io.stdout(c.bold('› '));
      const line = await reader.next();
      if (line === null || quitting) break;
      const text = line.trim();
      if (text === '') continue;
      if (host.interactive && (text === '/exit' || text === '/quit')) break;
      running = true;
      interrupts = 0;
      turnTrace = sessionTrace?.child('chat turn', { 'lightsop.chat.mode': options.mode ?? 'sop' }) ?? null;
      const commandId = await sessions.submitToLoop(loopId, { text });
      while (!settled.has(commandId)) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
      running = false;
      const event = settled.get(commandId)!;
      settled.delete(commandId);
      const { status, text: answer, extra } = turnStatus(event.outcome);
      lastStatus = status;
      const ok = status === 'answered' || status === 'awaiting_input' || status === 'plan_only';
      turnTrace?.end({ 'lightsop.turn.status': status }, ok ? undefined : status);
      turnTrace = null;
      const usage = budget.toJSON();
      if (json) {
        // The tokens so far, a line of its own before the answer (which still ends the turn).
        print({ type: 'usage', ...usage });
        print({ type: 'answer', status, text: answer, ...extra });
      }
      else {
        renderAnswer(status, answer, extra);
        if (budget.requests > 0) io.stdout(c.dim(`(tokens so far: ${usage.inputTokens} input, ${usage.outputTokens} output${usage.maxTokens === null ? '' : ` of a budget of ${usage.maxTokens}`})\n`));
      }
      if (budget.refused && !budgetNoted) {
        budgetNoted = true;
        io.stderr(`lightsop: token budget reached (${usage.totalTokens} of ${usage.maxTokens ?? 0} tokens): no further model request is made in this session\n`);
      }
    }
  } finally {
    detach();
    reader.close();
    await sessions.shutdown().catch(() => undefined);
    sessions.dispose();
    await endTraces(lastStatus === null || ['answered', 'awaiting_input', 'plan_only'].includes(lastStatus) ? undefined : `last turn: ${lastStatus}`);
  }

  function renderAnswer(status: string, rawAnswer: string, extra: Record<string, unknown>): void {
    const answer = terminalText(rawAnswer, { multiline: true });
    if (extra.fallback) io.stdout(c.dim('(no valid plan: answered in loop mode)\n'));
    if (status === 'answered') io.stdout(`${answer}\n`);
    else if (status === 'awaiting_input') io.stdout(`${c.cyan('?')} ${answer}\n${c.dim('(your next line answers this)')}\n`);
    else if (status === 'plan_only') io.stdout(c.dim('(plan only; nothing was run)\n'));
    else if (status === 'interrupted') io.stdout(`${c.yellow(answer)}\n`);
    else if (status === CANNOT_COMPLETE) io.stdout(`${c.red('cannot complete:')} ${answer}\n`);
    else io.stdout(`${c.red(`${status}${extra.reason ? ` (${oneLine(String(extra.reason), 200)})` : extra.limit ? ` (${oneLine(String(extra.limit), 200)} limit)` : ''}:`)} ${answer}\n`);
  }

  return lastStatus === null || lastStatus === 'answered' || lastStatus === 'awaiting_input' || lastStatus === 'plan_only' ? 0 : 1;
}

/**
 * What an approval shows: each argument numbered, quoted and escaped (or a loop tool's whole
 * input), never cut, so nothing runs that the person could not read.
 */
function describeInput(params: unknown, mark: (escape: string) => string): { lines: string[]; hidden: boolean } {
  const indent = '       ';
  const args = (params as { args?: unknown } | null)?.args;
  if (params && typeof params === 'object' && Array.isArray(args)) {
    const texts = args.map((a) => asText(a));
    if (texts.length === 0) return { lines: ['  with no arguments'], hidden: false };
    const lines = [`  with ${texts.length} argument${texts.length === 1 ? '' : 's'}:`];
    texts.forEach((t, i) => lines.push(`  ${String(i + 1).padStart(3)}. ${quoteArgument(t, { indent, mark })}`));
    return { lines, hidden: texts.some((t) => hasHiddenCharacters(t)) };
  }
  const text = typeof params === 'string' ? params : JSON.stringify(params, null, 2) ?? String(params);
  return { lines: ['  with this input:', `${indent}${quoteArgument(text, { indent, mark })}`], hidden: hasHiddenCharacters(text) };
}

/**
 * Approvals on the terminal: yes, no (optionally with a reason), or always for this exact call
 * (never offered for a destructive tool, which is asked about every time).
 * The whole call is shown, escaped; lines typed before the question are dropped (and named), so
 * type-ahead never answers a question the person has not seen.
 */
function terminalSupervisor(reader: LineReader, write: (text: string) => void, c: ReturnType<typeof pc.createColors>): Supervisor {
  const mark = (escape: string) => c.inverse(escape);
  // One question at a time: steps that run in parallel would otherwise print their questions
  // together, and the first answer would go to the first question while the last one is in view.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    approve(choice, options) {
      if (choice.sideEffects === false) return Promise.resolve('approve');
      const asked = queue.then(() => ask(choice, options.signal));
      queue = asked.catch(() => undefined);
      return asked;
    },
  };

  async function ask(choice: ToolChoice, signal: AbortSignal): Promise<ApprovalDecision> {
    const dropped = await reader.discardTypedAhead();
    if (signal.aborted) return { decision: 'deny', reason: 'the turn was interrupted' };
    const input = describeInput(choice.params, mark);
    const out: string[] = [];
    if (dropped.length > 0) {
      out.push(c.dim(`(typed before the question, so not taken as an answer: ${dropped.map((d) => quoteArgument(d)).join(', ')})`));
    }
    const step = choice.variable ? ` (plan step @${oneLine(choice.variable, 100)})` : '';
    out.push(`${c.yellow('?')} ${c.bold(oneLine(choice.toolName, 100))} wants to run${step}`);
    for (const line of input.lines) out.push(line);
    if (input.hidden) out.push(c.yellow('  note: the input contains control or invisible characters, shown as escapes such as \\x1b or \\u202e'));
    if (choice.reason) out.push(c.dim(`  reason: ${terminalText(choice.reason, { multiline: true }).replace(/\n/g, '\n          ')}`));
    // A destructive tool (an MCP tool's destructiveHint) is asked about every time: no "always".
    const destructive = choice.destructive === true;
    if (destructive) out.push(c.yellow('  destructive: this tool is asked about every time'));
    write(`${out.join('\n')}\n`);
    for (;;) {
      write(destructive ? '  allow it? [y]es / [n]o: ' : `  allow it? [y]es / [n]o / [a]lways for this exact call: `);
      const line = await reader.next(signal);
      if (line === null) {
        write('\n');
        return { decision: 'deny', reason: signal.aborted ? 'the turn was interrupted' : 'no answer (end of input)' };
      }
      const answer = line.trim();
      const word = answer.toLowerCase().split(/[\s,:]+/)[0] ?? '';
      if (word === 'y' || word === 'yes') return 'approve';
      if (word === 'a' || word === 'always') {
        if (!destructive) return 'alwaysApprove';
        write('  (not "always": a destructive tool is asked about every time)\n');
        continue;
      }
      if (word === 'n' || word === 'no') {
        const reason = answer.replace(/^\S+[\s,:]*/, '').trim();
        return { decision: 'deny', reason: reason || 'denied by the user' };
      }
    }
  }
}
