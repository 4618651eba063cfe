/** "Run plan", "Debug plan" and "Show graph" CodeLenses above the first declaration of a plan. */
import * as vscode from 'vscode';
import { DEBUG_COMMAND } from './debug/vscode-debugger';
import { COMMANDS } from './language';
import { declarationsOf, isEnglishPlan } from './plan-index';

export class PlanCodeLens implements vscode.CodeLensProvider {
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.emitter.event;

  refresh(): void {
    this.emitter.fire();
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    let line: number;
    if (isEnglishPlan(doc)) {
      line = Math.max(0, doc.getText().search(/\S/) >= 0 ? doc.positionAt(doc.getText().search(/\S/)).line : 0);
    } else {
      const first = declarationsOf(doc)[0];
      if (!first) return [];
      line = first.line - 1;
    }
    const range = new vscode.Range(line, 0, line, 0);
    return [
      new vscode.CodeLens(range, { title: '$(play) Run plan', command: COMMANDS.runPlan, arguments: [doc.uri], tooltip: 'LightSOPLang: Run Plan' }),
      ...(isEnglishPlan(doc) ? [] : [new vscode.CodeLens(range, { title: '$(debug-alt) Debug plan', command: DEBUG_COMMAND, arguments: [doc.uri], tooltip: 'LightSOPLang: Debug Plan' })]),
      new vscode.CodeLens(range, { title: '$(type-hierarchy) Show graph', command: COMMANDS.showGraph, arguments: [doc.uri], tooltip: 'LightSOPLang: Show Plan Graph' }),
    ];
  }
}
