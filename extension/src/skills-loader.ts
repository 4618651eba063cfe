/**
 * The skills Run Plan, the debugger, Lint Workspace and the chat panel use, loaded in the
 * extension host by the runtime's one skills loader (its export rule, cache busting and timeout).
 * A skills module runs code when it is imported, so it is never loaded in an untrusted workspace:
 * the caller gets a SkillsRefusedError whose message says why and what to do. No `vscode` import:
 * the trust decision comes in as an argument (skills.ts supplies it), so tests load through here.
 */
import path from 'node:path';
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

/** Loads a skills file; refuses a module unless the workspace is trusted. Problems are SkillsLoadErrors. */
export async function loadWorkspaceSkills(file: string, options: { readonly trusted: boolean }): Promise<LoadedSkills> {
  const absolute = path.resolve(file);
  if (isSkillsModule(absolute) && !options.trusted) throw new SkillsRefusedError(absolute);
  return loadSkillsFile(absolute);
}
