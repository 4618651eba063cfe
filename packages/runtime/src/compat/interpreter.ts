/**
 * `LightSOPLangInterpreter`: AchillesAgentLib's interpreter API (positional constructor, `ready`,
 * `updateCode`, `getVarValue`, `variables`, ...) as a thin layer over the runtime's `Interpreter`.
 * The semantics are the runtime's; this file only translates the API: argument forms, option
 * names, the registry payload and responder, and the reference's error texts.
 */
import { isEnglishSource, parsePlan } from '@lightsop/core';
import { cancelHeuristic as builtinHeuristic } from '../cancel-heuristic';
import { PlanGenerationError, PlanValidationError } from '../errors';
import { Interpreter, type Failure, type PlanGeneratedEvent } from '../interpreter';
import type { ExecutionMonitor } from '../monitor';
import type { CancelHeuristic, CommandPayload, CommandRegistry, Responder } from '../skills/registry';
import { resolveArguments } from './arguments';
import { firstError, referenceText } from './messages';
import type { LightSOPLangValue } from './values';
import { VariablesView, type LightSOPLangVariable } from './variables';

/** What a command receives, as in the reference (no `signal`: the reference has no abort). */
export interface LightSOPLangPayload {
  command: string;
  args: unknown[];
  /** The command and its arguments joined by spaces. */
  raw: string;
  variable: string;
  /** The variable's entry in `interpreter.variables`. */
  variableState: LightSOPLangVariable | undefined;
  lineNumber: number;
  comment: string;
  commentLines: string[];
}

/** The responder a command receives; its methods may be called detached. */
export interface LightSOPLangResponder {
  success(data?: unknown): LightSOPLangValue;
  fail(reason?: unknown): LightSOPLangValue;
  cancel(reason?: unknown): LightSOPLangValue;
}

export interface LightSOPLangRegistry {
  executeCommand(payload: LightSOPLangPayload, responder: LightSOPLangResponder): unknown;
  listCommands(): unknown;
  autoCancel?: boolean;
  cancelHeuristic?: CancelHeuristic;
}

/** A language model agent: anything with `executePrompt(prompt, options)` returning code. */
export interface LightSOPLangAgent {
  executePrompt(prompt: string, options?: Record<string, unknown>): unknown;
}

export type OnFail = (failures: Failure[]) => void;

export interface LightSOPLangOptions {
  onFail?: OnFail;
  executionMonitor?: ExecutionMonitor | null;
  llmAgent?: LightSOPLangAgent | null;
  llmModel?: string;
  model?: string;
  llmTags?: string[];
  tags?: string[];
  /** Passed to the agent with every prompt; it does not stop commands (as in the reference). */
  llmSignal?: AbortSignal | null;
  signal?: AbortSignal | null;
  reasoningEffort?: string;
  llmInvocationContext?: { userPrompt: string; history?: unknown[] } | null;
  maxLlmaRounds?: number;
  cancelHeuristic?: CancelHeuristic;
  autoCancel?: boolean;
  onPlanGenerated?: (event: PlanGeneratedEvent) => void;
  generateOnly?: boolean;
  input?: unknown;
  [key: string]: unknown;
}

/** `updateCode` metadata. The reference's only key, `preserveEnglish`, marks its own revisions; revisions are internal here. */
export interface UpdateMetadata {
  preserveEnglish?: boolean;
  [key: string]: unknown;
}

const MODEL_FAILED = 'the language model failed: ';
const NO_FINAL = 'LightSOPLang plans generated from #!english must include';

function ensureRegistry(registry: unknown): LightSOPLangRegistry {
  if (!registry || typeof registry !== 'object') throw new TypeError('commandsRegistry must be an object');
  const r = registry as Partial<LightSOPLangRegistry>;
  if (typeof r.executeCommand !== 'function') throw new TypeError('commandsRegistry.executeCommand must be a function');
  if (typeof r.listCommands !== 'function') throw new TypeError('commandsRegistry.listCommands must be a function');
  return registry as LightSOPLangRegistry;
}

