/**
 * Loading the skills that Run Plan and Lint Workspace use, in the extension host. A skills
 * module runs code when it is imported, so it is never loaded in an untrusted workspace: the
 * caller gets a SkillsRefusedError whose message says why and what to do.
 */
import path from 'node:path';
import * as vscode from 'vscode';
import { isSkillsModule, loadSkillsFile, type LoadedSkills } from '@lightsop/runtime';

export class SkillsRefusedError extends Error {
  constructor(readonly file: string) {
    super(
      `The skills module ${path.basename(file)} was not loaded because this workspace is not trusted: importing a skills module runs its code. ` +
        'Trust the workspace (Manage Workspace Trust) to run plans with it.',
    );
    this.name = 'SkillsRefusedError';
  }
}

/** Loads a skills file; refuses a module in an untrusted workspace. */
export async function loadSkillsForHost(file: string): Promise<LoadedSkills> {
  if (isSkillsModule(file) && !vscode.workspace.isTrusted) throw new SkillsRefusedError(file);
  return loadSkillsFile(file, { allowModules: vscode.workspace.isTrusted });
}
