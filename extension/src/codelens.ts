/** "Run plan", "Debug plan" and "Show graph" CodeLenses above the first declaration of a plan. */
import * as vscode from 'vscode';
import { DEBUG_COMMAND } from './debug/vscode-debugger';
import { COMMANDS } from './language';
import type { PlanFacts } from './plan-facts';
import { codeLensLine } from './plan-outline';

export class PlanCodeLens implements vscode.CodeLensProvider {
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.emitter.event;

  constructor(private readonly facts: PlanFacts) {}

  refresh(): void {
    this.emitter.fire();
  }

  async provideCodeLenses(doc: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    // The server's outline places them: the #!english header, or the first declaration's line.
    const outline = await this.facts.outline(doc);
    const line = outline ? codeLensLine(outline) : null;
    if (outline === null || line === null) return [];
    const english = outline.english !== null;
    const range = new vscode.Range(line, 0, line, 0);
    return [
      new vscode.CodeLens(range, { title: '$(play) Run plan', command: COMMANDS.runPlan, arguments: [doc.uri], tooltip: 'LightSOPLang: Run Plan' }),
      ...(english ? [] : [new vscode.CodeLens(range, { title: '$(debug-alt) Debug plan', command: DEBUG_COMMAND, arguments: [doc.uri], tooltip: 'LightSOPLang: Debug Plan' })]),
      new vscode.CodeLens(range, { title: '$(type-hierarchy) Show graph', command: COMMANDS.showGraph, arguments: [doc.uri], tooltip: 'LightSOPLang: Show Plan Graph' }),
    ];
  }
}
