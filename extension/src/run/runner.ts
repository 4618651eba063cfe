/**
 * Run Plan and Run up to Here: runs the plan of an editor with the runtime's Interpreter, one
 * interpreter per document kept between runs, so that running again after an edit only re-runs
 * what changed and what depends on it (the runtime's incremental update, 6.6). Shows a progress
 * notification with Cancel, logs every step to the output channel and feeds the results store
 * (inline results, Plan Variables view, live graph colours).
 *
 * Skills modules are loaded only in a trusted workspace (skills.ts); the LLM API key for
 * `#!english` plans comes from SecretStorage and is never logged.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import * as vscode from 'vscode';
import { isEnglishSource } from '@lightsop/core';
import {
  ConfigurationError, Interpreter, OpenAiCompatibleAgent, PlanGenerationError, PlanValidationError, UnlimitedExecutionMonitor, dataText,
  type LlmAgent, type RunEvent, type RunRecorder,
} from '@lightsop/runtime';
import { progressText, type McpProgress } from '@lightsop/runtime/mcp';
import { getApiKey } from '../api-key';
import type { PlanFacts } from '../plan-facts';
import { errorLines } from '../plan-outline';
import { displayPositionAt, textDocument } from '../positions';
import { planSettings } from '../settings';
import { diagnosticLine } from './format';
import { loadPlanRegistry } from './plan-skills';
import { oneLine, STATUS_GLYPH, type ResultsStore, type VariableState } from './results';
import { openRunRecorder, recordFileFor, RunHistory } from './run-records';
import { startRunTrace, type OtelLoader, type TracedRun } from './traces';

interface Session {
  readonly interpreter: Interpreter;
  /** Identifies the skills and LLM the interpreter was made with; a change means a new one. */
  readonly key: string;
  running: AbortController | null;
  /** For english scripts, the plan the model wrote last. */
  generated: string | null;
  /** The record of the run in progress (memory, and lightsop.run.recordFile). */
  recorder: RunRecorder | null;
  /** The running run's trace, when traces are on (traces.ts). */
  trace: TracedRun | null;
}

export interface RunOutcome {
  readonly ran: boolean;
  readonly aborted?: boolean;
  readonly counts?: Record<string, number>;
}

