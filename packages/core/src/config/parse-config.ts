/**
 * `lightsop.config.json` (contract.md): `skills`, `plans`, `llm` and `mcpServers` (docs/mcp.md). Pure: hosts read the file.
 * Every problem is reported with the offsets of the field it is about, so the CLI can name the
 * field and the language server can put a diagnostic on it; a problem in one field does not
 * discard the others. API keys are refused: they belong in the environment or SecretStorage.
 */
import { suggest } from '../validate/suggest';
import { readMcpServers, type McpServerEntry } from './mcp-servers';

export const CONFIG_FILE = 'lightsop.config.json';

/** Half-open offsets in the config text. */
export interface OffsetSpan {
  readonly start: number;
  readonly end: number;
}

/** Codes of problems with a config file (plan codes are in diagnostics/codes.ts). */
export type ConfigProblemCode = 'invalid-config' | 'skills-not-loaded';

export interface ConfigProblem {
  readonly code: ConfigProblemCode;
  readonly severity: 'error' | 'warning';
  /** Names the field; the host adds the file. */
  readonly message: string;
  readonly span: OffsetSpan;
}

export interface WorkspaceConfig {
  /** The `skills` path as written (relative to the config file), or null. */
  readonly skills: string | null;
  /** Where the `skills` value is, for problems about the skills file. */
  readonly skillsSpan: OffsetSpan | null;
  readonly plans: readonly string[] | null;
  /** `timeoutMs` is per request attempt; `maxRetries` counts retries after the first attempt. */
  readonly llm: { readonly baseUrl?: string; readonly model?: string; readonly timeoutMs?: number; readonly maxRetries?: number; readonly maxTokens?: number } | null;
  /** The well-formed `mcpServers` entries (values not expanded yet: `resolveMcpServer`), or null without the field. */
  readonly mcpServers: readonly McpServerEntry[] | null;
}

export interface ParsedConfig {
  /** Null when the text is not a JSON object at all. */
  readonly config: WorkspaceConfig | null;
  readonly problems: readonly ConfigProblem[];
}

interface FieldLocation {
  readonly key: OffsetSpan;
  readonly value: OffsetSpan;
}

const KEYS = ['skills', 'plans', 'llm', 'mcpServers'];
const LLM_KEYS = ['baseUrl', 'model', 'timeout', 'retries', 'maxTokens'];

/** The longest duration accepted: Node's timers cannot wait longer than 2^31 - 1 ms (~24.8 days). */
export const MAX_DURATION_MS = 24 * 24 * 3600 * 1000;

/**
 * A duration as the CLI's flags and the config write it: seconds as a number, or a string with
 * `ms`, `s` or `m` (`"30s"`, `"500ms"`, `"2m"`). Null when it is not one, when it is zero (unless
 * `allowZero`), or when it is longer than 24 days, which Node's timers would silently turn into an
 * immediate expiry. The one duration parser of the toolchain.
 */
export function parseDurationMs(value: unknown, options: { allowZero?: boolean } = {}): number | null {
  let ms: number;
  if (typeof value === 'number') ms = value * 1000;
  else if (typeof value === 'string') {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
    if (!m) return null;
    const n = Number(m[1]);
    ms = m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
  } else return null;
  if (!Number.isFinite(ms) || ms < 0 || (ms === 0 && !options.allowZero) || ms > MAX_DURATION_MS) return null;
  return ms;
}

/** True when an http(s) URL carries a user name or password: keys belong in the environment. */
function urlHasCredentials(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== '' || parsed.password !== '';
  } catch {
    return false;
  }
}

/**
 * Where each object field of a valid JSON text is, by dotted path (`skills`, `llm.model`).
 * Only called after JSON.parse accepted the text, so it can be a small permissive scanner.
 */
function locateFields(text: string, from: number): Map<string, FieldLocation> {
  const out = new Map<string, FieldLocation>();
  let i = from;
  const skip = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const readString = (): { span: OffsetSpan; value: string } => {
    const start = i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return { span: { start, end: i }, value: JSON.parse(text.slice(start, i)) as string };
  };
  const readValue = (path: string | null): OffsetSpan => {
    skip();
    const start = i;
    const c = text[i];
    if (c === '"') return readString().span;
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      skip();
      if (text[i] === close) return { start, end: ++i };
      for (;;) {
        skip();
        if (c === '{') {
          const key = readString();
          skip();
          i++; // the colon
          const childPath = path === null ? null : path === '' ? key.value : `${path}.${key.value}`;
          const value = readValue(childPath);
          if (childPath !== null && !out.has(childPath)) out.set(childPath, { key: key.span, value });
        } else readValue(null);
        skip();
        if (text[i] === ',') {
          i++;
          continue;
        }
        i++;
        return { start, end: i };
      }
    }
    while (i < text.length && !',}] \t\r\n'.includes(text[i]!)) i++;
    return { start, end: i };
  };
  readValue('');
  return out;
}

/** The offset a JSON.parse error message points at, when it says. */
function syntaxErrorOffset(message: string, text: string): number {
  const at = /at position (\d+)/.exec(message);
  if (at) return Math.min(Number(at[1]), text.length);
  return text.length;
}

