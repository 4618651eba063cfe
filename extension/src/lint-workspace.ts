/**
 * "LightSOPLang: Lint Workspace": checks every plan of every workspace folder (the config's
 * `plans` globs, else all `*.sop` files) with the folder's skills, like `lightsop lint`, and puts
 * the results in the Problems panel (what is found, and where, is lint-plans.ts). Plans open in
 * an editor are left to the language server, which keeps their diagnostics current as they are
 * edited; so a plan's lint entry is dropped when it is opened. A folder whose
 * `lightsop.config.json` is invalid is not linted, as `lightsop lint` refuses it (exit 3): the
 * problem goes on the config file and into an error message.
 */
import path from 'node:path';
import * as vscode from 'vscode';
import { CONFIG_FILE, type SkillsDescription } from '@lightsop/core';
import { toVsDiagnostic } from './diagnostics';
import { LANGUAGE_ID } from './language';
import { checkConfig, lintPlanText, readFolderConfig, type ConfigCheck } from './lint-plans';
import { displayPosition } from './positions';
import { planSettings } from './settings';
import { loadSkillsForHost, SkillsRefusedError } from './skills';

export interface LintSummary {
  readonly files: number;
  readonly errors: number;
  readonly warnings: number;
  readonly filesWithProblems: number;
  /** The CLI's message for each folder whose config is invalid (its plans were not linted). */
  readonly invalidConfigs: readonly string[];
}

export class WorkspaceLinter implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('lightsop-lint');
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly output: vscode.OutputChannel) {
    this.subscriptions.push(
      vscode.workspace.onDidOpenTextDocument((doc) => {
        if (doc.languageId === LANGUAGE_ID) this.collection.delete(doc.uri);
      }),
    );
  }

  dispose(): void {
    this.collection.dispose();
    for (const s of this.subscriptions) s.dispose();
  }

  /** The folder's config, checked as the CLI checks it; ok with no globs when there is none. */
  private async configFor(folder: vscode.WorkspaceFolder): Promise<{ readonly uri: vscode.Uri; readonly check: ConfigCheck }> {
    const uri = vscode.Uri.joinPath(folder.uri, CONFIG_FILE);
    if (uri.scheme === 'file') return { uri, check: (await readFolderConfig(folder.uri.fsPath)) ?? { ok: true, plans: null } };
    // A virtual workspace: its file system is VS Code's.
    let bytes: Uint8Array;
    try {
      bytes = await vscode.workspace.fs.readFile(uri);
    } catch {
      return { uri, check: { ok: true, plans: null } };
    }
    return { uri, check: checkConfig(uri.toString(), new TextDecoder().decode(bytes)) };
  }

  private async skillsFor(uri: vscode.Uri, notes: Set<string>): Promise<SkillsDescription | null> {
    const settings = planSettings(uri);
    if (!settings.skillsPath) return null;
    try {
      return (await loadSkillsForHost(settings.skillsPath)).description;
    } catch (error) {
      const message = error instanceof SkillsRefusedError
        ? `${error.message} Unknown commands are not reported.`
        : `Skills from ${settings.skillsOrigin}: ${(error as Error).message}`;
      notes.add(message);
      return null;
    }
  }

  async lint(token?: vscode.CancellationToken): Promise<LintSummary> {
    this.collection.clear();
    const open = new Set(vscode.workspace.textDocuments.filter((d) => d.languageId === LANGUAGE_ID).map((d) => d.uri.toString()));
    const notes = new Set<string>();
    let files = 0;
    let errors = 0;
    let warnings = 0;
    let filesWithProblems = 0;
    const invalidConfigs: string[] = [];
    this.output.appendLine(`[lint] ${new Date().toLocaleTimeString()} linting the workspace`);
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      const config = await this.configFor(folder);
      if (!config.check.ok) {
        // As `lightsop lint` (exit 3): an invalid config stops the folder's lint; it is not
        // linted without it (its skills and globs could be anything the config meant).
        invalidConfigs.push(config.check.message);
        errors++;
        this.output.appendLine(`  ${config.check.message}: the plans of ${folder.name} were not linted`);
        // The language server shows the same problem on the file while the workspace is open:
        // one entry in the Problems panel is enough, so a copy is added only when it has none.
        const problem = toVsDiagnostic(config.check.diagnostic);
        const shown = vscode.languages.getDiagnostics(config.uri).some((d) => d.message === problem.message && d.range.isEqual(problem.range));
        if (!shown) this.collection.set(config.uri, [problem]);
        continue;
      }
      const seen = new Set<string>();
      const uris: vscode.Uri[] = [];
      for (const glob of config.check.plans ?? ['**/*.sop']) {
        for (const uri of await vscode.workspace.findFiles(new vscode.RelativePattern(folder, glob), '**/node_modules/**', undefined, token)) {
          if (!seen.has(uri.toString())) {
            seen.add(uri.toString());
            uris.push(uri);
          }
        }
      }
      uris.sort((a, b) => a.fsPath.localeCompare(b.fsPath));
      const skills = uris.length > 0 ? await this.skillsFor(uris[0]!, notes) : null;
      for (const uri of uris) {
        if (token?.isCancellationRequested) break;
        files++;
        const openDoc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
        const text = openDoc ? openDoc.getText() : new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)).replace(/^\uFEFF/, '');
        const diagnostics = lintPlanText(text, skills);
        const e = diagnostics.filter((d) => d.severity === 'error').length;
        const w = diagnostics.filter((d) => d.severity === 'warning').length;
        errors += e;
        warnings += w;
        if (diagnostics.length > 0) {
          filesWithProblems++;
          const rel = path.relative(folder.uri.fsPath, uri.fsPath);
          for (const d of diagnostics) {
            const at = displayPosition(d.range.start);
            this.output.appendLine(`  ${rel}:${at.line}:${at.column}: ${d.severity}: ${d.message} [${d.code}]`);
          }
        }
        // Open plans: the language server publishes their diagnostics; two copies would confuse.
        if (!open.has(uri.toString())) this.collection.set(uri, diagnostics.map(toVsDiagnostic));
      }
    }
    for (const note of notes) this.output.appendLine(`  note: ${note}`);
    this.output.appendLine(`[lint] ${files} plan${files === 1 ? '' : 's'}: ${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`);
    if (notes.size > 0) void vscode.window.showWarningMessage(`LightSOPLang: ${[...notes][0]}`);
    return { files, errors, warnings, filesWithProblems, invalidConfigs };
  }
}

