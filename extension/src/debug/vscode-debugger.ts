/**
 * The plan debugger's VS Code side: the `lightsoplang` debug type (configuration resolution and
 * an inline adapter per session), the "LightSOPLang: Debug Plan" command, and the host that
 * gives the adapter the plan text, its skills (resolved exactly as Run Plan resolves them, with
 * the same workspace-trust refusal) and the results store (inline results, Plan Variables view,
 * graph colours).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import * as vscode from 'vscode';
import { DISPLAY_NAME, isPlanDocument } from '../language';
import type { RunRecorder } from '@lightsop/runtime';
import { loadPlanRegistry } from '../run/plan-skills';
import type { ResultsStore } from '../run/results';
import { openRunRecorder, recordFileFor, type RunHistory } from '../run/run-records';
import { planSettings } from '../settings';
import type { DebuggedTests } from '../testing/debugged-tests';
import { LaunchError, PlanDebugSession, type DebugHost, type PlanLaunchArguments, type PlanSkills, type PlanSource, type RunTraceSink } from './adapter';

/** Starts a run's trace, or null when traces are off (PlanRunner.startTrace). */
export type TraceStarter = (uri: vscode.Uri, name: string, attributes: Record<string, string | number | boolean>) => Promise<RunTraceSink | null>;

export const DEBUG_TYPE = 'lightsoplang';
export const DEBUG_COMMAND = 'lightsop.debugPlan';

function sameFile(a: string, b: string): boolean {
  const x = path.resolve(a);
  const y = path.resolve(b);
  return process.platform === 'win32' ? x.toLowerCase() === y.toLowerCase() : x === y;
}

/** The editor's side of a debug session. */
export class VsCodeDebugHost implements DebugHost {
  constructor(
    private readonly results: ResultsStore,
    private readonly history: RunHistory,
    private readonly version: string,
    private readonly tests: DebuggedTests,
    /** Run Plan's traces (PlanRunner.startTrace): on with `lightsop.run.otel` or the OTLP variables. */
    private readonly startTrace: TraceStarter,
  ) {}

  async readPlan(args: PlanLaunchArguments): Promise<PlanSource> {
    // A plan test (the Test Explorer's Debug profile) runs the plan text its runner read.
    const test = this.tests.of(args);
    if (test) return { path: test.planPath, uri: vscode.Uri.file(test.planPath).toString(), text: test.prepared.planText };
    const program = typeof args.program === 'string' ? args.program.trim() : '';
    if (!program) throw new LaunchError('No plan to debug: set "program" in the launch configuration to a .sop file, or open a plan and run "LightSOPLang: Debug Plan".');
    const file = path.resolve(program);
    // An open editor's text, unsaved edits included, as Run Plan runs it.
    const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && sameFile(d.uri.fsPath, file));
    let text: string;
    if (open) {
      text = open.getText();
    } else {
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        throw new LaunchError(`Cannot read the plan ${file}: ${(error as Error).message}`);
      }
    }
    return { path: file, uri: (open?.uri ?? vscode.Uri.file(file)).toString(), text: text.replace(/^\uFEFF/, '') };
  }

  async loadSkills(args: PlanLaunchArguments, plan: PlanSource) {
    // A plan test's commands are answered by its mocks (and record, and skills when it may).
    const test = this.tests.of(args);
    if (test) return { registry: test.prepared.registry, note: test.note };
    const uri = vscode.Uri.parse(plan.uri);
    const settings = planSettings(uri);
    let skillsPath = settings.skillsPath;
    let origin = settings.skillsOrigin;
    const override = typeof args.skills === 'string' ? args.skills.trim() : '';
    if (override) {
      const base = vscode.workspace.getWorkspaceFolder(uri)?.uri.fsPath ?? path.dirname(plan.path);
      skillsPath = path.resolve(base, override);
      origin = 'the "skills" attribute of the launch configuration';
    }
    const skills = await loadPlanRegistry(skillsPath, origin, settings.configFile);
    if (!skills.ok) {
      throw new LaunchError(skills.message, skills.kind === 'refused' ? { label: 'Manage Workspace Trust', command: 'workbench.trust.manage' } : undefined);
    }
    return { registry: skills.registry, note: skills.note };
  }

  publish(uri: string, states: Parameters<ResultsStore['update']>[1], reset: boolean): void {
    if (reset) this.results.reset(uri, states);
    else this.results.update(uri, states);
  }

  /** Every run is recorded for the run timeline; a plan's (not a test's) also to lightsop.run.recordFile. */
  recorder(args: PlanLaunchArguments, plan: PlanSource, _skills: PlanSkills): RunRecorder | null {
    const uri = vscode.Uri.parse(plan.uri);
    const options = { planUri: plan.uri, planFile: plan.path, file: null as string | null, version: this.version, history: this.history };
    if (!this.tests.of(args)) {
      const base = vscode.workspace.getWorkspaceFolder(uri)?.uri.fsPath ?? path.dirname(plan.path);
      options.file = recordFileFor(vscode.workspace.getConfiguration('lightsop', uri).get<string>('run.recordFile'), base);
    }
    try {
      return openRunRecorder(options);
    } catch (error) {
      void vscode.window.showWarningMessage(`${DISPLAY_NAME}: ${(error as Error).message}`);
      return openRunRecorder({ ...options, file: null });
    }
  }

  /** A plan's run is traced as Run Plan's is (docs/tracing.md); a plan test's is not, as `lightsop test`'s is not. */
  trace(args: PlanLaunchArguments, plan: PlanSource): Promise<RunTraceSink | null> {
    if (this.tests.of(args)) return Promise.resolve(null);
    return this.startTrace(vscode.Uri.parse(plan.uri), 'lightsop run', { 'lightsop.plan': path.basename(plan.path), 'lightsop.plan.english': false, 'lightsop.debug': true });
  }

  finished(args: PlanLaunchArguments, outcomes: ReadonlyMap<string, { status: string; text: string }>, aborted: boolean): void {
    this.tests.of(args)?.finished(outcomes, aborted);
  }
}