/** Responder methods as closures, so that `const { success } = responder` works as in the reference. */
function detachedResponder(responder: Responder): LightSOPLangResponder {
  return {
    success: (data?: unknown) => responder.success(data) as LightSOPLangValue,
    fail: (reason?: unknown) => responder.fail(reason) as LightSOPLangValue,
    cancel: (reason?: unknown) => responder.cancel(reason) as LightSOPLangValue,
  };
}

export class LightSOPLangInterpreter {
  /** The registry commands go through: `assign` is built in unless the registry lists it. */
  readonly commandsRegistry: CommandRegistry;
  /** Called after a run with `[{ variable, reason }]` when variables failed; a no-op by default. */
  onFail: OnFail;
  llmAgent: LightSOPLangAgent | null;
  llmModel: string | null;
  llmTags: string[] | null;
  llmSignal: AbortSignal | null;
  llmReasoningEffort: string | null;
  llmInvocationContext: { userPrompt: string; history?: unknown[] } | null;
  /** Most prompts per english update, the initial one included (default 5). */
  maxLlmaRounds: number;
  readonly executionMonitor: ExecutionMonitor;
  onPlanGenerated: ((event: PlanGeneratedEvent) => void) | null;
  generateOnly: boolean;
  /** The input; `$input` refers to it. `undefined` means none. */
  inputValue: unknown;
  /** Settles when the last update given to `updateCode` (and every one before it) has settled, english revisions included. */
  ready: Promise<void> = Promise.resolve();
  /** Variable name to state (command, arguments, dependencies, dependents, comments, line, value). */
  readonly variables: VariablesView;

  readonly #runtime: Interpreter;
  #chain: Promise<void> = Promise.resolve();
  #version = 0;
  #autoCancel: boolean;
  #heuristic: CancelHeuristic;
  /** Plain code stored by `generateOnly`, which the reference keeps without running it. */
  #storedSource: string | null = null;
  #agentError: unknown = null;
  /** The last plan the model wrote, for the reference's error order. */
  #generated: string | null = null;

