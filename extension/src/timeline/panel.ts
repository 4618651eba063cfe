/**
 * The Run Timeline webview panel (one per window): "LightSOP: Show Run Timeline" draws the last
 * Run Plan or Debug Plan run (recorded in memory, run/run-records.ts) and follows the next ones;
 * "LightSOP: Open Run Record..." draws a record file (`lightsop run --record`, or the
 * lightsop.run.recordFile setting). Clicking a bar reveals its declaration: in the run's plan
 * document, or for a record the plan file it names (else its plan text in an untitled editor);
 * for an #!english run, in the plan the model wrote (the record's), in an untitled editor.
 *
 * Like the graph page: a nonce CSP, `localResourceRoots` limited to dist/, the script loaded
 * through `asWebviewUri`, and every incoming message checked (protocol.ts).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import * as vscode from 'vscode';
import { parseRunRecord, RunRecordError, type RunRecord } from '@lightsop/runtime';
import { LANGUAGE_ID } from '../language';
import { editorPositionOfLineColumn } from '../positions';
import type { RecordedRun, RunHistory } from '../run/run-records';
import { openPagePanel } from '../webview-panel';
import { timelineHtml } from './html';
import { isFromTimelineWebview, type ToTimelineWebview } from './protocol';
import { timelineOf, type Timeline } from './timeline-data';

export const TIMELINE_COMMANDS = {
  show: 'lightsop.showRunTimeline',
  openRecord: 'lightsop.openRunRecord',
} as const;

export type RevealLine = (uri: vscode.Uri, line: number) => Thenable<unknown>;

/** What the panel shows: the window's last run (and the next), or a record file. */
type Shown =
  | { readonly kind: 'last' }
  | { readonly kind: 'file'; readonly file: string; readonly record: RunRecord; readonly timeline: Timeline };

