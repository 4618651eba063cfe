/**
 * `lightsop chat`: an agent session in the terminal (contract.md). One prompt per line from
 * standard input (interactively on a TTY); each runs as a turn of a live loop of the session
 * registry: SOP first with the loop fallback, or the loop session with `--mode loop`. Approvals
 * are asked on the TTY (yes / no / always); without a TTY, calls that need approval are denied
 * unless `--approve-all`. Ctrl-C interrupts the current turn and keeps the session. `--json`
 * prints one JSON object per line. The API key is never printed.
 */
import { createInterface, type Interface } from 'node:readline';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pc from 'picocolors';
import {
  OpenAiCompatibleAgent, RESERVED_NAMES, approveAllSupervisor, combineRegistries, createSessionAgent, createSessionRegistry, createStandardSkills,
  defineAgentLoop, isSkillsMap, listCommandInfos, resolveLlmSettings, type CommandId, type CommandRegistry, type RegistryEvent, type SessionEvent,
  type SopPromptResult, type Supervisor, type ToolChoice, type TurnOutcome,
} from '@lightsop/runtime';
import { findConfig } from '../config';
import { CliError } from '../errors';
import type { Io } from '../io';
import { loadSkills, skillsPathFor } from '../skills';

export interface ChatOptions {
  readonly skills?: string;
  readonly mode?: 'sop' | 'loop';
  readonly json?: boolean;
  readonly approveAll?: boolean;
  readonly llmBaseUrl?: string;
  readonly llmModel?: string;
  /** The standard skills (files, shell, fetch); on unless `--no-stdlib`. */
  readonly stdlib?: boolean;
  /** The workspace root for file skills and the session's project root (default: the current folder). */
  readonly root?: string;
  readonly maxPlanAttempts?: number;
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
const RESERVED = new Set<string>(RESERVED_NAMES);

/** Reads lines one at a time; `next` can be cancelled by a signal (an approval that was interrupted). */
class LineReader {
  private readonly lines: string[] = [];
  private readonly waiters: { resolve: (line: string | null) => void; signal?: AbortSignal; onAbort?: () => void }[] = [];
  private ended = false;
  readonly rl: Interface;

