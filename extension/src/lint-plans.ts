/**
 * What Lint Workspace finds, without VS Code: the diagnostics of one plan file and whether a
 * folder's `lightsop.config.json` lets its plans be linted. Lint Workspace is `lightsop lint`
 * inside the editor: it reads plans from disk, most of them in no editor and so unknown to the
 * language server, and checks them as the language defines them (core), with the folder's
 * skills. Positions are then the editor's (positions.ts): a lone CR, an ordinary character to
 * the language, ends a line in VS Code, and the Problems panel must point where the server's
 * diagnostics do once the file is opened. An invalid config is refused as the CLI refuses it
 * (exit 3, a message naming the file and the field): nothing of that folder is linted.
 */
import path from 'node:path';
import { analyzePlan, CONFIG_FILE, parseConfigText, type Diagnostic, type SkillsDescription } from '@lightsop/core';
import { readLimitedTextFile, UnreadableFileError } from '@lightsop/runtime';
import { editorRange, textDocument, type EditorRange } from './positions';

/** A diagnostic in editor positions, ready for a `vscode.Diagnostic`. */
export interface EditorDiagnostic {
  readonly range: EditorRange;
  readonly severity: Diagnostic['severity'];
  readonly code: string;
  readonly message: string;
}

/** Every diagnostic of a plan's text, in core's check order. */
export function lintPlanText(text: string, skills: SkillsDescription | null): EditorDiagnostic[] {
  const positions = textDocument(text);
  return analyzePlan(text, { skills }).diagnostics.map((d) => ({ range: editorRange(positions, d.range), severity: d.severity, code: d.code, message: d.message }));
}

export type ConfigCheck =
  | { readonly ok: true; readonly plans: readonly string[] | null }
  /** `message` is the CLI's (the file's path, then the problem, which names the field); `diagnostic` goes on the config file. */
  | { readonly ok: false; readonly message: string; readonly diagnostic: EditorDiagnostic };

/** Whether a config's text lets its folder be linted, and with which `plans` globs (null: every plan). */
export function checkConfig(file: string, text: string): ConfigCheck {
  const { config, problems } = parseConfigText(text);
  // The CLI's rule (packages/cli/src/config.ts): the first error refuses the file; warnings do not.
  const first = problems.find((p) => p.severity === 'error');
  if (!first && config) return { ok: true, plans: config.plans && config.plans.length > 0 ? config.plans : null };
  const problem = first?.message ?? 'invalid configuration';
  const span = first?.span ?? { start: 0, end: 0 };
  return {
    ok: false,
    message: `${file}: ${problem}`,
    // Worded as the language server words it on the same file, so that one can stand for the other.
    diagnostic: { range: editorRange(textDocument(text), span), severity: 'error', code: first?.code ?? 'invalid-config', message: `${CONFIG_FILE}: ${problem}` },
  };
}

/** A config that exists but cannot be read (not a regular file, too large, no permission), as the CLI says it. */
export function unreadableConfig(file: string, reason: string): ConfigCheck {
  const problem = `cannot read (${reason})`;
  const start = { line: 0, character: 0 };
  return { ok: false, message: `${file}: ${problem}`, diagnostic: { range: { start, end: start }, severity: 'error', code: 'invalid-config', message: `${CONFIG_FILE}: ${problem}` } };
}

/**
 * The config at the root of a folder on disk, checked: null when there is none. A hostile
 * repository may ship a FIFO or a huge file under that name, so only a regular file of at most
 * 8 MiB is read, as the CLI and the language server read it.
 */
export async function readFolderConfig(folder: string): Promise<ConfigCheck | null> {
  const file = path.join(folder, CONFIG_FILE);
  let text: string;
  try {
    text = await readLimitedTextFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    return unreadableConfig(file, error instanceof UnreadableFileError ? error.reason : code ?? (error as Error).message);
  }
  return checkConfig(file, text);
}
