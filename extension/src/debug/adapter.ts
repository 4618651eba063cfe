/**
 * The plan debugger's adapter: the Debug Adapter Protocol on top of the runtime's incremental
 * `Interpreter` and its `beforeCommand` hook. It runs inside the extension host
 * (`vscode.DebugAdapterInlineImplementation`) but imports nothing from `vscode`: everything that
 * needs the editor (reading the plan, settings, workspace trust, the skills module, the results
 * store) comes through a `DebugHost`, so tests drive this class with DAP messages in-process.
 *
 * One thread ("plan"). A stop is always before a declaration starts; the stack has one frame,
 * that declaration. Scopes: every variable of the plan with its status and value, and the
 * paused declaration's arguments. See stepper.ts for what Continue, Next and Pause do.
 */
import path from 'node:path';
import {
  Breakpoint, DebugSession, ExitedEvent, Handles, InitializedEvent, OutputEvent, Scope, Source, StackFrame, StoppedEvent,
  TerminatedEvent, Thread,
} from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { analyzePlan, isEnglishSource, type Analysis, type Argument } from '@lightsop/core';
import {
  dataText, Interpreter, RunRecorder, UnlimitedExecutionMonitor, type CommandRegistry, type RunEvent, type UpdateResult, type Value,
} from '@lightsop/runtime';
import { displayPositionAt, textDocument } from '../positions';
import { diagnosticLine, oneLine, STATUS_GLYPH } from '../run/format';
import type { VariableState } from '../run/results';
import { placeBreakpoint, planLines, type PlanLines } from './breakpoints';
import { Stepper, type Step, type StopReason } from './stepper';
import { expandableLines, lineChildren, literalPreview, statusPreview } from './values';

/** The `launch` arguments of a `lightsoplang` debug configuration. */
export interface PlanLaunchArguments extends DebugProtocol.LaunchRequestArguments {
  /** The plan (.sop) to debug; the host defaults it to the active editor. */
  program?: string;
  /** A skills module overriding `lightsop.skills` / `lightsop.config.json`. */
  skills?: string;
  /** The value of the implicit variable `input`. */
  input?: unknown;
  /** Pause before the first declaration that starts. */
  stopOnEntry?: boolean;
}

/** The plan a launch debugs, as the host read it. */
export interface PlanSource {
  /** Absolute path of the plan file: the source of frames and breakpoints. */
  readonly path: string;
  /** The document's key in the results store (its URI). */
  readonly uri: string;
  /** The plan text to run (an open editor's current text, else the file's). */
  readonly text: string;
}

/** The commands a launch runs the plan with. */
export interface PlanSkills {
  readonly registry: CommandRegistry;
  /** Where the skills came from, for the Debug Console. */
  readonly note: string;
}

/** A launch refused by the host, with the message to show and optionally a command to offer. */
export class LaunchError extends Error {
  constructor(
    message: string,
    readonly action?: { readonly label: string; readonly command: string },
    /** True when the details are already in the Debug Console. */
    readonly logged = false,
  ) {
    super(message);
    this.name = 'LaunchError';
  }
}

/**
 * What the adapter needs from the editor. A launch reads the plan, checks it, and only then loads
 * the skills, in the order Run Plan does. Methods throw (preferably a LaunchError) to refuse.
 */
export interface DebugHost {
  readPlan(args: PlanLaunchArguments): Promise<PlanSource>;
  loadSkills(args: PlanLaunchArguments, plan: PlanSource): Promise<PlanSkills>;
  /** Variable states as the run goes: the store behind inline results, Plan Variables and the graph. */
  publish(uri: string, states: readonly VariableState[], reset: boolean): void;
  /** A recorder for the run (the lightsop.run.recordFile setting, the run timeline), or null. */
  recorder?(args: PlanLaunchArguments, plan: PlanSource, skills: PlanSkills): RunRecorder | null;
  /**
   * The run's OpenTelemetry trace when traces are on (run/traces.ts: the same spans as Run Plan's),
   * else null. Asked once the skills are loaded; a failure is a line in the Debug Console.
   */
  trace?(args: PlanLaunchArguments, plan: PlanSource): Promise<RunTraceSink | null>;
  /**
   * The run ended (before TerminatedEvent): every declared variable and `input`, with its status
   * and public text; a plan test judges its expectations on them.
   */
  finished?(args: PlanLaunchArguments, outcomes: ReadonlyMap<string, { status: string; text: string }>, aborted: boolean): void;
}

