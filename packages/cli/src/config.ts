/**
 * `lightsop.config.json`: found by walking up from each plan file; paths inside it are relative
 * to the file. An invalid file is an error naming the file and the field (exit 3).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { suggest } from '@lightsop/core';
import { CliError, CONFIG_ERROR_EXIT } from './errors';

export const CONFIG_FILE = 'lightsop.config.json';

export interface LlmConfig {
  readonly baseUrl?: string;
  readonly model?: string;
}

export interface Config {
  /** Absolute path of the config file. */
  readonly file: string;
  readonly dir: string;
  /** Absolute path of the skills file, when set. */
  readonly skills?: string;
  readonly plans?: readonly string[];
  readonly llm?: LlmConfig;
}

const KEYS = ['skills', 'plans', 'llm'];
const LLM_KEYS = ['baseUrl', 'model'];

function fail(file: string, message: string): never {
  throw new CliError(`${file}: ${message}`, CONFIG_ERROR_EXIT);
}

/** Parses and checks a config file's text. */
export function parseConfig(text: string, file: string): Config {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    fail(file, `invalid JSON (${(error as Error).message})`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(file, 'the configuration must be a JSON object');
  const obj = raw as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (!KEYS.includes(key)) {
      const hint = suggest(key, KEYS);
      fail(file, `unknown field "${key}"${hint.length ? ` (did you mean "${hint[0]}"?)` : ''}; allowed fields: ${KEYS.join(', ')}`);
    }
  }
  const dir = path.dirname(file);
  let skills: string | undefined;
  if (obj.skills !== undefined) {
    if (typeof obj.skills !== 'string' || obj.skills.trim() === '') fail(file, 'field "skills" must be a non-empty string (a path relative to the config file)');
    skills = path.resolve(dir, obj.skills);
  }
  let plans: string[] | undefined;
  if (obj.plans !== undefined) {
    if (!Array.isArray(obj.plans) || !obj.plans.every((p) => typeof p === 'string' && p !== '')) {
      fail(file, 'field "plans" must be an array of glob strings');
    }
    plans = obj.plans as string[];
  }
  let llm: LlmConfig | undefined;
  if (obj.llm !== undefined) {
    if (typeof obj.llm !== 'object' || obj.llm === null || Array.isArray(obj.llm)) fail(file, 'field "llm" must be an object with "baseUrl" and "model"');
    const l = obj.llm as Record<string, unknown>;
    for (const key of Object.keys(l)) {
      if (/key|token|secret/i.test(key)) fail(file, `field "llm.${key}" is not allowed: keep API keys in the LIGHTSOP_LLM_API_KEY environment variable`);
      if (!LLM_KEYS.includes(key)) fail(file, `unknown field "llm.${key}"; allowed fields: ${LLM_KEYS.map((k) => `llm.${k}`).join(', ')}`);
    }
    if (l.baseUrl !== undefined && (typeof l.baseUrl !== 'string' || !/^https?:\/\//.test(l.baseUrl))) fail(file, 'field "llm.baseUrl" must be an http(s) URL');
    if (l.model !== undefined && (typeof l.model !== 'string' || l.model === '')) fail(file, 'field "llm.model" must be a non-empty string');
    llm = { baseUrl: l.baseUrl as string | undefined, model: l.model as string | undefined };
  }
  return { file, dir, skills, plans, llm };
}

const cache = new Map<string, Config | null>();

/** The nearest config at or above `dir`, or null. */
export function findConfig(dir: string): Config | null {
  const start = path.resolve(dir);
  const visited: string[] = [];
  let current = start;
  let found: Config | null = null;
  for (;;) {
    if (cache.has(current)) {
      found = cache.get(current)!;
      break;
    }
    visited.push(current);
    const candidate = path.join(current, CONFIG_FILE);
    if (existsSync(candidate)) {
      let text: string;
      try {
        text = readFileSync(candidate, 'utf8');
      } catch (error) {
        fail(candidate, `cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
      }
      found = parseConfig(text, candidate);
      break;
    }
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const v of visited) cache.set(v, found);
  return found;
}
