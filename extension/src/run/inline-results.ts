/**
 * Each declaration's status and value shown after its header line once it settles (and "…"
 * while its command runs), as `after` decorations with the full value in the hover. Placed by
 * variable name on the line where the language server's outline puts the declaration's `@name`
 * for the editor's current version, so the results follow the plan as it is edited.
 */
import * as vscode from 'vscode';
import type { NodeStatus } from '../graph/protocol';
import { isPlanDocument } from '../language';
import type { PlanFacts } from '../plan-facts';
import { inlineResultLines } from '../plan-outline';
import { oneLine, STATUS_GLYPH, type ResultsStore } from './results';

const COLORS: Record<NodeStatus, vscode.ThemeColor> = {
  pending: new vscode.ThemeColor('editorCodeLens.foreground'),
  running: new vscode.ThemeColor('charts.blue'),
  success: new vscode.ThemeColor('testing.iconPassed'),
  fail: new vscode.ThemeColor('testing.iconFailed'),
  undefined: new vscode.ThemeColor('disabledForeground'),
  canceled: new vscode.ThemeColor('charts.orange'),
};

const MAX_INLINE = 80;

export class InlineResults implements vscode.Disposable {
  private readonly types = new Map<NodeStatus, vscode.TextEditorDecorationType>();
  private readonly subscriptions: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly results: ResultsStore, private readonly facts: PlanFacts) {
    for (const [status, color] of Object.entries(COLORS) as [NodeStatus, vscode.ThemeColor][]) {
      this.types.set(status, vscode.window.createTextEditorDecorationType({
        after: { color, margin: '0 0 0 2.5em', fontStyle: status === 'running' ? 'italic' : 'normal' },
        rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
      }));
    }
    this.subscriptions.push(
      results.onDidChange(() => this.schedule(0)),
      vscode.window.onDidChangeVisibleTextEditors(() => this.schedule(0)),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (isPlanDocument(e.document)) this.schedule(150);
      }),
    );
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.renderAll();
    }, ms);
  }

  renderAll(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      if (isPlanDocument(editor.document)) void this.render(editor);
    }
  }

  private async render(editor: vscode.TextEditor): Promise<void> {
    const doc = editor.document;
    const version = doc.version;
    const states = this.results.get(doc.uri.toString());
    const byStatus = new Map<NodeStatus, vscode.DecorationOptions[]>();
    const outline = states ? await this.facts.outline(doc) : null;
    // An edit arrived meanwhile: its own render follows (onDidChangeTextDocument).
    if (doc.isClosed || doc.version !== version) return;
    if (states && outline) {
      for (const [name, at] of inlineResultLines(outline)) {
        const s = states.get(name);
        if (!s || s.status === 'pending' || at >= doc.lineCount) continue;
        const line = doc.lineAt(at);
        const label = s.status === 'running' ? `${STATUS_GLYPH.running} running` : `${STATUS_GLYPH[s.status]} ${s.status === 'success' ? '' : `${s.status}: `}${oneLine(s.value, MAX_INLINE)}`;
        const hover = new vscode.MarkdownString();
        hover.appendMarkdown(`**@${name}**: ${s.status}\n\n`);
        if (s.value) hover.appendCodeblock(s.value.length > 4000 ? `${s.value.slice(0, 4000)}…` : s.value, 'text');
        const list = byStatus.get(s.status) ?? [];
        list.push({ range: new vscode.Range(line.range.end, line.range.end), hoverMessage: hover, renderOptions: { after: { contentText: label } } });
        byStatus.set(s.status, list);
      }
    }
    for (const [status, type] of this.types) editor.setDecorations(type, byStatus.get(status) ?? []);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const t of this.types.values()) t.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
