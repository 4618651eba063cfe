/**
 * Plan tests in VS Code's Test Explorer (the Testing API): every `*.sop.test.json` of the
 * workspace is an item with one child per test, placed at the test in the file; files are watched
 * (created, changed, deleted). The Run profile runs tests with the CLI's runner
 * (`packages/cli/src/plan-tests/runner.ts`, the same code as `lightsop test`), the Debug profile
 * runs a test's plan under the plan debugger with the test's mocks (debugged-tests.ts) and judges
 * it with the same runner's `check`. Failures are shown at the expectation's line, with expected
 * and actual for the diff view. In an untrusted workspace a test with `"skills": true` is refused
 * (it would import the workspace's skills module); mock-only tests run.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import type { CommandRegistry } from '@lightsop/runtime';
import {
  TEST_FILE_SUFFIX, TestFileError, prepareTest, readTestFile, readTestPlan, runTest, type PlanTestHost, type TestCaseResult, type TestFile,
} from '../../../packages/cli/src/plan-tests/runner';
import { DEBUG_TYPE } from '../debug/vscode-debugger';
import { DISPLAY_NAME } from '../language';
import { editorPositionOfLineColumn } from '../positions';
import { loadPlanRegistry } from '../run/plan-skills';
import { planSettings } from '../settings';
import { TEST_LAUNCH_KEY, type DebuggedTests } from './debugged-tests';
import { testMessages, trustRefusal } from './test-results';

export const TEST_CONTROLLER_ID = 'lightsop.planTests';
const GLOB = `**/*${TEST_FILE_SUFFIX}`;
const EXCLUDE = '**/node_modules/**';

/** What a test item stands for. */
type ItemData = { readonly kind: 'file'; readonly uri: vscode.Uri } | { readonly kind: 'test'; readonly uri: vscode.Uri; readonly index: number };

export class PlanTestExplorer implements vscode.Disposable {
  readonly controller: vscode.TestController;
  private readonly data = new WeakMap<vscode.TestItem, ItemData>();
  private readonly subscriptions: vscode.Disposable[] = [];
  private discovered: Promise<void> | null = null;

  constructor(private readonly debugged: DebuggedTests, private readonly output: vscode.OutputChannel) {
    this.controller = vscode.tests.createTestController(TEST_CONTROLLER_ID, `${DISPLAY_NAME} plan tests`);
    this.controller.resolveHandler = async (item) => {
      if (!item) await this.discover();
      else {
        const d = this.data.get(item);
        if (d?.kind === 'file') this.parse(d.uri);
      }
    };
    this.controller.refreshHandler = async () => {
      this.discovered = null;
      await this.discover();
    };
    this.controller.createRunProfile('Run', vscode.TestRunProfileKind.Run, (request, token) => this.run(request, token, false), true);
    this.controller.createRunProfile('Debug', vscode.TestRunProfileKind.Debug, (request, token) => this.run(request, token, true), true);
    const watcher = vscode.workspace.createFileSystemWatcher(GLOB);
    this.subscriptions.push(
      watcher,
      watcher.onDidCreate((uri) => this.parse(uri)),
      watcher.onDidChange((uri) => this.parse(uri)),
      watcher.onDidDelete((uri) => this.controller.items.delete(uri.toString())),
      vscode.workspace.onDidSaveTextDocument((doc) => {
        if (doc.uri.fsPath.endsWith(TEST_FILE_SUFFIX)) this.parse(doc.uri);
      }),
    );
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.controller.dispose();
  }

  /** Finds every test file of the workspace (once; the watcher keeps the list current). */
  discover(): Promise<void> {
    this.discovered ??= (async () => {
      const files = await vscode.workspace.findFiles(GLOB, EXCLUDE);
      const seen = new Set<string>();
      for (const uri of files) {
        seen.add(uri.toString());
        this.parse(uri);
      }
      this.controller.items.forEach((item) => {
        if (!seen.has(item.id)) this.controller.items.delete(item.id);
      });
    })();
    return this.discovered;
  }

  /** The folder a test file's paths are shown relative to: its workspace folder. */
  private cwdOf(uri: vscode.Uri): string {
    return vscode.workspace.getWorkspaceFolder(uri)?.uri.fsPath ?? path.dirname(uri.fsPath);
  }

  /** (Re)reads a test file into its item and children; an unusable file shows its error. */
  parse(uri: vscode.Uri): TestFile | null {
    if (uri.scheme !== 'file') return null;
    const cwd = this.cwdOf(uri);
    let item = this.controller.items.get(uri.toString());
    if (!item) {
      item = this.controller.createTestItem(uri.toString(), path.relative(cwd, uri.fsPath) || path.basename(uri.fsPath), uri);
      this.data.set(item, { kind: 'file', uri });
      this.controller.items.add(item);
    }
    let file: TestFile;
    try {
      file = readTestFile(uri.fsPath, cwd);
    } catch (error) {
      item.error = errorMessage(error);
      item.children.replace([]);
      return null;
    }
    item.error = undefined;
    const children: vscode.TestItem[] = [];
    for (const t of file.tests) {
      const child = this.controller.createTestItem(`${uri.toString()}#${t.index}:${t.name}`, t.name, uri);
      child.range = this.rangeOf(uri, t.line, t.column);
      this.data.set(child, { kind: 'test', uri, index: t.index });
      children.push(child);
    }
    item.children.replace(children);
    return file;
  }

  private rangeOf(uri: vscode.Uri, line: number, column: number): vscode.Range {
    const p = editorPositionOfLineColumn(this.textOf(uri.fsPath) ?? '', line, column);
    const pos = new vscode.Position(p.line, p.character);
    return new vscode.Range(pos, pos);
  }

  /** A file's current text: an open editor's, else the disk's. */
  private textOf(file: string): string | null {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === file);
    if (open) return open.getText();
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return null;
    }
  }

  /** The runner's host: paths relative to the workspace folder, skills as Run Plan loads them. */
  private host(cwd: string): PlanTestHost {
    return {
      cwd,
      async skills(planDir: string): Promise<CommandRegistry | { problem: string }> {
        const settings = planSettings(vscode.Uri.file(path.join(planDir, 'plan.sop')));
        if (!settings.skillsPath) return { problem: 'no skills module: set lightsop.skills or name one in lightsop.config.json' };
        const loaded = await loadPlanRegistry(settings.skillsPath, settings.skillsOrigin, settings.configFile);
        return loaded.ok ? loaded.registry : { problem: loaded.message };
      },
    };
  }

  private async run(request: vscode.TestRunRequest, token: vscode.CancellationToken, debug: boolean): Promise<void> {
    await this.discover();
    const run = this.controller.createTestRun(request);
    const excluded = new Set((request.exclude ?? []).map((i) => i.id));
    // The tests to run, grouped by file, in order.
    const byFile = new Map<string, { uri: vscode.Uri; items: { item: vscode.TestItem; index: number }[] }>();
    const add = (item: vscode.TestItem) => {
      if (excluded.has(item.id)) return;
      const d = this.data.get(item);
      if (!d) return;
      if (d.kind === 'file') {
        this.parse(d.uri);
        item.children.forEach(add);
        if (item.error) run.errored(item, new vscode.TestMessage(typeof item.error === 'string' ? item.error : item.error.value));
        return;
      }
      const group = byFile.get(d.uri.toString()) ?? { uri: d.uri, items: [] };
      if (!group.items.some((x) => x.item === item)) group.items.push({ item, index: d.index });
      byFile.set(d.uri.toString(), group);
    };
    if (request.include) request.include.forEach(add);
    else this.controller.items.forEach(add);
    for (const group of byFile.values()) for (const { item } of group.items) run.enqueued(item);
    const abort = new AbortController();
    const cancel = token.onCancellationRequested(() => abort.abort());
    try {
      for (const group of byFile.values()) {
        if (token.isCancellationRequested) break;
        await this.runFile(run, group.uri, group.items, debug, abort.signal, token);
      }
    } finally {
      cancel.dispose();
      run.end();
    }
  }

  private async runFile(run: vscode.TestRun, uri: vscode.Uri, items: { item: vscode.TestItem; index: number }[], debug: boolean, signal: AbortSignal, token: vscode.CancellationToken): Promise<void> {
    const cwd = this.cwdOf(uri);
    let file: TestFile;
    let planText: string;
    try {
      file = readTestFile(uri.fsPath, cwd);
      planText = readTestPlan(file);
    } catch (error) {
      for (const { item } of items) run.errored(item, new vscode.TestMessage(errorMessage(error)));
      return;
    }
    const host = this.host(cwd);
    const trusted = vscode.workspace.isTrusted;
    for (const { item, index } of items) {
      if (token.isCancellationRequested) {
        run.skipped(item);
        continue;
      }
      const info = file.tests[index];
      if (!info || info.name !== item.label) {
        run.errored(item, new vscode.TestMessage(`The test file changed: no test "${item.label}" at this place any more; refresh the tests.`));
        continue;
      }
      const refusal = trustRefusal(info, trusted);
      if (refusal) {
        run.errored(item, new vscode.TestMessage(refusal));
        run.appendOutput(`${refusal}\r\n`, undefined, item);
        continue;
      }
      run.started(item);
      let result: TestCaseResult;
      try {
        result = debug ? await this.debugOne(run, file, index, planText, host) : await runTest(file, index, planText, host, { signal });
      } catch (error) {
        run.errored(item, new vscode.TestMessage(errorMessage(error)));
        continue;
      }
      this.report(run, item, result, cwd);
    }
  }

  /** Runs a test's plan under the plan debugger with its mocks, and judges the variables it ends with. */
  private async debugOne(run: vscode.TestRun, file: TestFile, index: number, planText: string, host: PlanTestHost): Promise<TestCaseResult> {
    const prepared = await prepareTest(file, index, planText, host);
    if (!('check' in prepared)) return prepared;
    const id = this.debugged.newId();
    let settle!: (result: TestCaseResult) => void;
    const result = new Promise<TestCaseResult>((resolve) => {
      settle = resolve;
    });
    let done = false;
    const finish = (r: TestCaseResult) => {
      if (done) return;
      done = true;
      settle(r);
    };
    this.debugged.add({
      id,
      prepared,
      planPath: file.planPath,
      note: `plan test "${file.tests[index]!.name}": commands answered by its mocks`,
      finished: (outcomes, aborted) => finish(prepared.check(outcomes, aborted ? 'the debug session was stopped before the plan finished' : undefined)),
    });
    const ended = vscode.debug.onDidTerminateDebugSession((session) => {
      if ((session.configuration as Record<string, unknown>)[TEST_LAUNCH_KEY] === id) finish(prepared.error('the debug session ended before the plan finished'));
    });
    try {
      const config: vscode.DebugConfiguration = {
        type: DEBUG_TYPE,
        name: `Debug test: ${file.tests[index]!.name}`,
        request: 'launch',
        program: file.planPath,
        [TEST_LAUNCH_KEY]: id,
      };
      if (prepared.input !== undefined) config.input = prepared.input;
      const started = await vscode.debug.startDebugging(vscode.workspace.getWorkspaceFolder(vscode.Uri.file(file.absolute)), config, { testRun: run });
      if (!started) finish(prepared.error('the debugger did not start'));
      return await result;
    } finally {
      ended.dispose();
      this.debugged.delete(id);
    }
  }

  private report(run: vscode.TestRun, item: vscode.TestItem, result: TestCaseResult, cwd: string): void {
    const messages = testMessages(result, cwd, (f) => this.textOf(f)).map((m) => {
      const message = m.expected !== undefined && m.actual !== undefined ? vscode.TestMessage.diff(m.message, m.expected, m.actual) : new vscode.TestMessage(m.message);
      const pos = new vscode.Position(m.position.line, m.position.character);
      message.location = new vscode.Location(vscode.Uri.file(m.file), pos);
      return message;
    });
    for (const m of messages) run.appendOutput(`${typeof m.message === 'string' ? m.message : m.message.value}\r\n`, m.location, item);
    if (result.status === 'passed') run.passed(item, result.durationMs);
    else if (result.status === 'failed') run.failed(item, messages, result.durationMs);
    else run.errored(item, messages.length > 0 ? messages : [new vscode.TestMessage('the test could not run')], result.durationMs);
    this.output.appendLine(`[test] ${result.status === 'passed' ? '✓' : '✗'} ${result.name} (${Math.round(result.durationMs)} ms)`);
  }
}

function errorMessage(error: unknown): string {
  if (error instanceof TestFileError) return [...error.details, error.message].join('\n');
  return error instanceof Error ? error.message : String(error);
}
