/**
 * Loading the skills that Run Plan and Lint Workspace use, in the extension host. A skills
 * module runs code when it is imported, so it is never loaded in an untrusted workspace: the
 * caller gets a SkillsRefusedError whose message says why and what to do.
 *
 * Modules are imported with their modification time in the URL: Node caches ES modules by URL
 * for the life of the process (here, the extension host), and an edited skills module must be
 * the one that runs next.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as vscode from 'vscode';
import { CommandSurface } from '@lightsop/core';
import { isSkillsModule, loadSkillsFile, SkillsLoadError, toCommandRegistry, type LoadedSkills } from '@lightsop/runtime';

export class SkillsRefusedError extends Error {
  constructor(readonly file: string) {
    super(
      `The skills module ${path.basename(file)} was not loaded because this workspace is not trusted: importing a skills module runs its code. ` +
        'Trust the workspace (Manage Workspace Trust) to run plans with it.',
    );
    this.name = 'SkillsRefusedError';
  }
}

async function importModule(file: string): Promise<LoadedSkills> {
  const stat = statSync(file, { throwIfNoEntry: false });
  if (!stat) throw new SkillsLoadError(file, `${file}: no such file`);
  let mod: { default?: unknown };
  try {
    mod = (await import(`${pathToFileURL(file).href}?mtime=${stat.mtimeMs}`)) as { default?: unknown };
  } catch (error) {
    throw new SkillsLoadError(file, `${file}: cannot load the skills module: ${(error as Error)?.message ?? String(error)}`);
  }
  try {
    const registry = toCommandRegistry(mod.default, file);
    return { file, commands: CommandSurface.fromRegistry(registry, { kind: 'registry', name: file }), registry };
  } catch (error) {
    throw new SkillsLoadError(file, (error as Error).message);
  }
}

/** Loads a skills file; refuses a module in an untrusted workspace. */
export async function loadSkillsForHost(file: string): Promise<LoadedSkills> {
  const absolute = path.resolve(file);
  if (isSkillsModule(absolute)) {
    if (!vscode.workspace.isTrusted) throw new SkillsRefusedError(absolute);
    return importModule(absolute);
  }
  return loadSkillsFile(absolute, { allowModules: false });
}
