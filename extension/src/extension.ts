/**
 * The LightSOPLang extension: the language (grammar and configuration come from package.json),
 * the bundled language server, and the commands of the contract's "VS Code extension surface":
 * Run Plan, Run up to Here, Debug Plan, Lint Workspace, Show Plan Graph, Set LLM API Key and Open
 * Chat. Entry point: `activate`. Run Plan goes through PlanRunner, which owns one interpreter per
 * plan; Debug Plan through the debug adapter (debug/), which makes a fresh one per debug session;
 * the chat panel through ChatPanels (chat/), which owns the window's session registry.
 */
import { stopAllMcpServers } from './run/plan-mcp';
import path from 'node:path';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { setApiKey } from './api-key';
import { CHAT_COMMANDS, ChatPanels } from './chat/panel';
import { startClient } from './client';
import { PlanCodeLens } from './codelens';
import { DEBUG_COMMAND, debugPlan, registerPlanDebugger } from './debug/vscode-debugger';
import { GraphPanels } from './graph/panel';
import { COMMANDS, DISPLAY_NAME, isPlanDocument, LANGUAGE_ID } from './language';
import { lintWorkspaceCommand, WorkspaceLinter } from './lint-workspace';
import { registerMcpServer } from './mcp-server';
import { PlanFacts } from './plan-facts';
import { declarationAt } from './plan-outline';
import { InlineResults } from './run/inline-results';
import { ResultsStore } from './run/results';
import { PlanRunner } from './run/runner';
import { RunHistory } from './run/run-records';
import { loadBundledOtel } from './run/traces';
import { VariablesView } from './run/variables-view';
import { DebuggedTests } from './testing/debugged-tests';
import { PlanTestExplorer } from './testing/test-explorer';
import { TIMELINE_COMMANDS, TimelinePanel } from './timeline/panel';

let client: LanguageClient | null = null;
let chat: ChatPanels | null = null;

/** The plan document a command is about: its URI argument (CodeLens, menus), else the active editor. */
async function targetDocument(arg: unknown): Promise<vscode.TextDocument | null> {
  if (arg instanceof vscode.Uri) return vscode.workspace.openTextDocument(arg);
  const editor = vscode.window.activeTextEditor;
  if (editor && isPlanDocument(editor.document)) return editor.document;
  const visible = vscode.window.visibleTextEditors.find((e) => isPlanDocument(e.document));
  if (visible) return visible.document;
  void vscode.window.showInformationMessage(`${DISPLAY_NAME}: open a .sop plan first.`);
  return null;
}