export class PlanRunner implements vscode.Disposable {
  private readonly sessions = new Map<string, Session>();
  /** The progress notification of each running document, fed from the interpreter's events. */
  private readonly progressListeners = new Map<string, (e: RunEvent) => void>();
  /** The same notification, fed with the progress of the running document's MCP tool calls. */
  private readonly mcpProgressListeners = new Map<string, (p: McpProgress) => void>();
  private readonly generatedEmitter = new vscode.EventEmitter<string>();
  /** Fires with a document URI when an english script's generated plan changed. */
  readonly onDidGeneratePlan = this.generatedEmitter.event;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly results: ResultsStore,
    private readonly output: vscode.OutputChannel,
    private readonly facts: PlanFacts,
    /** Loads OpenTelemetry (dist/otel.cjs) on the first traced run. */
    private readonly loadOtel: OtelLoader,
    private readonly version: string,
    /** Where every run's record goes (the run timeline reads the last). */
    private readonly history: RunHistory = new RunHistory(),
  ) {}

  dispose(): void {
    for (const s of this.sessions.values()) s.running?.abort(new Error('the extension was deactivated'));
    this.sessions.clear();
    this.generatedEmitter.dispose();
  }

  /** The plan generated for an english script in its last run, if any. */
  generatedPlan(uri: string): string | null {
    return this.sessions.get(uri)?.generated ?? null;
  }

  private log(line: string): void {
    this.output.appendLine(line);
  }

  /**
   * A run's trace when traces are on for the plan at `uri` (`lightsop.run.otel` or the OTLP
   * variables), else null: Run Plan's and Debug Plan's (debug/vscode-debugger.ts) runs alike.
   */
  startTrace(uri: vscode.Uri, name: string, attributes: Record<string, string | number | boolean>, apiKey?: string): Promise<TracedRun | null> {
    return startRunTrace(name, attributes, {
      setting: planSettings(uri).otel,
      env: process.env,
      load: this.loadOtel,
      version: this.version,
      // A skill's error text may quote the stored key (plans that are not english never read it otherwise).
      secrets: async () => [apiKey ?? (await getApiKey(this.secrets))].filter((k): k is string => Boolean(k)),
      warn: (message) => this.log(`[traces] ${message}`),
    });
  }

  /** Runs the plan of `doc`; with `targets`, only those declarations and their dependencies. */
  async run(doc: vscode.TextDocument, targets?: readonly string[]): Promise<RunOutcome> {
    const uri = doc.uri.toString();
    const file = path.basename(doc.uri.fsPath || doc.uri.path);
    if (this.sessions.get(uri)?.running) {
      void vscode.window.showInformationMessage(`LightSOPLang: ${file} is already running; cancel it from its progress notification first.`);
      return { ran: false };
    }
    // The language server says whether the plan has errors (with the skills it checks commands
    // against), before any skills are loaded or a model is asked. Asked fresh: the skills may
    // have changed since the outline of this version was last asked for.
    const outline = await this.facts.outline(doc, true);
    const text = doc.getText().replace(/^\uFEFF/, '');
    // Without the server (it did not start) the interpreter still refuses an invalid plan (its
    // update validates first); only whether the text is an english script is read here.
    const english = outline ? outline.english !== null : isEnglishSource(text);

    // An invalid plan runs nothing (6.2): say so and point at the Problems panel.
    if (outline && !english && outline.errors.length > 0) {
      this.reportInvalid(file, errorLines(file, outline));
      return { ran: false };
    }

    const settings = planSettings(doc.uri);
    // An english script needs its language model first: it writes the plan.
    let llmAgent: OpenAiCompatibleAgent | null = null;
    let apiKey: string | undefined;
    let llmStamp = 'none';
    let apiKeyForRecord: string | undefined;
    if (english) {
      const { baseUrl, model } = settings.llm;
      const envBase = process.env.LIGHTSOP_LLM_BASE_URL;
      const envModel = process.env.LIGHTSOP_LLM_MODEL;
      const base = baseUrl || envBase;
      const mdl = model || envModel;
      if (!base || !mdl) {
        const where = vscode.workspace.isTrusted
          ? 'Set lightsop.llm.baseUrl and lightsop.llm.model (or "llm" in lightsop.config.json).'
          : 'This workspace is not trusted, so the endpoint is only taken from your user settings (lightsop.llm.baseUrl and lightsop.llm.model), never from the workspace: your API key is sent to it.';
        void vscode.window.showErrorMessage(
          `LightSOPLang: ${file} is an #!english script, so a language model writes its plan. ${where}`,
          'Open Settings',
        ).then((pick) => {
          if (pick) void vscode.commands.executeCommand('workbench.action.openSettings', 'lightsop.llm');
        });
        return { ran: false };
      }
      apiKey = await getApiKey(this.secrets);
      apiKeyForRecord = apiKey ?? undefined;
      // The model's calls go to the trace of whichever run of this document is going on.
      llmAgent = new OpenAiCompatibleAgent({ baseUrl: base, model: mdl, apiKey, onCall: (call) => this.sessions.get(uri)?.trace?.modelCall(call) });
      // The key itself is never kept or logged; a hash tells whether it changed.
      llmStamp = `${base}|${mdl}|${apiKey ? createHash('sha256').update(apiKey).digest('hex').slice(0, 12) : 'no-key'}`;
    }

    // Keyed by document, not by run: the interpreter keeps its registry across runs.
    const skills = await loadPlanRegistry(settings.skillsPath, settings.skillsOrigin, settings.configFile, (p) => this.onMcpProgress(uri, p));
    if (!skills.ok) {
      if (skills.kind === 'json') {
        void vscode.window.showErrorMessage(`LightSOPLang: ${skills.message}`);
        return { ran: false };
      }
      this.log(`[run] ${file}: ${skills.message}`);
      if (skills.kind === 'refused') {
        void vscode.window.showWarningMessage(`LightSOPLang: ${skills.message}`, 'Manage Workspace Trust').then((pick) => {
          if (pick) void vscode.commands.executeCommand('workbench.trust.manage');
        });
      } else {
        void vscode.window.showErrorMessage(`LightSOPLang: ${skills.message}`);
      }
      return { ran: false };
    }
    const { registry, note: skillsNote, stamp: skillsStamp } = skills;

    const key = `${skillsStamp}|${llmStamp}`;
    let session = this.sessions.get(uri);
    if (!session || session.key !== key) {
      // Model calls go through the recorder of the run in progress, when there is one.
      const model = llmAgent;
      const recordedAgent: LlmAgent | null = model && {
        executePrompt: (prompt, options) => (fresh.recorder ? fresh.recorder.wrapAgent(model, settings.llm.model).executePrompt(prompt, options) : model.executePrompt(prompt, options)),
      };
      const fresh: Session = {
        interpreter: new Interpreter({
          registry,
          llmAgent: recordedAgent,
          executionMonitor: new UnlimitedExecutionMonitor(),
          onEvent: (e) => this.onEvent(uri, fresh, e),
        }),
        key,
        running: null,
        generated: null,
        recorder: null,
        trace: null,
      };
      if (session) this.log(`[run] ${file}: the skills or the language model changed; starting from a fresh state`);
      session = fresh;
      this.sessions.set(uri, session);
    }

    const controller = new AbortController();
    session.running = controller;
    session.recorder = this.openRecorder(doc, file, text, english, registry.listCommands.bind(registry), apiKeyForRecord);
    const scope = targets?.length ? ` up to @${targets.join(', @')}` : '';
    this.log(`[run] ${new Date().toLocaleTimeString()} ${file}${scope} (${skillsNote})`);
    const started = Date.now();
    session.trace = await this.startTrace(doc.uri, 'lightsop run', { 'lightsop.plan': file, 'lightsop.plan.english': english }, apiKey);
    const trace = session.trace;
    let traceError: string | undefined;
    let traceAttributes: Record<string, string | number | boolean> = {};
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `LightSOPLang: running ${file}${scope}`, cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => controller.abort(new Error('canceled by the user')));
          const listener = (e: RunEvent) => {
            if (e.type === 'command-started') progress.report({ message: `@${e.variable} ${oneLine(e.command, 40)}` });
          };
          this.progressListeners.set(uri, listener);
          this.mcpProgressListeners.set(uri, (p) => progress.report({ message: `@${p.variable} ${oneLine(p.command, 40)} ${progressText(p)}` }));
          try {
            return await session!.interpreter.updateCode(text, { targets: targets ? [...targets] : undefined, signal: controller.signal });
          } finally {
            this.progressListeners.delete(uri);
            this.mcpProgressListeners.delete(uri);
          }
        },
      );
      const states = this.syncStates(uri, session);
      session.recorder?.finish({ aborted: result.aborted, variables: session.interpreter.entries().filter((e) => e.declaration !== null) });
      this.reportRecord(file, session.recorder);
      const counts: Record<string, number> = {};
      for (const s of states) counts[s.status] = (counts[s.status] ?? 0) + 1;
      const ms = Date.now() - started;
      const summary = `${states.length} variable${states.length === 1 ? '' : 's'}: ${counts.success ?? 0} succeeded, ${counts.fail ?? 0} failed, ${counts.canceled ?? 0} canceled, ${counts.undefined ?? 0} not run`;
      this.log(`[run] ${file}: ${result.aborted ? 'canceled; ' : ''}${summary}; ${result.commands.length} command${result.commands.length === 1 ? '' : 's'} ran (${ms} ms)`);
      for (const s of states) this.log(`  ${STATUS_GLYPH[s.status]} @${s.name}  ${s.status}  ${oneLine(s.value, 200)}`);
      traceAttributes = { 'lightsop.run.canceled': result.aborted, 'lightsop.run.failed': counts.fail ?? 0, 'lightsop.run.succeeded': counts.success ?? 0 };
      if (result.aborted) traceError = 'canceled';
      else if ((counts.fail ?? 0) > 0) traceError = `${counts.fail} failed`;
      const message = `LightSOPLang: ${file}${scope}${result.aborted ? ' canceled' : ''}: ${summary}.`;
      const show = (counts.fail ?? 0) > 0 || result.aborted ? vscode.window.showWarningMessage(message, 'Show Output') : vscode.window.showInformationMessage(message, 'Show Output');
      void show.then((pick) => {
        if (pick) this.output.show(true);
      });
      return { ran: true, aborted: result.aborted, counts };
    } catch (error) {
      traceError = error instanceof Error ? error.message : String(error);
      if (error instanceof PlanValidationError) {
        // The interpreter validated `text` (no $input in Run Plan, and its own skills): its
        // positions are converted on that text.
        const positions = textDocument(text);
        this.reportInvalid(file, error.diagnostics.map((d) => diagnosticLine(file, displayPositionAt(positions, d.range.start), d)));
      } else if (error instanceof ConfigurationError || error instanceof PlanGenerationError) {
        this.log(`[run] ${file}: ${error.message}`);
        void vscode.window.showErrorMessage(`LightSOPLang: ${error.message}`);
      } else {
        this.log(`[run] ${file}: ${(error as Error)?.stack ?? String(error)}`);
        void vscode.window.showErrorMessage(`LightSOPLang: running ${file} failed: ${(error as Error)?.message ?? String(error)}`);
      }
      this.syncStates(uri, session);
      session.recorder?.close();
      this.reportRecord(file, session.recorder);
      return { ran: false };
    } finally {
      session.running = null;
      session.recorder = null;
      session.trace = null;
      // The spans leave in the background (bounded); the run's result does not wait for them.
      void trace?.end(traceAttributes, traceError);
    }
  }

  /** The run's recorder: always in memory (the run timeline), and to lightsop.run.recordFile when set. */
  private openRecorder(doc: vscode.TextDocument, file: string, text: string, english: boolean, list: () => unknown, apiKey: string | undefined): RunRecorder | null {
    const base = vscode.workspace.getWorkspaceFolder(doc.uri)?.uri.fsPath ?? (doc.uri.scheme === 'file' ? path.dirname(doc.uri.fsPath) : null);
    const recordFile = recordFileFor(vscode.workspace.getConfiguration('lightsop', doc.uri).get<string>('run.recordFile'), base);
    const planFile = doc.uri.scheme === 'file' ? doc.uri.fsPath : null;
    const options = { planUri: doc.uri.toString(), planFile, file: recordFile, secrets: [apiKey], version: this.version, history: this.history };
    let recorder: RunRecorder;
    try {
      recorder = openRunRecorder(options);
      if (recordFile) this.log(`[run] ${file}: recording to ${recordFile}`);
    } catch (error) {
      const message = (error as Error).message;
      this.log(`[run] ${file}: ${message}`);
      void vscode.window.showWarningMessage(`LightSOPLang: ${message}`);
      recorder = openRunRecorder({ ...options, file: null });
    }
    let commands: unknown = [];
    try {
      commands = list();
    } catch {
      // A registry that cannot list its commands: the record lists none.
    }
    recorder.start({ file: planFile, text, english, commands });
    return recorder;
  }

  private reportRecord(file: string, recorder: RunRecorder | null): void {
    if (recorder?.error) this.log(`[run] ${file}: the run record could not be written: ${recorder.error.message}`);
  }

  private reportInvalid(file: string, lines: string[]): void {
    this.log(`[run] ${file} has errors; nothing was run:`);
    for (const l of lines) this.log(`  ${l}`);
    void vscode.window.showErrorMessage(`LightSOPLang: ${file} has ${lines.length} error${lines.length === 1 ? '' : 's'}; nothing was run.`, 'Show Problems').then((pick) => {
      if (pick) void vscode.commands.executeCommand('workbench.actions.view.problems');
    });
  }

  /** Every declared variable's final state, from the interpreter's table. */
  private syncStates(uri: string, session: Session): VariableState[] {
    const states: VariableState[] = session.interpreter.entries()
      .filter((e) => e.declaration !== null)
      .map((e) => ({ name: e.name, status: e.value.status, value: dataText(e.value) }));
    this.results.reset(uri, states);
    return states;
  }

  /** An MCP tool call's progress: in the notification and the output channel. */
  private onMcpProgress(uri: string, p: McpProgress): void {
    const listener = this.mcpProgressListeners.get(uri);
    if (!listener) return;
    listener(p);
    this.log(`  … @${p.variable} ${progressText(p)}`);
  }

  private onEvent(uri: string, session: Session, e: RunEvent): void {
    session.recorder?.onEvent(e);
    this.progressListeners.get(uri)?.(e);
    session.trace?.onEvent(e, (name) => session.interpreter.getValue(name), dataText);
    switch (e.type) {
      case 'run-started':
        break;
      case 'command-started':
        this.log(`  … @${e.variable} ${oneLine(e.raw, 200)}`);
        this.results.update(uri, [{ name: e.variable, status: 'running', value: '' }]);
        break;
      case 'variable-settled': {
        const value = session.interpreter.getValue(e.variable);
        const text = value ? dataText(value) : e.value;
        this.log(`  ${STATUS_GLYPH[e.status]} @${e.variable} ${e.status} ${oneLine(text, 200)}`);
        this.results.update(uri, [{ name: e.variable, status: e.status, value: text }]);
        break;
      }
      case 'plan-generated':
        session.generated = e.code;
        this.log(`  generated plan (${e.reason}, attempt ${e.attempt}):\n${e.code.trimEnd().replace(/^/gm, '    ')}`);
        this.generatedEmitter.fire(uri);
        break;
      case 'run-finished':
        break;
    }
  }
}
