/**
 * `lightsop.config.json`: found by walking up from each plan file; paths inside it are relative
 * to the file. An invalid file is an error naming the file and the field (exit 3).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_FILE, parseConfigText, type McpServerEntry } from '@lightsop/core';
import { readLimitedTextFileSync, UnreadableFileError } from '@lightsop/runtime/skills';
import { CliError, CONFIG_ERROR_EXIT } from './errors';

export { CONFIG_FILE };

export interface LlmConfig {
  readonly baseUrl?: string;
  readonly model?: string;
  /** `llm.timeout`: per request attempt, in milliseconds. */
  readonly timeoutMs?: number;
  /** `llm.retries`. */
  readonly maxRetries?: number;
  /** `llm.maxTokens`: the token budget of an english plan or a chat session. */
  readonly maxTokens?: number;
}

export interface Config {
  /** Absolute path of the config file. */
  readonly file: string;
  readonly dir: string;
  /** Absolute path of the skills file, when set. */
  readonly skills?: string;
  readonly plans?: readonly string[];
  readonly llm?: LlmConfig;
  /** `mcpServers` as written: `resolvedServers` in mcp.ts expands the values when a command needs them. */
  readonly mcpServers?: readonly McpServerEntry[];
}

function fail(file: string, message: string): never {
  throw new CliError(`${file}: ${message}`, CONFIG_ERROR_EXIT);
}

/** Parses and checks a config file's text; the first problem is the error (exit 3). */
export function parseConfig(text: string, file: string): Config {
  const { config, problems } = parseConfigText(text);
  const first = problems.find((p) => p.severity === 'error');
  if (first || !config) return fail(file, first?.message ?? 'invalid configuration');
  const dir = path.dirname(file);
  return {
    file,
    dir,
    skills: config.skills === null ? undefined : path.resolve(dir, config.skills),
    plans: config.plans ?? undefined,
    llm: config.llm ?? undefined,
    mcpServers: config.mcpServers ?? undefined,
  };
}

/**
 * Reads and checks one config file (an absolute path): only a regular file, and at most 8 MiB of
 * it (a repository may ship a FIFO or a device). A problem is an error naming the file (exit 3).
 */
export function readConfigFile(file: string): Config {
  let text: string;
  try {
    text = readLimitedTextFileSync(file);
  } catch (error) {
    if (error instanceof UnreadableFileError) fail(file, `cannot read (${error.reason})`);
    fail(file, `cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return parseConfig(text, file);
}

const cache = new Map<string, Config | null>();

/**
 * The nearest config at or above `dir`, or null. Answers are cached for the life of the process
 * (one command); `fresh` reads again, for a long-lived server that must see edits.
 */
export function findConfig(dir: string, options: { fresh?: boolean } = {}): Config | null {
  const start = path.resolve(dir);
  if (options.fresh) for (let d = start; ; d = path.dirname(d)) {
    cache.delete(d);
    if (path.dirname(d) === d) break;
  }
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
      found = readConfigFile(candidate);
      break;
    }
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const v of visited) cache.set(v, found);
  return found;
}
