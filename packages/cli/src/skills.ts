/**
 * Resolving the skills for a plan: `--skills` wins, else the nearest config's `skills`. Each
 * file is loaded once per process.
 */
import path from 'node:path';
import { loadSkillsFile, SkillsLoadError, type LoadedSkills } from '@lightsop/runtime';
import { findConfig } from './config';
import { CliError } from './errors';

const loaded = new Map<string, Promise<LoadedSkills>>();

/** Loads a skills file (JSON description or module), mapping problems to a CliError. */
export async function loadSkills(file: string, exitCode: number, cwd: string): Promise<LoadedSkills> {
  const absolute = path.resolve(cwd, file);
  let promise = loaded.get(absolute);
  if (!promise) {
    promise = loadSkillsFile(absolute);
    loaded.set(absolute, promise);
  }
  try {
    return await promise;
  } catch (error) {
    if (error instanceof SkillsLoadError || error instanceof TypeError) {
      throw new CliError(error.message.split(absolute).join(path.relative(cwd, absolute) || absolute), exitCode);
    }
    throw error;
  }
}

/** The skills file that applies to a plan in `dir`: the flag, else the config's, else none. */
export function skillsPathFor(flag: string | undefined, dir: string, cwd: string): string | undefined {
  if (flag) return path.resolve(cwd, flag);
  return findConfig(dir)?.skills;
}
