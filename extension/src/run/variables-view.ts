/**
 * The Plan Variables view (Explorer): every declaration of the active plan with its status and
 * value from the last run; selecting one reveals its line. Declarations that have not run yet
 * are listed as "not run", so the view always mirrors the plan.
 */
import * as vscode from 'vscode';
import type { NodeStatus } from '../graph/protocol';
import { COMMANDS, isPlanDocument } from '../language';
import type { PlanFacts } from '../plan-facts';
import { headerLine } from '../plan-outline';
import { displayPosition } from '../positions';
import { oneLine, type ResultsStore } from './results';

export interface VariableItem {
  readonly uri: vscode.Uri;
  readonly name: string;
  /** The 0-based editor line of its `@name`, or null when it has none in this document (a generated plan). */
  readonly line: number | null;
  readonly status: NodeStatus;
  readonly value: string;
}

const ICONS: Record<NodeStatus, vscode.ThemeIcon> = {
  pending: new vscode.ThemeIcon('circle-large-outline'),
  running: new vscode.ThemeIcon('loading~spin'),
  success: new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed')),
  fail: new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed')),
  undefined: new vscode.ThemeIcon('circle-slash', new vscode.ThemeColor('disabledForeground')),
  canceled: new vscode.ThemeIcon('stop-circle', new vscode.ThemeColor('charts.orange')),
};

export class VariablesView implements vscode.TreeDataProvider<VariableItem>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<VariableItem | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly subscriptions: vscode.Disposable[] = [];
  private document: vscode.TextDocument | null = null;
  private timer: NodeJS.Timeout | null = null;
  readonly view: vscode.TreeView<VariableItem>;

  constructor(private readonly results: ResultsStore, private readonly facts: PlanFacts) {
    this.view = vscode.window.createTreeView('lightsop.variables', { treeDataProvider: this, showCollapseAll: false });
    this.track(vscode.window.activeTextEditor);
    this.subscriptions.push(
      this.view,
      vscode.window.onDidChangeActiveTextEditor((e) => this.track(e)),
      results.onDidChange((c) => {
        if (this.document && c.uri === this.document.uri.toString()) this.refresh(0);
      }),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (this.document && e.document === this.document) this.refresh(200);
      }),
    );
  }

  /** Follows the active editor when it shows a plan; keeps the last plan otherwise (e.g. the graph has focus). */
  private track(editor: vscode.TextEditor | undefined): void {
    if (editor && isPlanDocument(editor.document) && editor.document !== this.document) {
      this.document = editor.document;
      this.refresh(0);
    }
  }

  private refresh(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.emitter.fire(undefined);
      this.view.description = this.document ? vscode.workspace.asRelativePath(this.document.uri) : undefined;
    }, ms);
  }

  async getChildren(element?: VariableItem): Promise<VariableItem[]> {
    if (element || !this.document) return [];
    const doc = this.document;
    const uri = doc.uri;
    const outline = await this.facts.outline(doc);
    const states = this.results.get(uri.toString());
    // An #!english script's variables belong to the generated plan; without the server's
    // outline, the variables of the last run are all there is to show.
    if (!outline || outline.english) {
      return [...(states?.values() ?? [])].map((s) => ({ uri, name: s.name, line: null, status: s.status, value: s.value }));
    }
    return outline.declarations.map((d) => {
      const s = states?.get(d.name);
      return { uri, name: d.name, line: headerLine(d), status: s?.status ?? 'pending', value: s?.value ?? '' };
    });
  }

  getTreeItem(item: VariableItem): vscode.TreeItem {
    const t = new vscode.TreeItem(`@${item.name}`, vscode.TreeItemCollapsibleState.None);
    const status = item.status === 'pending' ? 'not run' : item.status;
    t.description = item.status === 'pending' || item.status === 'running' ? status : `${status} · ${oneLine(item.value, 120)}`;
    t.iconPath = ICONS[item.status];
    t.id = `${item.uri.toString()}#${item.name}`;
    const tip = new vscode.MarkdownString();
    tip.appendMarkdown(`**@${item.name}**${item.line !== null ? ` (line ${displayPosition({ line: item.line, character: 0 }).line})` : ''}: ${status}\n\n`);
    if (item.value) tip.appendCodeblock(item.value.length > 4000 ? `${item.value.slice(0, 4000)}…` : item.value, 'text');
    t.tooltip = tip;
    t.contextValue = `lightsopVariable.${item.status}`;
    if (item.line !== null) {
      t.command = { command: COMMANDS.revealVariable, title: 'Reveal Declaration', arguments: [item.uri, item.line] };
    }
    return t;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.emitter.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