export class TimelinePanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | null = null;
  private ready = false;
  private shown: Shown = { kind: 'last' };
  /** The last run as drawn (for reveal). */
  private current: { timeline: Timeline; planText: string; planUri: vscode.Uri | null; generated: readonly string[] } | null = null;
  /** The untitled editors opened for generated plans, by their text: a second click reuses one. */
  private readonly generatedDocs = new Map<string, vscode.TextDocument>();
  private readonly subscription: { dispose(): void };

  constructor(private readonly extensionUri: vscode.Uri, private readonly history: RunHistory, private readonly reveal: RevealLine) {
    this.subscription = history.onDidRecord(() => {
      if (this.shown.kind === 'last') this.send();
    });
  }

  dispose(): void {
    this.subscription.dispose();
    this.panel?.dispose();
  }

  /** Shows the last run, and follows the runs after it. */
  showLast(): void {
    this.shown = { kind: 'last' };
    this.open();
    this.send();
  }

  /** Asks for a record file and shows it. */
  async openRecord(arg?: unknown): Promise<void> {
    let file: string | null = arg instanceof vscode.Uri ? arg.fsPath : null;
    if (!file) {
      const picked = await vscode.window.showOpenDialog({
        canSelectMany: false,
        openLabel: 'Show Timeline',
        title: 'Open a run record',
        filters: { 'Run records': ['jsonl', 'json'], 'All files': ['*'] },
      });
      file = picked?.[0]?.fsPath ?? null;
    }
    if (!file) return;
    let record: RunRecord;
    try {
      record = parseRunRecord(await readFile(file, 'utf8'));
    } catch (error) {
      const why = error instanceof RunRecordError ? `line ${error.line}: ${error.message}` : (error as Error).message;
      void vscode.window.showErrorMessage(`LightSOPLang: ${path.basename(file)} is not a run record we can read (${why}).`);
      return;
    }
    this.shown = { kind: 'file', file, record, timeline: timelineOf(record) };
    this.open();
    this.send();
  }

  private open(): void {
    if (this.panel) {
      this.panel.reveal(vscode.ViewColumn.Beside, true);
      return;
    }
    const panel = openPagePanel(this.extensionUri, { viewType: 'lightsop.runTimeline', title: 'Run Timeline', script: 'timeline-webview.js', html: timelineHtml });
    this.panel = panel;
    this.ready = false;
    panel.webview.onDidReceiveMessage((message: unknown) => {
      if (!isFromTimelineWebview(message)) return;
      if (message.type === 'ready') {
        this.ready = true;
        this.send();
      } else {
        void this.revealBar(message.seq).catch((error: unknown) => {
          void vscode.window.showErrorMessage(`LightSOPLang: ${(error as Error)?.message ?? String(error)}`);
        });
      }
    });
    panel.onDidDispose(() => {
      this.panel = null;
      this.ready = false;
    });
  }

  private post(message: ToTimelineWebview): void {
    if (this.panel && this.ready) void this.panel.webview.postMessage(message);
  }

  private send(): void {
    if (!this.panel || !this.ready) return;
    if (this.shown.kind === 'file') {
      const { record, timeline, file } = this.shown;
      this.current = { timeline, planText: record.header.plan.text, planUri: planFileOf(record, file), generated: record.plans.map((p) => p.code) };
      this.post({ type: 'timeline', timeline, source: `record ${path.basename(file)}` });
      return;
    }
    const last: RecordedRun | null = this.history.lastRun;
    if (!last) {
      this.current = null;
      this.post({ type: 'empty', note: 'No run yet in this window: Run Plan or Debug Plan a plan, or open a run record (LightSOP: Open Run Record...).' });
      return;
    }
    let record: RunRecord;
    try {
      record = parseRunRecord(last.text);
    } catch (error) {
      this.current = null;
      this.post({ type: 'empty', note: `The last run's record cannot be read: ${(error as Error).message}` });
      return;
    }
    const timeline = timelineOf(record);
    this.current = { timeline, planText: record.header.plan.text, planUri: vscode.Uri.parse(last.planUri), generated: record.plans.map((p) => p.code) };
    this.post({ type: 'timeline', timeline, source: last.file ? `last run, recorded to ${path.basename(last.file)}` : 'last run' });
  }

  /** Reveals the declaration of bar `seq`, in the plan the run ran. */
  private async revealBar(seq: number): Promise<void> {
    const current = this.current;
    const bar = current?.timeline.bars.find((b) => b.seq === seq);
    if (!current || !bar || bar.line === null) return;
    if (current.timeline.english) {
      const code = bar.plan === null ? undefined : current.generated[bar.plan];
      if (code === undefined) {
        void vscode.window.showInformationMessage(`LightSOPLang: @${bar.variable} belongs to the plan the language model wrote for this #!english script, and the record does not hold that plan.`);
        return;
      }
      let generated = this.generatedDocs.get(code);
      if (!generated || generated.isClosed) {
        generated = await vscode.workspace.openTextDocument({ language: LANGUAGE_ID, content: code });
        this.generatedDocs.set(code, generated);
      }
      await this.reveal(generated.uri, editorPositionOfLineColumn(code, bar.line).line);
      return;
    }
    let doc: vscode.TextDocument;
    if (current.planUri) doc = await vscode.workspace.openTextDocument(current.planUri);
    else doc = await vscode.workspace.openTextDocument({ language: LANGUAGE_ID, content: current.planText });
    // The line as the record counted it, in the plan text that ran; placed in the document.
    const text = doc.getText() === current.planText ? current.planText : doc.getText();
    await this.reveal(doc.uri, editorPositionOfLineColumn(text, bar.line).line);
  }
}

/** The plan file a record names, if it is on disk: as written, or relative to the record's folder or a workspace folder. */
function planFileOf(record: RunRecord, recordFile: string): vscode.Uri | null {
  const named = record.header.plan.file;
  if (!named) return null;
  const candidates = path.isAbsolute(named)
    ? [named]
    : [path.resolve(path.dirname(recordFile), named), ...(vscode.workspace.workspaceFolders ?? []).map((f) => path.resolve(f.uri.fsPath, named))];
  const found = candidates.find((c) => existsSync(c));
  return found ? vscode.Uri.file(found) : null;
}