/** Fills in a configuration: F5 without launch.json, or one without `program`, debugs the active plan. */
class PlanConfigurationProvider implements vscode.DebugConfigurationProvider {
  resolveDebugConfiguration(_folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): vscode.DebugConfiguration | undefined {
    const editor = vscode.window.activeTextEditor;
    const active = editor && isPlanDocument(editor.document) ? editor.document : undefined;
    if (!config.type && !config.request && !config.name) {
      if (!active) {
        void vscode.window.showInformationMessage(`${DISPLAY_NAME}: open a .sop plan to debug it.`);
        return undefined;
      }
      config.type = DEBUG_TYPE;
      config.name = 'Debug Plan';
      config.request = 'launch';
    }
    if (!config.program) {
      if (!active) {
        void vscode.window.showInformationMessage(`${DISPLAY_NAME}: open a .sop plan to debug, or set "program" in the launch configuration.`);
        return undefined;
      }
      if (active.uri.scheme !== 'file') {
        void vscode.window.showInformationMessage(`${DISPLAY_NAME}: save the plan to a file to debug it.`);
        return undefined;
      }
      config.program = active.uri.fsPath;
    }
    return config;
  }
}

/** Starts debugging a plan document (the Debug Plan command, its title button and CodeLens). */
export async function debugPlan(doc: vscode.TextDocument): Promise<boolean> {
  if (doc.uri.scheme !== 'file') {
    void vscode.window.showInformationMessage(`${DISPLAY_NAME}: save the plan to a file to debug it.`);
    return false;
  }
  return vscode.debug.startDebugging(vscode.workspace.getWorkspaceFolder(doc.uri), {
    type: DEBUG_TYPE,
    name: `Debug ${path.basename(doc.uri.fsPath)}`,
    request: 'launch',
    program: doc.uri.fsPath,
  });
}

/** Registers the debug type; every session gets its own inline adapter and interpreter. */
export function registerPlanDebugger(results: ResultsStore, history: RunHistory, version: string, tests: DebuggedTests, startTrace: TraceStarter): vscode.Disposable[] {
  const host = new VsCodeDebugHost(results, history, version, tests, startTrace);
  return [
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, new PlanConfigurationProvider()),
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, {
      createDebugAdapterDescriptor: () => new vscode.DebugAdapterInlineImplementation(new PlanDebugSession(host)),
    }),
  ];
}
