/**
 * The commands registry a plan runs with, resolved the same way for Run Plan and the plan
 * debugger: the skills file from `lightsop.skills` or `lightsop.config.json` (settings.ts), a
 * module only in a trusted workspace (skills.ts), and nothing but `assign` without a skills file.
 * Failures come back as values with the user-facing message; each caller shows it its own way.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import type { CommandRegistry } from '@lightsop/runtime';
import type { McpProgressListener } from '@lightsop/runtime/mcp';
import { isWorkspaceTrusted, loadSkillsForHost, SkillsRefusedError } from '../skills';
import { joinMcpTools } from './plan-mcp';

/** Without a skills file only the built-in `assign` works, as with `lightsop run`. */
export const EMPTY_REGISTRY: CommandRegistry = {
  listCommands: () => [],
  executeCommand(payload) {
    throw new Error(`Unknown command ${payload.command}: no skills module is configured (lightsop.skills or lightsop.config.json)`);
  },
};

export type PlanRegistry =
  | {
      readonly ok: true;
      readonly registry: CommandRegistry;
      /** For the log: where the skills came from. */
      readonly note: string;
      /** Identifies the skills file and its version (path and mtime). */
      readonly stamp: string;
    }
  | {
      readonly ok: false;
      /** `refused`: a module in an untrusted workspace; `json`: a description that cannot run; `load`: any other failure. */
      readonly kind: 'refused' | 'json' | 'load';
      readonly message: string;
    };

/**
 * Loads the registry of `skillsPath` (absolute, or null for none) joined with the tools of the MCP
 * servers of `configFile` (started only in a trusted workspace, docs/mcp.md); `origin` names where
 * the path came from; `onProgress` gets the progress of the tools' calls.
 */
export async function loadPlanRegistry(skillsPath: string | null, origin: string | null, configFile: string | null = null, onProgress?: McpProgressListener): Promise<PlanRegistry> {
  const skills = await loadSkillsRegistry(skillsPath, origin);
  if (!skills.ok || !configFile) return skills;
  let joined;
  try {
    joined = await joinMcpTools(skills.registry, configFile, isWorkspaceTrusted(), onProgress);
  } catch (error) {
    return { ok: false, kind: 'load', message: `Cannot start the MCP servers of ${configFile}: ${(error as Error)?.message ?? String(error)}` };
  }
  if (!joined.ok) return { ok: false, kind: 'load', message: joined.message };
  if (joined.registry === skills.registry && joined.note === null) return skills;
  return { ok: true, registry: joined.registry, note: [skills.note, joined.note].filter((n) => n !== null).join('; '), stamp: `${skills.stamp}|${joined.stamp}` };
}

async function loadSkillsRegistry(skillsPath: string | null, origin: string | null): Promise<PlanRegistry> {
  if (!skillsPath) return { ok: true, registry: EMPTY_REGISTRY, note: 'no skills configured: only assign works', stamp: 'none' };
  try {
    const loaded = await loadSkillsForHost(skillsPath);
    if (!loaded.registry) {
      return {
        ok: false,
        kind: 'json',
        message: `${path.basename(skillsPath)} is a JSON skills description: it lists commands but cannot run them. Point lightsop.config.json's "skills" (or the lightsop.skills setting) at a skills module (.mjs or .js) to run plans.`,
      };
    }
    return {
      ok: true,
      registry: loaded.registry,
      note: `skills: ${skillsPath}`,
      stamp: `${skillsPath}@${statSync(skillsPath, { throwIfNoEntry: false })?.mtimeMs ?? 0}`,
    };
  } catch (error) {
    if (error instanceof SkillsRefusedError) return { ok: false, kind: 'refused', message: error.message };
    return { ok: false, kind: 'load', message: `Cannot load the skills from ${origin ?? skillsPath}: ${(error as Error)?.message ?? String(error)}` };
  }
}
