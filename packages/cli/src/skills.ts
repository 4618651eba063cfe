/**
 * Resolving the skills for a plan: `--skills` wins, else the nearest config's `skills`. Each
 * file is loaded once per process. A module's top-level code gets LIGHTSOP_SKILLS_TIMEOUT (30 s by
 * default) to finish, and one that waits for a promise nothing can settle is reported at once:
 * loading never hangs and never ends the process silently.
 */
import path from 'node:path';
import { loadSkillsFile, SkillsLoadError, SkillsLoadTimeoutError, type LoadedSkills } from '@lightsop/runtime';
import { findConfig } from './config';
import { parseDuration } from './duration';
import { CliError } from './errors';
import { leaveWorkBehind, unlessStuck } from './idle';

const loaded = new Map<string, Promise<LoadedSkills>>();

/** How long a skills module may take to load when LIGHTSOP_SKILLS_TIMEOUT is not set. */
export const DEFAULT_SKILLS_TIMEOUT_MS = 30_000;

/** LIGHTSOP_SKILLS_TIMEOUT as milliseconds, or the default; a bad value is a usage error. */
function skillsTimeout(exitCode: number): number {
  const value = process.env.LIGHTSOP_SKILLS_TIMEOUT;
  if (value === undefined || value.trim() === '') return DEFAULT_SKILLS_TIMEOUT_MS;
  try {
    return parseDuration(value);
  } catch (error) {
    throw new CliError(`LIGHTSOP_SKILLS_TIMEOUT: ${(error as Error).message}`, exitCode);
  }
}

/** Loads a skills file (JSON description or module), mapping problems to a CliError. */
export async function loadSkills(file: string, exitCode: number, cwd: string): Promise<LoadedSkills> {
  const absolute = path.resolve(cwd, file);
  let promise = loaded.get(absolute);
  if (!promise) {
    const stuck = () => new SkillsLoadError(absolute, `${absolute}: the skills module never finished loading: its top-level await was still pending with nothing left that could settle it`);
    promise = unlessStuck(loadSkillsFile(absolute, { timeoutMs: skillsTimeout(exitCode) }), stuck);
    loaded.set(absolute, promise);
  }
  try {
    return await promise;
  } catch (error) {
    if (error instanceof SkillsLoadTimeoutError) {
      // The module may still be running (its timers keep the process alive): do not wait for it.
      leaveWorkBehind();
      throw new CliError(`${error.message.split(absolute).join(path.relative(cwd, absolute) || absolute)} (LIGHTSOP_SKILLS_TIMEOUT sets the limit)`, exitCode);
    }
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