/** The command: lint with a progress notification, then summarise. */
export async function lintWorkspaceCommand(linter: WorkspaceLinter): Promise<LintSummary | undefined> {
  if (!vscode.workspace.workspaceFolders?.length) {
    void vscode.window.showInformationMessage('LightSOPLang: open a folder to lint its plans.');
    return undefined;
  }
  const summary = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'LightSOPLang: linting plans', cancellable: true },
    (_progress, token) => linter.lint(token),
  );
  for (const message of summary.invalidConfigs) {
    void vscode.window.showErrorMessage(`LightSOPLang: ${message}. The plans of its folder were not linted.`, 'Show Problems').then((pick) => {
      if (pick) void vscode.commands.executeCommand('workbench.actions.view.problems');
    });
  }
  const text = `LightSOPLang: linted ${summary.files} plan${summary.files === 1 ? '' : 's'}: ${summary.errors} error${summary.errors === 1 ? '' : 's'}, ${summary.warnings} warning${summary.warnings === 1 ? '' : 's'}.`;
  const shown = summary.errors > 0 ? vscode.window.showErrorMessage(text, 'Show Problems')
    : summary.warnings > 0 ? vscode.window.showInformationMessage(text, 'Show Problems')
    : vscode.window.showInformationMessage(text);
  void shown.then((pick) => {
    if (pick === 'Show Problems') void vscode.commands.executeCommand('workbench.actions.view.problems');
  });
  return summary;
}
