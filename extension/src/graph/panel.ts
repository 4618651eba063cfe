/**
 * The Plan Graph webview panels, one per plan document. The graph comes from the language
 * server (`lightsop/planGraph`, through PlanFacts) and is asked again, debounced, as the plan is
 * edited; statuses come from the results store and are pushed live during a run. For an
 * `#!english` script the graph is the plan the model generated in the last run (graph-data.ts).
 * Clicking a node reveals the line the server gave for it.
 *
 * The page is locked down: a nonce CSP, `localResourceRoots` limited to dist/, the script
 * loaded through `asWebviewUri`, and every incoming message checked (protocol.ts).
 */
import path from 'node:path';
import * as vscode from 'vscode';
import { isPlanDocument } from '../language';
import type { PlanFacts } from '../plan-facts';
import type { ResultsStore } from '../run/results';
import { openPagePanel } from '../webview-panel';
import { graphFromServer, graphOfGeneratedPlan, type PageGraph } from './graph-data';
import { graphHtml } from './html';
import { isFromWebview, type NodeState, type ToWebview } from './protocol';

const MAX_VALUE = 300;

export type RevealLine = (uri: vscode.Uri, line: number) => Thenable<unknown>;

interface PanelEntry {
  readonly panel: vscode.WebviewPanel;
  readonly uri: vscode.Uri;
  ready: boolean;
  timer: NodeJS.Timeout | null;
  /** Counts graph requests, so that an answer that arrives after a newer one is dropped. */
  asked: number;
  /** The lines the nodes of the graph on the page reveal, by name. */
  reveal: ReadonlyMap<string, number>;
}

export class GraphPanels implements vscode.Disposable {
  private readonly panels = new Map<string, PanelEntry>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly results: ResultsStore,
    private readonly facts: PlanFacts,
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
    const panel = openPagePanel(this.extensionUri, { viewType: 'lightsop.planGraph', title: `Graph: ${path.basename(doc.uri.path)}`, script: 'graph-webview.js', html: graphHtml });
    const entry: PanelEntry = { panel, uri: doc.uri, ready: false, timer: null, asked: 0, reveal: new Map() };
    this.panels.set(key, entry);
    panel.webview.onDidReceiveMessage((message: unknown) => {
      if (!isFromWebview(message)) return;
      if (message.type === 'ready') {
        // Sent on every (re)load of the page, e.g. when a hidden panel is shown again.
        entry.ready = true;
        this.sendGraph(entry);
      } else if (message.type === 'reveal') {
        // Only a node of the graph on the page, at the line the server gave for it (an english
        // script's nodes belong to the generated plan and reveal nothing).
        const line = entry.reveal.get(message.name);
        if (line !== undefined) void this.reveal(entry.uri, line);
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
    this.sendGraphAsync(entry).catch(() => undefined);
  }

  private async sendGraphAsync(entry: PanelEntry): Promise<void> {
    if (!entry.ready) return;
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === entry.uri.toString());
    if (!doc) return;
    const asked = ++entry.asked;
    const title = path.basename(entry.uri.path);
    const outline = await this.facts.outline(doc);
    let graph: PageGraph | null = null;
    let note: string | undefined;
    if (outline?.english) {
      const generated = this.generatedPlan(entry.uri.toString());
      if (generated) {
        graph = graphOfGeneratedPlan(generated);
        note = 'An #!english script: this is the plan the language model wrote in the last run.';
      } else {
        note = 'An #!english script: a language model writes its plan when it runs. Run it to see the plan here.';
      }
    } else {
      const answer = await this.facts.graph(doc);
      // No answer: the plan changed meanwhile (its own request follows) or the server cannot say.
      if (!answer) {
        if (!(await this.facts.available()) && asked === entry.asked) this.post(entry, { type: 'graph', title, nodes: [], edges: [], note: 'The language server gives the graph; it is not running.', states: [] });
        return;
      }
      graph = graphFromServer(answer);
      if (graph.nodes.length === 0) note = 'No declarations yet: a declaration starts with @name command.';
    }
    // A newer request was made while this one waited: its answer is the one to show.
    if (asked !== entry.asked || !entry.ready) return;
    entry.reveal = graph?.reveal ?? new Map();
    const states: NodeState[] = [...(this.results.get(entry.uri.toString())?.values() ?? [])]
      .map((s) => ({ name: s.name, status: s.status, value: s.value.slice(0, MAX_VALUE) }));
    this.post(entry, { type: 'graph', title, nodes: graph?.nodes ?? [], edges: graph?.edges ?? [], note, states });
  }

  private post(entry: PanelEntry, message: ToWebview): void {
    void entry.panel.webview.postMessage(message);
  }

  dispose(): void {
    for (const e of this.panels.values()) e.panel.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