/** What the adapter feeds a traced run (run/traces.ts `TracedRun`). */
export interface RunTraceSink {
  onEvent(e: RunEvent, valueOf: (name: string) => Value | undefined, text: (value: Value) => string): void;
  /** Ends and exports the trace; the session never waits for it. */
  end(attributes: Record<string, string | number | boolean>, error?: string): Promise<void>;
}

export const THREAD_ID = 1;
const FRAME_ID = 1;
const PLAN_SCOPE = 1;
const ARGS_SCOPE = 2;
/** How long Stop waits for commands in flight before answering (they see the abort signal). */
const STOP_GRACE_MS = 3000;
/** Configuration requests normally arrive at once; a client that sends no configurationDone still gets its run. */
const CONFIGURATION_WAIT_MS = 5000;

/** What a variables reference points at. */
type Container =
  | { readonly kind: 'plan' }
  | { readonly kind: 'args' }
  | { readonly kind: 'text'; readonly text: string };

interface Run {
  readonly plan: PlanSource;
  readonly file: string;
  readonly interpreter: Interpreter;
  readonly stepper: Stepper;
  readonly controller: AbortController;
  readonly running: Set<string>;
  readonly started: number;
  readonly args: PlanLaunchArguments;
  readonly recorder: RunRecorder | null;
  readonly trace: RunTraceSink | null;
  done: Promise<void>;
  finished: boolean;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class PlanDebugSession extends DebugSession {
  private lines: PlanLines | null = null;
  /** Breakpoints of the plan by the header line they stop at. */
  private breakpoints = new Map<number, DebugProtocol.Breakpoint[]>();
  private nextBreakpointId = 1;
  private readonly handles = new Handles<Container>(100);
  /** The plan of this session, once the launch has read and checked it. */
  private prepared: PlanSource | null = null;
  private run: Run | null = null;
  private stopRequested = false;
  private configurationDone!: () => void;
  private readonly configured = new Promise<void>((resolve) => {
    this.configurationDone = resolve;
  });

  constructor(private readonly host: DebugHost) {
    super();
    // Lines are the editor's 0-based lines (breakpoints.ts); DebugSession converts them to the client's.
    this.setDebuggerLinesStartAt1(false);
    this.setDebuggerColumnsStartAt1(true);
  }

  /** Never exits the process: this adapter only runs inline, inside the extension host. */
  override shutdown(): void {}

  /** VS Code disposes the adapter when the session ends; a run still going is aborted. */
  override dispose(): void {
    this.stopRequested = true;
    this.abortRun();
    super.dispose();
  }

  private abortRun(): void {
    const run = this.run;
    if (!run || run.finished) return;
    run.controller.abort(new Error('the debug session was stopped'));
    run.stepper.abort();
  }

  // ------------------------------------------------------------ lifecycle

  protected override initializeRequest(response: DebugProtocol.InitializeResponse): void {
    response.body = {
      ...response.body,
      supportsConfigurationDoneRequest: true,
      supportsEvaluateForHovers: true,
      supportsClipboardContext: true,
      supportsTerminateRequest: false,
      supportsRestartRequest: false,
      supportsStepBack: false,
      supportsSetVariable: false,
      supportsConditionalBreakpoints: false,
      supportsHitConditionalBreakpoints: false,
      supportsLogPoints: false,
    };
    this.sendResponse(response);
  }

  protected override configurationDoneRequest(response: DebugProtocol.ConfigurationDoneResponse): void {
    this.configurationDone();
    this.sendResponse(response);
  }

  // DebugSession calls its request handlers without awaiting them: the async ones report their
  // own failure, or a rejection would go unhandled in the extension host and the client would wait.
  protected override launchRequest(response: DebugProtocol.LaunchResponse, args: PlanLaunchArguments): void {
    void this.launch(response, args).catch((error: unknown) => this.requestFailed('launch', response, error));
  }

  protected override disconnectRequest(response: DebugProtocol.DisconnectResponse): void {
    void this.disconnect(response).catch((error: unknown) => this.requestFailed('disconnect', response, error));
  }

  /** Responses already sent (a failure after the response ends the session instead of answering twice). */
  private readonly answered = new WeakSet<DebugProtocol.Response>();

  override sendResponse(response: DebugProtocol.Response): void {
    this.answered.add(response);
    super.sendResponse(response);
  }

  /** An unexpected failure of a request: said in the Debug Console, and the session ends. */
  private requestFailed(request: string, response: DebugProtocol.Response, error: unknown): void {
    const message = `[debug] ${request} failed: ${errorText(error)}`;
    try {
      this.output(`${message}\n`, 'stderr');
      if (this.answered.has(response)) {
        this.stopRequested = true;
        this.abortRun();
        this.sendEvent(new TerminatedEvent());
      } else {
        this.refuse(response, message);
      }
    } catch {
      // The connection to the client is gone: nobody is left to tell.
    }
  }

  private async launch(response: DebugProtocol.LaunchResponse, args: PlanLaunchArguments): Promise<void> {
    let source: PlanSource;
    let skills: PlanSkills;
    let analysis: Analysis;
    try {
      source = await this.host.readPlan(args);
      const file = path.basename(source.path);
      if (isEnglishSource(source.text)) {
        throw new LaunchError(`${file} is an #!english script: a language model writes its plan when it runs, so there are no declarations to stop at. Use Run Plan for it.`);
      }
      // An invalid plan never starts (6.2): the first error, as Run Plan lists them. The text
      // may be a file no editor shows, so it is checked here rather than asked of the language
      // server, with the launch's input; positions are the editor's, as in the Problems panel.
      // The run reuses this analysis (`UpdateOptions.analysis`): the interpreter has the same input.
      analysis = analyzePlan(source.text, { inputDeclared: args.input !== undefined });
      const errors = analysis.diagnostics.filter((d) => d.severity === 'error');
      if (errors.length > 0) {
        const positions = textDocument(source.text);
        const at = (offset: number) => displayPositionAt(positions, offset);
        for (const d of errors) this.output(`${diagnosticLine(source.path, at(d.range.start), d)}\n`, 'stderr');
        const more = errors.length > 1 ? ` (and ${errors.length - 1} more error${errors.length > 2 ? 's' : ''})` : '';
        throw new LaunchError(`${diagnosticLine(file, at(errors[0]!.range.start), errors[0]!)}${more}: nothing was run.`, { label: 'Show Problems', command: 'workbench.actions.view.problems' }, true);
      }
      skills = await this.host.loadSkills(args, source);
    } catch (error) {
      const message = errorText(error);
      // The Debug Console already lists an invalid plan's errors; anything else is said there once.
      if (!(error instanceof LaunchError && error.logged)) this.output(`${message}\n`, 'stderr');
      this.refuse(response, message, error instanceof LaunchError ? error.action : undefined);
      return;
    }
    this.prepared = source;
    this.lines = planLines(source.text);
    // Now that the plan is known, breakpoints can be placed on it.
    this.sendEvent(new InitializedEvent());
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.configured, new Promise<void>((resolve) => { timer = setTimeout(resolve, CONFIGURATION_WAIT_MS); })]);
    clearTimeout(timer);
    // Asked before the response, so that no request finds a run without its trace.
    const trace = this.stopRequested ? null : await this.startTrace(args, source);
    this.sendResponse(response);
    if (!this.stopRequested) this.startRun(source, skills, args, trace, analysis);
    else void trace?.end({ 'lightsop.run.canceled': true }, 'canceled');
  }

  private async startTrace(args: PlanLaunchArguments, plan: PlanSource): Promise<RunTraceSink | null> {
    try {
      return (await this.host.trace?.(args, plan)) ?? null;
    } catch (error) {
      this.output(`[debug] traces are off: ${errorText(error)}\n`, 'stderr');
      return null;
    }
  }

  private async disconnect(response: DebugProtocol.DisconnectResponse): Promise<void> {
    this.stopRequested = true;
    const run = this.run;
    if (run && !run.finished) {
      this.abortRun();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([run.done, new Promise<void>((resolve) => { timer = setTimeout(resolve, STOP_GRACE_MS); })]);
      clearTimeout(timer);
    }
    this.sendResponse(response);
  }

  /** Fails a launch: VS Code shows `message` in a dialog, with `action` as its button. */
  private refuse(response: DebugProtocol.Response, message: string, action?: { label: string; command: string }): void {
    response.success = false;
    response.message = message;
    response.body = {
      error: {
        id: 1,
        // VS Code fills {name} placeholders of `format`; a plan's text may contain braces.
        format: '{message}',
        variables: { message },
        showUser: true,
        ...(action ? { url: `command:${action.command}`, urlLabel: action.label } : {}),
      } satisfies DebugProtocol.Message,
    };
    this.sendResponse(response);
    this.sendEvent(new TerminatedEvent());
  }

  // ------------------------------------------------------------ the run

  private startRun(plan: PlanSource, skills: PlanSkills, args: PlanLaunchArguments, trace: RunTraceSink | null, analysis: Analysis): void {
    const file = path.basename(plan.path);
    const stepper = new Stepper(
      (step) => this.breakpoints.has(this.lineOf(step.variable) ?? -1),
      (step, reason) => this.stopped(step, reason),
      args.stopOnEntry === true,
    );
    const running = new Set<string>();
    let recorder: RunRecorder | null = null;
    try {
      recorder = this.host.recorder?.(args, plan, skills) ?? null;
    } catch (error) {
      this.output(`[debug] the run record cannot be written: ${errorText(error)}\n`, 'stderr');
    }
    const run: Run = {
      plan,
      file,
      stepper,
      running,
      args,
      recorder,
      trace,
      controller: new AbortController(),
      started: Date.now(),
      interpreter: new Interpreter({
        registry: skills.registry,
        input: args.input,
        executionMonitor: new UnlimitedExecutionMonitor(),
        onEvent: (e) => this.onRunEvent(e),
        beforeCommand: stepper.beforeCommand,
      }),
      done: Promise.resolve(),
      finished: false,
    };
    this.run = run;
    this.output(`[debug] ${new Date().toLocaleTimeString()} ${file} (${skills.note})\n`, 'console');
    if (recorder) {
      let commands: unknown = [];
      try {
        commands = skills.registry.listCommands();
      } catch {
        // A registry that cannot list its commands: the record lists none.
      }
      recorder.start({ file: plan.path, text: plan.text, english: false, input: args.input, commands });
    }
    run.done = run.interpreter.updateCode(plan.text, { signal: run.controller.signal, analysis }).then(
      (result) => this.finish(run, result, null),
      (error: unknown) => this.finish(run, null, error),
    );
  }

  private onRunEvent(e: RunEvent): void {
    const run = this.run;
    if (!run) return;
    run.recorder?.onEvent(e);
    run.trace?.onEvent(e, (name) => run.interpreter.getValue(name), dataText);
    switch (e.type) {
      case 'run-started':
        // A fresh interpreter: results of earlier runs no longer hold; everything shows "not run".
        this.host.publish(run.plan.uri, [], true);
        break;
      case 'command-started':
        run.running.add(e.variable);
        this.output(`… @${e.variable} ${oneLine(e.raw, 200)}\n`, 'stdout', this.lineOf(e.variable));
        this.host.publish(run.plan.uri, [{ name: e.variable, status: 'running', value: '' }], false);
        break;
      case 'variable-settled': {
        run.running.delete(e.variable);
        const value = run.interpreter.getValue(e.variable);
        const text = value ? dataText(value) : e.value;
        this.output(`${STATUS_GLYPH[e.status]} @${e.variable} ${e.status} ${oneLine(text, 200)}\n`, 'stdout', this.lineOf(e.variable));
        this.host.publish(run.plan.uri, [{ name: e.variable, status: e.status, value: text }], false);
        run.stepper.settled(e.variable);
        break;
      }
      default:
        break;
    }
  }

  private finish(run: Run, result: UpdateResult | null, error: unknown): void {
    run.finished = true;
    run.running.clear();
    const states = this.states(run);
    this.host.publish(run.plan.uri, states, true);
    const counts: Record<string, number> = {};
    for (const s of states) counts[s.status] = (counts[s.status] ?? 0) + 1;
    if (result) {
      const ms = Date.now() - run.started;
      const summary = `${states.length} variable${states.length === 1 ? '' : 's'}: ${counts.success ?? 0} succeeded, ${counts.fail ?? 0} failed, ${counts.canceled ?? 0} canceled, ${counts.undefined ?? 0} not run`;
      this.output(`[debug] ${run.file}: ${result.aborted ? 'stopped; ' : ''}${summary}; ${result.commands.length} command${result.commands.length === 1 ? '' : 's'} ran (${ms} ms)\n`, 'console');
    } else {
      this.output(`[debug] running ${run.file} failed: ${errorText(error)}\n`, 'stderr');
    }
    const declared = run.interpreter.entries().filter((e) => e.declaration !== null || e.name === 'input');
    if (run.recorder) {
      if (result) run.recorder.finish({ aborted: result.aborted, variables: declared.filter((e) => e.declaration !== null) });
      else run.recorder.close();
      if (run.recorder.error) this.output(`[debug] the run record could not be written: ${run.recorder.error.message}\n`, 'stderr');
    }
    try {
      this.host.finished?.(run.args, new Map(declared.map((e) => [e.name, { status: e.value.status, text: dataText(e.value) }])), result === null || result.aborted);
    } catch (error) {
      this.output(`[debug] ${errorText(error)}\n`, 'stderr');
    }
    if (run.trace) {
      const attributes = { 'lightsop.run.canceled': result?.aborted ?? false, 'lightsop.run.failed': counts.fail ?? 0, 'lightsop.run.succeeded': counts.success ?? 0 };
      const traceError = result === null ? errorText(error) : result.aborted ? 'canceled' : (counts.fail ?? 0) > 0 ? `${counts.fail} failed` : undefined;
      void run.trace.end(attributes, traceError);
    }
    const ok = result !== null && !result.aborted && states.every((s) => s.status === 'success');
    this.sendEvent(new ExitedEvent(ok ? 0 : 1));
    this.sendEvent(new TerminatedEvent());
  }

  /** Every declared variable (and `input`) with its status and public text, in table order. */
  private states(run: Run): VariableState[] {
    return run.interpreter.entries()
      .filter((e) => e.declaration !== null)
      .map((e) => ({ name: e.name, status: run.running.has(e.name) ? 'running' : e.value.status, value: dataText(e.value) }));
  }

  private stopped(step: Step, reason: StopReason): void {
    this.handles.reset();
    const event = new StoppedEvent(reason, THREAD_ID) as DebugProtocol.StoppedEvent;
    event.body.description = `Paused before @${step.variable} (${reason})`;
    event.body.allThreadsStopped = true;
    if (reason === 'breakpoint') {
      const ids = (this.breakpoints.get(this.lineOf(step.variable) ?? -1) ?? []).map((b) => b.id).filter((id): id is number => id !== undefined);
      if (ids.length > 0) event.body.hitBreakpointIds = ids;
    }
    this.sendEvent(event);
  }

  /** The editor line of a variable's declaration in the plan being debugged. */
  private lineOf(variable: string): number | undefined {
    return this.lines?.lineOf.get(variable);
  }

  private output(text: string, category: 'console' | 'stdout' | 'stderr', line?: number): void {
    const event = new OutputEvent(text, category) as DebugProtocol.OutputEvent;
    const file = this.run?.plan.path;
    if (line !== undefined && file) {
      event.body.source = new Source(path.basename(file), this.convertDebuggerPathToClient(file));
      event.body.line = this.convertDebuggerLineToClient(line);
    }
    this.sendEvent(event);
  }

  // ------------------------------------------------------------ breakpoints

  protected override setBreakPointsRequest(response: DebugProtocol.SetBreakpointsResponse, args: DebugProtocol.SetBreakpointsArguments): void {
    const requested = args.breakpoints ?? (args.lines ?? []).map((line) => ({ line }));
    const planPath = this.prepared?.path ?? null;
    const isPlan = planPath !== null && args.source.path !== undefined && samePath(this.convertClientPathToDebugger(args.source.path), planPath);
    const result: DebugProtocol.Breakpoint[] = [];
    if (!isPlan || !this.lines) {
      for (const b of requested) {
        const bp = new Breakpoint(false, b.line) as DebugProtocol.Breakpoint;
        bp.message = planPath ? `Not the plan being debugged (${path.basename(planPath)}).` : 'No plan is being debugged yet.';
        result.push(bp);
      }
      response.body = { breakpoints: result };
      this.sendResponse(response);
      return;
    }
    const byLine = new Map<number, DebugProtocol.Breakpoint[]>();
    const source = new Source(path.basename(planPath!), this.convertDebuggerPathToClient(planPath!));
    for (const b of requested) {
      const place = placeBreakpoint(this.lines, this.convertClientLineToDebugger(b.line));
      const bp = new Breakpoint(place.verified, this.convertDebuggerLineToClient(place.line), undefined, source) as DebugProtocol.Breakpoint;
      bp.id = this.nextBreakpointId++;
      if (place.verified) {
        const list = byLine.get(place.line) ?? [];
        list.push(bp);
        byLine.set(place.line, list);
      } else {
        bp.message = place.message;
      }
      result.push(bp);
    }
    this.breakpoints = byLine;
    response.body = { breakpoints: result };
    this.sendResponse(response);
  }

  protected override setExceptionBreakPointsRequest(response: DebugProtocol.SetExceptionBreakpointsResponse): void {
    response.body = { breakpoints: [] };
    this.sendResponse(response);
  }

  // ------------------------------------------------------------ execution control

  protected override threadsRequest(response: DebugProtocol.ThreadsResponse): void {
    response.body = { threads: [new Thread(THREAD_ID, 'plan')] };
    this.sendResponse(response);
  }

  protected override continueRequest(response: DebugProtocol.ContinueResponse): void {
    this.handles.reset();
    this.run?.stepper.continue();
    response.body = { allThreadsContinued: true };
    this.sendResponse(response);
  }

  protected override nextRequest(response: DebugProtocol.NextResponse): void {
    this.step(response);
  }

  protected override stepInRequest(response: DebugProtocol.StepInResponse): void {
    this.step(response);
  }

  /** A declaration has nothing to step out of: like Next, it runs and the next one pauses. */
  protected override stepOutRequest(response: DebugProtocol.StepOutResponse): void {
    this.step(response);
  }

  private step(response: DebugProtocol.Response): void {
    this.handles.reset();
    this.run?.stepper.next();
    this.sendResponse(response);
  }

  protected override pauseRequest(response: DebugProtocol.PauseResponse): void {
    this.run?.stepper.pause();
    this.sendResponse(response);
  }

  // ------------------------------------------------------------ inspection

  protected override stackTraceRequest(response: DebugProtocol.StackTraceResponse): void {
    const run = this.run;
    const step = run?.stepper.paused ?? null;
    if (!run || !step) {
      response.body = { stackFrames: [], totalFrames: 0 };
      this.sendResponse(response);
      return;
    }
    const source = new Source(run.file, this.convertDebuggerPathToClient(run.plan.path));
    const frame = new StackFrame(FRAME_ID, `@${step.variable} ${step.command}`, source, this.convertDebuggerLineToClient(this.lineOf(step.variable) ?? 0), this.convertDebuggerColumnToClient(1));
    response.body = { stackFrames: [frame], totalFrames: 1 };
    this.sendResponse(response);
  }

  protected override scopesRequest(response: DebugProtocol.ScopesResponse): void {
    const step = this.run?.stepper.paused ?? null;
    const scopes: DebugProtocol.Scope[] = [new Scope('Plan', PLAN_SCOPE, false)];
    if (step) scopes.push(new Scope(`Arguments of @${step.variable}`, ARGS_SCOPE, false));
    response.body = { scopes };
    this.sendResponse(response);
  }

  protected override variablesRequest(response: DebugProtocol.VariablesResponse, args: DebugProtocol.VariablesArguments): void {
    const ref = args.variablesReference;
    const container: Container | undefined = ref === PLAN_SCOPE ? { kind: 'plan' } : ref === ARGS_SCOPE ? { kind: 'args' } : this.handles.get(ref);
    response.body = { variables: container ? this.variablesOf(container) : [] };
    this.sendResponse(response);
  }

  private variablesOf(container: Container): DebugProtocol.Variable[] {
    const run = this.run;
    if (container.kind === 'text') {
      return lineChildren(container.text).map((c) => ({ name: c.name, value: c.value, variablesReference: 0 }));
    }
    if (!run) return [];
    if (container.kind === 'plan') {
      return run.interpreter.entries().map((e) => this.planVariable(run, e.name, dataText(e.value), e.value.status));
    }
    const step = run.stepper.paused;
    const entry = step ? run.interpreter.entries().find((e) => e.name === step.variable) : undefined;
    if (!entry) return [];
    return entry.arguments.map((a, i) => this.argumentVariable(run, a, i));
  }

  /** A variable of the plan: `status · value`, expandable when the value is long or has several lines. */
  private planVariable(run: Run, name: string, text: string, runtimeStatus: string): DebugProtocol.Variable {
    const status = this.statusOf(run, name, runtimeStatus);
    const shown = status === 'paused' || status === 'ready' || status === 'running' ? '' : text;
    const lines = shown ? expandableLines(shown) : null;
    return {
      name,
      value: status === 'paused' ? 'paused · not started yet' : status === 'ready' ? 'ready · waiting for the debugger' : statusPreview(status, shown),
      type: status,
      evaluateName: `$${name}`,
      variablesReference: lines ? this.handles.create({ kind: 'text', text: shown }) : 0,
      presentationHint: { kind: 'data', attributes: ['readOnly'] },
    };
  }

  private argumentVariable(run: Run, a: Argument, i: number): DebugProtocol.Variable {
    if (a.kind === 'reference') {
      const value = run.interpreter.getValue(a.name);
      return { ...this.planVariable(run, a.name, value ? dataText(value) : '', value?.status ?? 'undefined'), name: `$${a.name}` };
    }
    const lines = expandableLines(a.value);
    return {
      name: `#${i + 1}`,
      value: literalPreview(a.value),
      type: 'literal',
      variablesReference: lines ? this.handles.create({ kind: 'text', text: a.value }) : 0,
      presentationHint: { kind: 'data', attributes: ['readOnly', 'rawString'] },
    };
  }

  /** The runtime's status, or what the debugger knows better: running, paused before, ready and held. */
  private statusOf(run: Run, name: string, runtimeStatus: string): string {
    if (run.running.has(name)) return 'running';
    if (run.stepper.paused?.variable === name) return 'paused';
    if (run.stepper.isWaiting(name)) return 'ready';
    return runtimeStatus;
  }

  protected override evaluateRequest(response: DebugProtocol.EvaluateResponse, args: DebugProtocol.EvaluateArguments): void {
    const run = this.run;
    const name = args.expression.trim().replace(/^[$@]/, '');
    const value = run?.interpreter.getValue(name);
    if (!run || !value) {
      response.success = false;
      response.message = run ? `No variable ${name} in ${run.file} (evaluate a variable name, like $${name || 'name'}).` : 'No plan is running.';
      this.sendResponse(response);
      return;
    }
    const text = dataText(value);
    const v = this.planVariable(run, name, text, value.status);
    if (args.context === 'clipboard' || args.context === 'hover' || args.context === 'repl') {
      // The full text: what Copy Value copies and what a hover or the Debug Console shows. A
      // value that is not a success is its status and reason, not a result.
      const status = v.type ?? value.status;
      const full = status === 'success' ? text : status === 'undefined' || status === 'fail' || status === 'canceled' ? `${status} · ${text}` : v.value;
      response.body = { result: full, type: status, variablesReference: 0 };
    } else {
      response.body = { result: v.value, type: v.type, variablesReference: v.variablesReference };
    }
    this.sendResponse(response);
  }
}

function samePath(a: string, b: string): boolean {
  const x = path.resolve(a);
  const y = path.resolve(b);
  return process.platform === 'win32' ? x.toLowerCase() === y.toLowerCase() : x === y;
}