  constructor(host: ChatHost) {
    this.rl = createInterface({ input: host.input, ...(host.terminal && host.output ? { output: host.output, terminal: true } : { terminal: false }), crlfDelay: Infinity });
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

  close(): void {
    this.rl.close();
    this.end();
  }
}

function oneLine(text: string, max = 100): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
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

/** Reads optional `sideEffects` flags from a skills-map module (the adapter keeps only descriptions). */
async function sideEffectFlags(file: string): Promise<Map<string, boolean>> {
  const flags = new Map<string, boolean>();
  try {
    const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
    if (isSkillsMap(mod.default)) {
      for (const [name, entry] of Object.entries(mod.default as Record<string, { sideEffects?: unknown }>)) {
        if (typeof entry.sideEffects === 'boolean') flags.set(name, entry.sideEffects);
      }
    }
  } catch {
    // loadSkills already reported any problem with the module.
  }
  return flags;
}

/** The user's registry without the reserved names (the session provides them) and with side-effect flags. */
function userSurface(registry: CommandRegistry, flags: Map<string, boolean>): CommandRegistry {
  return {
    listCommands: () => listCommandInfos(registry).map((c) => (flags.has(c.name) && c.sideEffects === undefined ? { ...c, sideEffects: flags.get(c.name) } : c)),
    executeCommand: (payload, responder) => registry.executeCommand(payload, responder),
  };
}

export async function chatCommand(options: ChatOptions, io: Io, host: ChatHost): Promise<number> {
  const json = options.json === true;
  const c = pc.createColors(io.color && !json);
  const root = path.resolve(io.cwd, options.root ?? '.');
  const config = findConfig(io.cwd);
  const settings = resolveLlmSettings({ baseUrl: options.llmBaseUrl, model: options.llmModel }, host.env, config?.llm);
  if (!settings.baseUrl || !settings.model) {
    throw new CliError('chat needs a language model: pass --llm-base-url and --llm-model, set LIGHTSOP_LLM_BASE_URL and LIGHTSOP_LLM_MODEL, or add "llm" to lightsop.config.json', USAGE);
  }
  try {
    new URL(settings.baseUrl);
  } catch {
    throw new CliError(`--llm-base-url: ${settings.baseUrl} is not a URL`, USAGE);
  }

  // Skills: the module's commands (reserved names dropped), then the standard skills.
  let user: CommandRegistry | null = null;
  const skillsPath = skillsPathFor(options.skills, io.cwd, io.cwd);
  if (skillsPath) {
    const loaded = await loadSkills(skillsPath, USAGE, io.cwd);
    if (!loaded.registry) throw new CliError(`${path.relative(io.cwd, skillsPath) || skillsPath}: chat needs a skills module (.mjs or .js) that executes commands; a JSON description only lists them`, USAGE);
    let listed: unknown;
    try {
      listed = loaded.registry.listCommands();
    } catch {
      listed = [];
    }
    const named = (Array.isArray(listed) ? listed : [])
      .map((e: { name?: unknown; command?: unknown } | null) => e?.name ?? e?.command)
      .filter((n): n is string => typeof n === 'string' && RESERVED.has(n));
    if (named.length > 0) {
      io.stderr(`lightsop: note: the session provides ${named.join(', ')}; the skills module's own ${named.length === 1 ? 'command is' : 'commands are'} not used\n`);
    }
    user = userSurface(loaded.registry, await sideEffectFlags(loaded.file));
  }
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

  const agent = createSessionAgent(new OpenAiCompatibleAgent({ baseUrl: settings.baseUrl, model: settings.model, apiKey: settings.apiKey }));
  const definition = defineAgentLoop({
    name: 'chat',
    displayName: 'lightsop chat',
    agent,
    model: { name: settings.model },
    registry,
    initialMode: options.mode ?? 'sop',
    sop: options.maxPlanAttempts ? { maxPlanAttempts: options.maxPlanAttempts } : {},
    logger: (message) => io.stderr(`lightsop: ${message}\n`),
  });
  const sessions = await createSessionRegistry({ definitions: [definition], roots: ['chat'], activeRoot: 'chat', projectRoot: root, supervisor });
  const loopId = sessions.activeLoop()!.id;

  const print = (value: Record<string, unknown>) => io.stdout(JSON.stringify(value) + '\n');
  const settled = new Map<CommandId, RegistryEvent & { type: 'TurnSettled' }>();
  let wake: (() => void) | null = null;
  sessions.onEvent((event) => {
    if (event.type === 'SessionProgress') renderProgress(event.event);
    else if (event.type === 'TurnStarted' && json) print({ type: 'turn', regime: event.regime });
    else if (event.type === 'TurnSettled') {
      settled.set(event.commandId, event);
      wake?.();
    }
  });

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
        io.stdout(c.dim(`plan${e.attempt > 1 ? ` (attempt ${e.attempt})` : ''}:\n${e.plan.split('\n').map((l) => `  ${l}`).join('\n')}\n`));
        return;
      case 'plan_rejected':
        io.stdout(c.yellow(`plan rejected:\n${e.failures.map((f) => `  - ${f.variable}: ${oneLine(f.reason)}`).join('\n')}\n`));
        return;
      case 'variable_status': {
        const value = oneLine(asText(e.value), 70);
        if (e.state === 'running') io.stdout(`${c.dim('…')} @${e.variable} ${c.dim(e.command)}\n`);
        else if (e.state === 'success') io.stdout(`${c.green('✓')} @${e.variable} ${c.dim(value)}\n`);
        else if (e.state === 'fail') io.stdout(`${c.red('✗')} @${e.variable} ${c.dim(value)}\n`);
        else if (e.state === 'canceled') io.stdout(`${c.yellow('⊘')} @${e.variable} ${c.dim(value)}\n`);
        else if (e.state === 'awaiting_input') io.stdout(`${c.cyan('?')} @${e.variable} waiting for you\n`);
        return;
      }
      case 'tool_reason':
        io.stdout(c.dim(`→ ${oneLine(e.reason)}\n`));
        return;
      case 'tool_started':
        if (typeof e.input === 'string') io.stdout(`${c.dim('…')} ${e.tool} ${c.dim(oneLine(e.input, 70))}\n`);
        return;
      case 'tool_settled':
        if (e.resultRef) io.stdout(`${e.outcome === 'ok' ? c.green('✓') : e.outcome === 'denied' ? c.yellow('⊘') : e.outcome === 'needs_input' ? c.cyan('?') : c.red('✗')} ${e.tool} ${c.dim(e.resultRef)}\n`);
        return;
      case 'approval_resolved':
        if (e.verdict === 'deny') io.stdout(`${c.yellow('⊘')} ${e.choice.toolName} was denied\n`);
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
        host.exit(130);
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
    io.stdout(`${c.bold('lightsop chat')} ${c.dim(`${settings.model} at ${settings.baseUrl}, ${options.mode ?? 'sop'} mode. Ctrl-C interrupts a turn; Ctrl-D or /exit quits.`)}\n`);
  }

