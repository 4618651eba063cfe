/**
 * Workspace skills with the editor's trust decision: skills-loader.ts does the loading, this
 * module only asks VS Code whether the workspace is trusted.
 */
import * as vscode from 'vscode';
import type { LoadedSkills } from '@lightsop/runtime';
import { loadWorkspaceSkills } from './skills-loader';

export { SkillsRefusedError } from './skills-loader';

/** Loads a skills file; refuses a module in an untrusted workspace. */
export function loadSkillsForHost(file: string): Promise<LoadedSkills> {
  return loadWorkspaceSkills(file, { trusted: vscode.workspace.isTrusted });
}

/** Whether the workspace is trusted: skills modules load and MCP servers start only then. */
export function isWorkspaceTrusted(): boolean {
  return vscode.workspace.isTrusted;
}