/** Shows `uri` with the cursor at the first character of the 0-based editor `line`. */
async function revealLine(uri: vscode.Uri, line: number): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(uri);
  const existing = vscode.window.visibleTextEditors.find((e) => e.document === doc);
  const editor = await vscode.window.showTextDocument(doc, { viewColumn: existing?.viewColumn ?? vscode.ViewColumn.One, preserveFocus: false });
  const target = Math.min(Math.max(0, line), doc.lineCount - 1);
  const pos = new vscode.Position(target, doc.lineAt(target).firstNonWhitespaceCharacterIndex);
  editor.selection = new vscode.Selection(pos, pos);
  editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel(DISPLAY_NAME);
  const results = new ResultsStore();
  // What the extension knows of an open plan comes from the language server, once it has started.
  const facts = new PlanFacts();
  const version = String((context.extension.packageJSON as { version?: unknown }).version ?? '0.0.0');
  // Every Run Plan and Debug Plan run is recorded in memory for the run timeline.
  const history = new RunHistory();
  const debuggedTests = new DebuggedTests();
  const runner = new PlanRunner(context.secrets, results, output, facts, loadBundledOtel(path.join(context.extensionPath, 'dist')), version, history);
  const timeline = new TimelinePanel(context.extensionUri, history, revealLine);
  const graphs = new GraphPanels(context.extensionUri, results, facts, (uri) => runner.generatedPlan(uri), revealLine);
  const linter = new WorkspaceLinter(output);
  const codeLens = new PlanCodeLens(facts);
  chat = new ChatPanels(context, output);
  context.subscriptions.push(
    output, results, runner, graphs, linter, chat, timeline,
    new PlanTestExplorer(debuggedTests, output),
    new InlineResults(results, facts),
    new VariablesView(results, facts),
    runner.onDidGeneratePlan((uri) => graphs.planGenerated(uri)),
    vscode.languages.registerCodeLensProvider({ language: LANGUAGE_ID }, codeLens),
    vscode.workspace.onDidCloseTextDocument((doc) => {
      if (!isPlanDocument(doc)) return;
      facts.forget(doc.uri);
    }),
    vscode.commands.registerCommand(COMMANDS.runPlan, async (arg?: unknown) => {
      const doc = await targetDocument(arg);
      if (doc) await runner.run(doc);
    }),
    // eslint-disable-next-line no-restricted-syntax -- bounded: registerPlanDebugger returns a fixed handful of disposables.
    ...registerPlanDebugger(results, history, version, debuggedTests, (uri, name, attributes) => runner.startTrace(uri, name, attributes)),
    vscode.commands.registerCommand(DEBUG_COMMAND, async (arg?: unknown) => {
      const doc = await targetDocument(arg);
      if (doc) await debugPlan(doc);
    }),
    vscode.commands.registerCommand(COMMANDS.runToHere, async (arg?: unknown) => {
      const doc = await targetDocument(arg);
      if (!doc) return;
      const editor = vscode.window.visibleTextEditors.find((e) => e.document === doc);
      const line = editor?.selection.active.line ?? 0;
      const outline = await facts.outline(doc);
      const decl = outline && !outline.english ? declarationAt(outline, line) : null;
      if (!decl) {
        void vscode.window.showInformationMessage(`${DISPLAY_NAME}: put the cursor on a declaration to run it and what it depends on.`);
        return;
      }
      await runner.run(doc, [decl.name]);
    }),
    vscode.commands.registerCommand(COMMANDS.showGraph, async (arg?: unknown) => {
      const doc = await targetDocument(arg);
      if (doc) graphs.show(doc);
    }),
    vscode.commands.registerCommand(TIMELINE_COMMANDS.show, () => timeline.showLast()),
    vscode.commands.registerCommand(TIMELINE_COMMANDS.openRecord, (arg?: unknown) => timeline.openRecord(arg)),
    vscode.commands.registerCommand(COMMANDS.lintWorkspace, () => lintWorkspaceCommand(linter)),
    vscode.commands.registerCommand(COMMANDS.setApiKey, () => setApiKey(context.secrets)),
    vscode.commands.registerCommand(COMMANDS.revealVariable, (uri: vscode.Uri, line: number) => revealLine(uri, line)),
    vscode.commands.registerCommand(CHAT_COMMANDS.open, () => chat?.open()),
    vscode.commands.registerCommand(CHAT_COMMANDS.stopAll, () => chat?.stopAll()),
    vscode.commands.registerCommand(CHAT_COMMANDS.newConversation, () => chat?.newConversation()),
  );

  registerMcpServer(context, output);
  output.appendLine(`[${DISPLAY_NAME}] activated; workspace ${vscode.workspace.isTrusted ? 'trusted' : 'not trusted: skills modules are not loaded'}`);
  try {
    client = await startClient(context);
    facts.started(client);
    output.appendLine(`[${DISPLAY_NAME}] language server started`);
  } catch (error) {
    facts.started(null);
    output.appendLine(`[${DISPLAY_NAME}] the language server did not start: ${(error as Error)?.message ?? String(error)}`);
    void vscode.window.showErrorMessage(`${DISPLAY_NAME}: the language server did not start; see the "${DISPLAY_NAME}" output.`);
  }
}

export async function deactivate(): Promise<void> {
  const c = client;
  client = null;
  const panels = chat;
  chat = null;
  // Closing the window or deactivating shuts the chat's loops down (bounded by their drain deadline).
  // MCP servers the extension started for Run Plan, the debugger and the chat stop with it.
  await Promise.all([c?.stop(), panels?.shutdown(), stopAllMcpServers()]);
}