  let lastStatus: string | null = null;
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
      const commandId = await sessions.submitToLoop(loopId, { text });
      while (!settled.has(commandId)) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
      running = false;
      const event = settled.get(commandId)!;
      settled.delete(commandId);
      const { status, text: answer, extra } = turnStatus(event.outcome);
      lastStatus = status;
      if (json) print({ type: 'answer', status, text: answer, ...extra });
      else renderAnswer(status, answer, extra);
    }
  } finally {
    detach();
    reader.close();
    await sessions.shutdown().catch(() => undefined);
    sessions.dispose();
  }

  function renderAnswer(status: string, answer: string, extra: Record<string, unknown>): void {
    if (extra.fallback) io.stdout(c.dim('(no valid plan: answered in loop mode)\n'));
    if (status === 'answered') io.stdout(`${answer}\n`);
    else if (status === 'awaiting_input') io.stdout(`${c.cyan('?')} ${answer}\n${c.dim('(your next line answers this)')}\n`);
    else if (status === 'plan_only') io.stdout(c.dim('(plan only; nothing was run)\n'));
    else if (status === 'interrupted') io.stdout(`${c.yellow(answer)}\n`);
    else if (status === 'cannot_complete') io.stdout(`${c.red('cannot complete:')} ${answer}\n`);
    else io.stdout(`${c.red(`${status}${extra.reason ? ` (${String(extra.reason)})` : extra.limit ? ` (${String(extra.limit)} limit)` : ''}:`)} ${answer}\n`);
  }

  return lastStatus === null || lastStatus === 'answered' || lastStatus === 'awaiting_input' || lastStatus === 'plan_only' ? 0 : 1;
}

/** Approvals on the terminal: yes, no (optionally with a reason), or always for this exact call. */
function terminalSupervisor(reader: LineReader, write: (text: string) => void, c: ReturnType<typeof pc.createColors>): Supervisor {
  return {
    async approve(choice, { signal }) {
      if (choice.sideEffects === false) return 'approve';
      write(`${c.yellow('?')} ${c.bold(choice.toolName)} wants to run: ${oneLine(describeCall(choice), 200)}\n`);
      if (choice.reason) write(c.dim(`  reason: ${oneLine(choice.reason, 200)}\n`));
      for (;;) {
        write(`  allow it? [y]es / [n]o / [a]lways for this exact call: `);
        const line = await reader.next(signal);
        if (line === null) {
          write('\n');
          return { decision: 'deny', reason: signal.aborted ? 'the turn was interrupted' : 'no answer (end of input)' };
        }
        const answer = line.trim();
        const word = answer.toLowerCase().split(/[\s,:]+/)[0] ?? '';
        if (word === 'y' || word === 'yes') return 'approve';
        if (word === 'a' || word === 'always') return 'alwaysApprove';
        if (word === 'n' || word === 'no') {
          const reason = answer.replace(/^\S+[\s,:]*/, '').trim();
          return { decision: 'deny', reason: reason || 'denied by the user' };
        }
      }
    },
  };
}