  constructor(code: string | null | undefined, commandsRegistry: LightSOPLangRegistry, options?: LightSOPLangOptions);
  constructor(code: string | null | undefined, commandsRegistry: LightSOPLangRegistry, onFail: OnFail, options?: LightSOPLangOptions);
  constructor(code: string | null | undefined, commandsRegistry: LightSOPLangRegistry, inputValue: unknown, onFailOrOptions?: OnFail | LightSOPLangOptions, options?: LightSOPLangOptions);
  constructor(code: unknown, commandsRegistry: unknown, ...rest: unknown[]) {
    const { inputValue, onFail, options } = resolveArguments(rest);
    const registry = ensureRegistry(commandsRegistry);
    const o = options as LightSOPLangOptions;
    const failHandler = onFail ?? o.onFail;
    this.onFail = typeof failHandler === 'function' ? (failHandler as OnFail) : () => {};
    this.llmAgent = o.llmAgent ?? null;
    this.llmModel = typeof o.llmModel === 'string' ? o.llmModel : typeof o.model === 'string' ? o.model : null;
    this.llmTags = Array.isArray(o.llmTags) ? o.llmTags : Array.isArray(o.tags) ? o.tags : null;
    this.llmSignal = o.llmSignal ?? o.signal ?? null;
    this.llmReasoningEffort = typeof o.reasoningEffort === 'string' ? o.reasoningEffort : null;
    this.llmInvocationContext = o.llmInvocationContext ?? null;
    this.maxLlmaRounds = Number.isFinite(o.maxLlmaRounds) ? o.maxLlmaRounds! : 5;
    this.#heuristic = typeof o.cancelHeuristic === 'function'
      ? o.cancelHeuristic
      : typeof registry.cancelHeuristic === 'function' ? registry.cancelHeuristic : builtinHeuristic;
    this.#autoCancel = Boolean(o.autoCancel ?? (typeof registry.autoCancel === 'boolean' ? registry.autoCancel : false));
    this.onPlanGenerated = typeof o.onPlanGenerated === 'function' ? o.onPlanGenerated : null;
    this.generateOnly = Boolean(o.generateOnly ?? false);
    this.inputValue = inputValue !== undefined ? inputValue : (o.input ?? undefined);

    this.commandsRegistry = this.#wrapRegistry(registry);
    const self = this;
    this.#runtime = new Interpreter({
      registry: this.commandsRegistry,
      get input() {
        return self.inputValue;
      },
      onFail: (failures) => self.onFail(failures),
      // The reference replaces any falsy monitor by a default one.
      executionMonitor: (o.executionMonitor || undefined) as ExecutionMonitor | undefined,
      autoCancel: this.#autoCancel,
      cancelHeuristic: this.#heuristic,
      get llmAgent() {
        return self.llmAgent ? self.#agent : null;
      },
      get maxLlmaRounds() {
        return Number.isFinite(self.maxLlmaRounds) ? self.maxLlmaRounds : 5;
      },
      get generateOnly() {
        return Boolean(self.generateOnly);
      },
      get llmInvocationContext() {
        return self.llmInvocationContext ?? undefined;
      },
      onPlanGenerated: (event) => {
        self.#generated = event.code;
        if (typeof self.onPlanGenerated === 'function') self.onPlanGenerated(event);
      },
      onEvent: (event) => {
        if (event.type === 'run-started' || event.type === 'plan-generated') self.#version++;
      },
    });
    this.executionMonitor = this.#runtime.executionMonitor;
    // The reference gives a monitor without statistics an empty getStats().
    if (typeof this.executionMonitor.getStats !== 'function') this.executionMonitor.getStats = () => ({});
    this.variables = new VariablesView(this.#runtime, () => this.#version);
    // Code given to the constructor is applied asynchronously, as in the reference (Q25).
    if (code) void this.updateCode(code as string);
  }

  /** The code that was last applied; for english scripts, the generated plan. */
  get currentSourceCode(): string {
    return this.#storedSource ?? this.#runtime.currentSourceCode;
  }

  get autoCancelEnabled(): boolean {
    return this.#autoCancel;
  }

  set autoCancelEnabled(flag: boolean) {
    this.enableAutoCancel(flag);
  }

  get cancelHeuristic(): CancelHeuristic {
    return this.#heuristic;
  }

  set cancelHeuristic(heuristic: CancelHeuristic) {
    this.enableAutoCancel(this.#autoCancel, heuristic);
  }

  /** Turns automatic cancellation on (by default) or off, optionally with another heuristic. */
  enableAutoCancel(flag = true, heuristic: CancelHeuristic | null = null): void {
    this.#autoCancel = Boolean(flag);
    if (typeof heuristic === 'function') this.#heuristic = heuristic;
    this.#runtime.enableAutoCancel(this.#autoCancel, this.#heuristic);
  }

  /** The public form of a variable's value (`data`, `fail:R`, `undefined[:R]`, `canceled:R`), or undefined for an unknown name. */
  getVarValue(variableName: string): unknown {
    return this.#runtime.getVarValue(variableName);
  }

  /**
   * Applies new code and runs what it needs. Updates are queued; `ready` is replaced by this
   * update's promise, which settles after it and every update before it.
   */
  updateCode(code: string, metadata: UpdateMetadata = {}): Promise<void> {
    void metadata;
    const task = () => this.#apply(code);
    const done = this.#chain.then(task, task);
    this.#chain = done.catch(() => undefined);
    this.ready = done;
    return done;
  }

  /**
   * The reference's internal "run the current plan" that code in the wild calls after it
   * refreshed a value by hand (`variables.get(name).value = createSuccessValue(...)`): queued like
   * an update, it runs what depends on the refreshed values (the runtime's `runAgain`). `ready`
   * becomes its promise.
   */
  _scheduleRun(): Promise<void> {
    const task = () => this.#runAgain();
    const done = this.#chain.then(task, task);
    this.#chain = done.catch(() => undefined);
    this.ready = done;
    return done;
  }

  async #runAgain(): Promise<void> {
    // Plain code stored in generate-only mode was never applied: there is nothing to run.
    if (this.#storedSource !== null) return;
    this.#version++;
    try {
      await this.#runtime.runAgain();
    } catch (error) {
      throw this.#translate(error);
    } finally {
      this.#version++;
    }
  }

  async #apply(code: unknown): Promise<void> {
    if (typeof code !== 'string') throw new TypeError('LightSOPLang code must be a string');
    const english = isEnglishSource(code);
    if (!english && this.generateOnly) {
      // The reference stores any code in generate-only mode without parsing or running it.
      this.#storedSource = code;
      return;
    }
    if (english && this.llmAgent && typeof this.llmAgent.executePrompt !== 'function') {
      throw new Error('LLMAgent must provide executePrompt(promptText)');
    }
    this.#storedSource = null;
    this.#agentError = null;
    this.#generated = null;
    this.#version++;
    try {
      await this.#runtime.updateCode(code);
    } catch (error) {
      throw this.#translate(error);
    } finally {
      this.#version++;
    }
  }

  /** Turns runtime errors into the reference's errors; other errors (monitor halts) pass unchanged. */
  #translate(error: unknown): unknown {
    if (error instanceof PlanValidationError) {
      const first = firstError(error.diagnostics);
      if (!first) return error;
      const { plan } = parsePlan(error.source);
      const text = referenceText(first, plan.declarations, {
        tableOrder: this.#runtime.entries().map((e) => e.name),
        inputSupplied: this.inputValue !== undefined,
      });
      return Object.assign(new Error(text, { cause: error }), { diagnostics: error.diagnostics });
    }
    if (error instanceof PlanGenerationError) {
      if (error.message.startsWith(MODEL_FAILED) && this.#agentError !== null) return this.#agentError;
      if (error.message.startsWith(NO_FINAL) && this.#generated !== null) {
        // The reference parses a generated plan before it looks for a final declaration.
        const { plan, diagnostics } = parsePlan(this.#generated);
        const first = firstError(diagnostics);
        if (first) return Object.assign(new Error(referenceText(first, plan.declarations, null), { cause: error }), { diagnostics });
      }
      return new Error(error.message, { cause: error });
    }
    return error;
  }

  /** The agent the runtime calls: the caller's agent with the reference's prompt options. */
  readonly #agent = {
    executePrompt: async (prompt: string, options: Record<string, unknown> = {}): Promise<string> => {
      const agent = this.llmAgent!;
      try {
        return (await agent.executePrompt(prompt, {
          ...options,
          model: this.llmModel || null,
          tags: this.llmTags,
          reasoningEffort: this.llmReasoningEffort || null,
          signal: this.llmSignal,
        })) as string;
      } catch (error) {
        this.#agentError = error;
        throw error;
      }
    },
  };

  #wrapRegistry(registry: LightSOPLangRegistry): CommandRegistry {
    const variables = () => this.variables;
    return {
      listCommands: () => registry.listCommands(),
      executeCommand: (payload: CommandPayload, responder: Responder) => registry.executeCommand({
        command: payload.command,
        args: payload.args,
        raw: payload.raw,
        variable: payload.variable,
        variableState: variables().get(payload.variable),
        lineNumber: payload.lineNumber,
        comment: payload.comment,
        commentLines: payload.commentLines,
      }, detachedResponder(responder)),
      get autoCancel() {
        return registry.autoCancel;
      },
      get cancelHeuristic() {
        return registry.cancelHeuristic;
      },
    };
  }
}
