/**
 * Resolving the skills for a plan: `--skills` wins, else the nearest config's `skills`. Each
 * file is loaded once per process by the runtime's one skills loader (its export rule and its
 * LIGHTSOP_SKILLS_TIMEOUT limit). On top of it the CLI reports at once a module that waits for a
 * promise nothing can settle: loading never hangs and never ends the process silently.
 */
import path from 'node:path';
import { loadSkillsFile, SkillsLoadError, SkillsLoadTimeoutError, SkillsTimeoutSettingError, type LoadedSkills } from '@lightsop/runtime/skills';
import { findConfig } from './config';
import { CliError } from './errors';
import { leaveWorkBehind, unlessStuck } from './idle';

const loaded = new Map<string, Promise<LoadedSkills>>();

/** Loads a skills file (JSON description or module), mapping problems to a CliError. */
export async function loadSkills(file: string, exitCode: number, cwd: string): Promise<LoadedSkills> {
  const absolute = path.resolve(cwd, file);
  const shown = path.relative(cwd, absolute) || absolute;
  let promise = loaded.get(absolute);
  if (!promise) {
    const stuck = () => new SkillsLoadError(shown, 'the skills module never finished loading: its top-level await was still pending with nothing left that could settle it', 'timeout');
    promise = unlessStuck(loadSkillsFile(absolute), stuck);
    loaded.set(absolute, promise);
  }
  try {
    return await promise;
  } catch (error) {
    // The module may still be running (its timers keep the process alive): do not wait for it.
    if (error instanceof SkillsLoadTimeoutError) leaveWorkBehind();
    if (error instanceof SkillsLoadError) throw new CliError(`${shown}: ${error.reason}`, exitCode);
    if (error instanceof SkillsTimeoutSettingError) throw new CliError(error.message, exitCode);
    throw error;
  }
}

/** The skills file that applies to a plan in `dir`: the flag, else the config's, else none. */
export function skillsPathFor(flag: string | undefined, dir: string, cwd: string): string | undefined {
  if (flag) return path.resolve(cwd, flag);
  return findConfig(dir)?.skills;
}