/** Parses a config file's text, collecting every problem with its location. */
export function parseConfigText(text: string): ParsedConfig {
  // Editors may save a byte order mark, which JSON.parse rejects.
  const from = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const problems: ConfigProblem[] = [];
  const problem = (message: string, span: OffsetSpan, severity: 'error' | 'warning' = 'error') =>
    problems.push({ code: 'invalid-config', severity, message, span });
  let raw: unknown;
  try {
    raw = JSON.parse(text.slice(from));
  } catch (error) {
    const message = (error as Error).message;
    const at = from + syntaxErrorOffset(message, text.slice(from));
    problem(`invalid JSON (${message})`, { start: Math.min(at, text.length), end: Math.min(at + 1, text.length) });
    return { config: null, problems };
  }
  const whole = { start: from, end: text.length };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problem('the configuration must be a JSON object', whole);
    return { config: null, problems };
  }
  const fields = locateFields(text, from);
  const keySpan = (path: string) => fields.get(path)?.key ?? whole;
  const valueSpan = (path: string) => fields.get(path)?.value ?? whole;
  const obj = raw as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (KEYS.includes(key)) continue;
    const hint = suggest(key, KEYS);
    problem(`unknown field "${key}"${hint.length ? ` (did you mean "${hint[0]}"?)` : ''}; allowed fields: ${KEYS.join(', ')}`, keySpan(key));
  }

  let skills: string | null = null;
  if (obj.skills !== undefined) {
    if (typeof obj.skills !== 'string' || obj.skills.trim() === '') {
      problem('field "skills" must be a non-empty string (a path relative to the config file)', valueSpan('skills'));
    } else skills = obj.skills;
  }

  let plans: string[] | null = null;
  if (obj.plans !== undefined) {
    if (!Array.isArray(obj.plans) || !obj.plans.every((p) => typeof p === 'string' && p !== '')) {
      problem('field "plans" must be an array of glob strings', valueSpan('plans'));
    } else plans = obj.plans as string[];
  }

  let llm: WorkspaceConfig['llm'] = null;
  if (obj.llm !== undefined) {
    if (typeof obj.llm !== 'object' || obj.llm === null || Array.isArray(obj.llm)) {
      problem('field "llm" must be an object with "baseUrl" and "model" (and optionally "timeout" and "retries")', valueSpan('llm'));
    } else {
      const l = obj.llm as Record<string, unknown>;
      let ok = true;
      for (const key of Object.keys(l)) {
        if (/key|token|secret/i.test(key) && !LLM_KEYS.includes(key)) {
          ok = false;
          problem(`field "llm.${key}" is not allowed: keep API keys in the LIGHTSOP_LLM_API_KEY environment variable`, keySpan(`llm.${key}`));
        } else if (!LLM_KEYS.includes(key)) {
          ok = false;
          problem(`unknown field "llm.${key}"; allowed fields: ${LLM_KEYS.map((k) => `llm.${k}`).join(', ')}`, keySpan(`llm.${key}`));
        }
      }
      if (l.baseUrl !== undefined && (typeof l.baseUrl !== 'string' || !/^https?:\/\//.test(l.baseUrl))) {
        ok = false;
        problem('field "llm.baseUrl" must be an http(s) URL', valueSpan('llm.baseUrl'));
      } else if (typeof l.baseUrl === 'string' && urlHasCredentials(l.baseUrl)) {
        ok = false;
        problem('field "llm.baseUrl" must not contain a user name or password: keep API keys in the LIGHTSOP_LLM_API_KEY environment variable', valueSpan('llm.baseUrl'));
      }
      let timeoutMs: number | undefined;
      if (l.timeout !== undefined) {
        const ms = parseDurationMs(l.timeout);
        if (ms === null) {
          ok = false;
          problem('field "llm.timeout" must be a positive duration: seconds as a number, or a string such as "30s", "500ms" or "2m"', valueSpan('llm.timeout'));
        } else timeoutMs = ms;
      }
      if (l.retries !== undefined && !(typeof l.retries === 'number' && Number.isSafeInteger(l.retries) && l.retries >= 0)) {
        ok = false;
        problem('field "llm.retries" must be a non-negative integer', valueSpan('llm.retries'));
      }
      if (l.maxTokens !== undefined && !(typeof l.maxTokens === 'number' && Number.isSafeInteger(l.maxTokens) && l.maxTokens > 0)) {
        ok = false;
        problem('field "llm.maxTokens" must be a positive integer (the tokens an #!english plan or a session may spend)', valueSpan('llm.maxTokens'));
      }
      if (l.model !== undefined && (typeof l.model !== 'string' || l.model === '')) {
        ok = false;
        problem('field "llm.model" must be a non-empty string', valueSpan('llm.model'));
      }
      if (ok) {
        llm = {
          baseUrl: l.baseUrl as string | undefined, model: l.model as string | undefined,
          ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(l.retries !== undefined ? { maxRetries: l.retries as number } : {}),
          ...(l.maxTokens !== undefined ? { maxTokens: l.maxTokens as number } : {}),
        };
      }
    }
  }
  let mcpServers: McpServerEntry[] | null = null;
  if (obj.mcpServers !== undefined) {
    const read = readMcpServers(obj.mcpServers, valueSpan, keySpan);
    for (const p of read.problems) problem(p.message, p.span);
    mcpServers = read.servers;
  }
  return {
    config: { skills, skillsSpan: skills === null ? null : valueSpan('skills'), plans, llm, mcpServers },
    problems,
  };
}
