/**
 * The Plan Graph webview panels, one per plan document. The graph comes from core
 * (`analyzePlan` + `planGraphData`) and is re-sent, debounced, as the plan is edited; statuses
 * come from the results store and are pushed live during a run. For an `#!english` script the
 * graph is the plan the model generated in the last run. Clicking a node reveals its line.
 *
 * The page is locked down: a nonce CSP, `localResourceRoots` limited to dist/, the script
 * loaded through `asWebviewUri`, and every incoming message checked (protocol.ts).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import * as vscode from 'vscode';
import { analyzePlan, isEnglishSource, planGraphData } from '@lightsop/core';
import { isPlanDocument } from '../language';
import type { ResultsStore } from '../run/results';
import { makeNonce } from '../webview-page';
import { graphHtml } from './html';
import { isFromWebview, type NodeState, type ToWebview } from './protocol';

const MAX_VALUE = 300;

export type RevealLine = (uri: vscode.Uri, line: number) => Thenable<unknown>;

interface PanelEntry {
  readonly panel: vscode.WebviewPanel;
  readonly uri: vscode.Uri;
  ready: boolean;
  timer: NodeJS.Timeout | null;
}

export class GraphPanels implements vscode.Disposable {
  private readonly panels = new Map<string, PanelEntry>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly results: ResultsStore,
    private readonly generatedPlan: (uri: string) => string | null,
    private readonly reveal: RevealLine,
  ) {
    this.subscriptions.push(
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (isPlanDocument(e.document)) this.scheduleGraph(e.document.uri.toString(), 200);
      }),
      results.onDidChange((c) => {
        const entry = this.panels.get(c.uri);
        if (!entry?.ready) return;
        const states = c.states.map((s) => ({ name: s.name, status: s.status, value: s.value.slice(0, MAX_VALUE) }));
        this.post(entry, { type: 'states', states, reset: c.reset });
      }),
    );
  }

  /** The open panels' document URIs (for tests and the status of the view). */
  openFor(): string[] {
    return [...this.panels.keys()];
  }

  show(doc: vscode.TextDocument): void {
    const key = doc.uri.toString();
    const existing = this.panels.get(key);
    if (existing) {
      existing.panel.reveal(vscode.ViewColumn.Beside, true);
      this.sendGraph(existing);
      return;
    }
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const panel = vscode.window.createWebviewPanel('lightsop.planGraph', `Graph: ${path.basename(doc.uri.path)}`, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
      enableScripts: true,
      localResourceRoots: [dist],
      retainContextWhenHidden: false,
    });
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'images', 'sop-file.svg');
    const entry: PanelEntry = { panel, uri: doc.uri, ready: false, timer: null };
    this.panels.set(key, entry);
    panel.webview.html = graphHtml({
      cspSource: panel.webview.cspSource,
      scriptUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'graph-webview.js')).toString(),
      nonce: makeNonce((n) => randomBytes(n)),
    });
    panel.webview.onDidReceiveMessage((message: unknown) => {
      if (!isFromWebview(message)) return;
      if (message.type === 'ready') {
        // Sent on every (re)load of the page, e.g. when a hidden panel is shown again.
        entry.ready = true;
        this.sendGraph(entry);
      } else if (message.type === 'reveal') {
        // An english script's nodes belong to the generated plan, whose lines are not this file's.
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
        if (doc && !isEnglishSource(doc.getText().replace(/^\uFEFF/, ''))) void this.reveal(entry.uri, message.line);
      }
    });
    panel.onDidDispose(() => {
      if (entry.timer) clearTimeout(entry.timer);
      this.panels.delete(key);
    });
  }

  /** Re-sends the graph of an english script after its plan was generated. */
  planGenerated(uri: string): void {
    this.scheduleGraph(uri, 0);
  }

  private scheduleGraph(uri: string, ms: number): void {
    const entry = this.panels.get(uri);
    if (!entry) return;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      entry.timer = null;
      this.sendGraph(entry);
    }, ms);
  }

  private sendGraph(entry: PanelEntry): void {
    if (!entry.ready) return;
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === entry.uri.toString());
    if (!doc) return;
    const title = path.basename(entry.uri.path);
    let source = doc.getText().replace(/^\uFEFF/, '');
    let note: string | undefined;
    let analysis = analyzePlan(source);
    if (analysis.plan.english) {
      const generated = this.generatedPlan(entry.uri.toString());
      if (generated) {
        source = generated;
        analysis = analyzePlan(source);
        note = 'An #!english script: this is the plan the language model wrote in the last run.';
      } else {
        note = 'An #!english script: a language model writes its plan when it runs. Run it to see the plan here.';
      }
    } else if (analysis.plan.declarations.length === 0) {
      note = 'No declarations yet: a declaration starts with @name command.';
    }
    const data = planGraphData(analysis.symbols);
    const states: NodeState[] = [...(this.results.get(entry.uri.toString())?.values() ?? [])]
      .map((s) => ({ name: s.name, status: s.status, value: s.value.slice(0, MAX_VALUE) }));
    this.post(entry, {
      type: 'graph',
      title,
      nodes: data.nodes.map((n) => ({ name: n.name, command: n.command, line: n.line, comment: n.comment })),
      edges: data.edges.map((e) => ({ from: e.from, to: e.to })),
      note,
      states,
    });
  }

  private post(entry: PanelEntry, message: ToWebview): void {
    void entry.panel.webview.postMessage(message);
  }

  dispose(): void {
    for (const e of this.panels.values()) e.panel.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
