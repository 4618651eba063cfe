/**
 * The `mcpServers` field of `lightsop.config.json` (docs/mcp.md), in the shape MCP clients already
 * use: `{ NAME: { command, args?, env?, cwd? } }` for stdio and `{ NAME: { url, headers? } }` for
 * Streamable HTTP, with an optional `type` ("stdio" or "http", as `.vscode/mcp.json` writes it) and
 * LightSOPLang's own `bareNames`. Values may reference `${env:NAME}` and `${workspaceFolder}`;
 * `resolveMcpServer` expands them when a host starts the server, so tokens stay out of the file.
 * Pure: the host passes the environment.
 */
import type { OffsetSpan } from './parse-config';

/** A server's name: letters, digits, `_` and `-`. The dot separates it from the tool in `server.tool`. */
export const MCP_SERVER_NAME = /^[A-Za-z0-9_-]+$/;

const SERVER_KEYS = ['type', 'command', 'args', 'env', 'cwd', 'url', 'headers', 'bareNames'];

/** A server's fields, as written in the config or expanded: the same shape before and after. */
interface McpServerFields {
  readonly name: string;
  readonly transport: 'stdio' | 'http';
  readonly command?: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** As written in an entry; absolute once resolved (relative to the config file's folder). */
  readonly cwd?: string;
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Also expose each tool under its bare name when no other command has it. */
  readonly bareNames: boolean;
}

/** One configured server as written (values not yet expanded). */
export interface McpServerEntry extends McpServerFields {
  /** Where the server's name is in the config text: a problem with the server as a whole goes there. */
  readonly span: OffsetSpan;
  /** Where each field's value is, by its path from the config root (`mcpServers.fs.env.TOKEN`). */
  readonly fields: Readonly<Record<string, OffsetSpan>>;
}

/** A server ready to start: every value expanded. Holds secrets: never print it. */
export type ResolvedMcpServer = McpServerFields;

export interface McpFieldProblem {
  /** The field's path from the config root, as messages name it. */
  readonly field: string;
  readonly message: string;
  readonly span: OffsetSpan;
}

/** Names of variables or headers whose literal values are secrets: they must come from `${env:NAME}`. */
const SECRET_NAME = /authorization|token|secret|password|api[-_]?key|cookie/i;

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isStringMap(x: unknown): x is Record<string, string> {
  return isObject(x) && Object.values(x).every((v) => typeof v === 'string');
}

/**
 * Reads `mcpServers` (already parsed JSON). `spanOf(path)` gives where a field's value is and
 * `keySpanOf(path)` where its key is. Returns the well-formed entries and the problems.
 */
export function readMcpServers(
  raw: unknown,
  spanOf: (path: string) => OffsetSpan,
  keySpanOf: (path: string) => OffsetSpan,
): { servers: McpServerEntry[]; problems: McpFieldProblem[] } {
  const servers: McpServerEntry[] = [];
  const problems: McpFieldProblem[] = [];
  const problem = (field: string, message: string, span = spanOf(field)) => problems.push({ field, message: `field "${field}" ${message}`, span });
  if (!isObject(raw)) {
    problem('mcpServers', 'must be an object: server name to { "command", "args", "env", "cwd" } (stdio) or { "url", "headers" } (Streamable HTTP)');
    return { servers, problems };
  }
  for (const name of Object.keys(raw)) {
    const base = `mcpServers.${name}`;
    const value = raw[name];
    if (!MCP_SERVER_NAME.test(name)) {
      problems.push({ field: base, message: `server name "${name}" may only hold letters, digits, "_" and "-" (tools are called as ${'NAME.TOOL'})`, span: keySpanOf(base) });
      continue;
    }
    if (!isObject(value)) {
      problem(base, 'must be an object with "command" (stdio) or "url" (Streamable HTTP)');
      continue;
    }
    const before = problems.length;
    for (const key of Object.keys(value)) {
      if (SERVER_KEYS.includes(key)) continue;
      const hint = key === 'envFile' ? ': put the variables in "env" with ${env:NAME} values' : `; allowed fields: ${SERVER_KEYS.join(', ')}`;
      problems.push({ field: `${base}.${key}`, message: `unknown field "${base}.${key}"${hint}`, span: keySpanOf(`${base}.${key}`) });
    }
    let transport: 'stdio' | 'http' | null = null;
    if (value.type !== undefined) {
      if (value.type === 'stdio') transport = 'stdio';
      else if (value.type === 'http' || value.type === 'streamableHttp') transport = 'http';
      else problem(`${base}.type`, 'must be "stdio" or "http" (Streamable HTTP; the older SSE transport is not supported)');
    }
    if (value.command !== undefined && value.url !== undefined) {
      problem(base, 'has both "command" and "url": a server is either started (stdio) or reached (Streamable HTTP)');
    }
    transport ??= value.url !== undefined ? 'http' : 'stdio';
    const fields: Record<string, OffsetSpan> = {};
    const checkString = (key: string, what: string): string | undefined => {
      const v = value[key];
      if (v === undefined) return undefined;
      fields[`${base}.${key}`] = spanOf(`${base}.${key}`);
      if (typeof v !== 'string' || v.trim() === '') {
        problem(`${base}.${key}`, `must be ${what}`);
        return undefined;
      }
      return v;
    };
    const checkMap = (key: string, what: string): Record<string, string> | undefined => {
      const v = value[key];
      if (v === undefined) return undefined;
      fields[`${base}.${key}`] = spanOf(`${base}.${key}`);
      if (!isStringMap(v)) {
        problem(`${base}.${key}`, `must be an object of strings (${what})`);
        return undefined;
      }
      for (const k of Object.keys(v)) {
        const path = `${base}.${key}.${k}`;
        fields[path] = spanOf(path);
        if (SECRET_NAME.test(k) && !/\$\{env:[^}]+\}/.test(v[k]!)) {
          problem(path, 'looks like a secret written in the file: reference an environment variable instead, e.g. "${env:' + k.toUpperCase().replace(/[^A-Z0-9]+/g, '_') + '}"');
        }
      }
      return v;
    };
    const command = checkString('command', 'a non-empty string (the program to start)');
    const cwd = checkString('cwd', 'a non-empty string (a folder, relative to the config file)');
    const url = checkString('url', 'an http(s) URL');
    const env = checkMap('env', 'variable name to value');
    const headers = checkMap('headers', 'header name to value');
    let args: string[] | undefined;
    if (value.args !== undefined) {
      fields[`${base}.args`] = spanOf(`${base}.args`);
      if (!Array.isArray(value.args) || !value.args.every((a) => typeof a === 'string')) problem(`${base}.args`, 'must be an array of strings');
      else args = value.args as string[];
    }
    if (value.bareNames !== undefined && typeof value.bareNames !== 'boolean') problem(`${base}.bareNames`, 'must be true or false');
    if (transport === 'stdio') {
      if (value.command === undefined) problem(base, 'needs "command" (a stdio server) or "url" (a Streamable HTTP server)');
      if (value.headers !== undefined && value.url === undefined) problem(`${base}.headers`, 'only applies to Streamable HTTP servers ("url")');
    } else {
      if (value.url === undefined) problem(base, 'is an HTTP server and needs "url"');
      else if (url !== undefined && !/^https?:\/\//i.test(url) && !/^\$\{env:[^}]+\}/.test(url)) problem(`${base}.url`, 'must be an http(s) URL');
      if (value.command === undefined) {
        for (const key of ['args', 'env', 'cwd']) {
          if (value[key] !== undefined) problem(`${base}.${key}`, 'only applies to stdio servers ("command")');
        }
      }
    }
    if (problems.length > before) continue;
    fields[base] = keySpanOf(base);
    const entry: { -readonly [K in keyof McpServerEntry]: McpServerEntry[K] } = { name, transport, bareNames: value.bareNames === true, span: keySpanOf(base), fields };
    if (command !== undefined) entry.command = command;
    if (args !== undefined) entry.args = args;
    if (env !== undefined) entry.env = env;
    if (cwd !== undefined) entry.cwd = cwd;
    if (url !== undefined) entry.url = url;
    if (headers !== undefined) entry.headers = headers;
    servers.push(entry);
  }
  return { servers, problems };
}

export interface ResolveContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The folder of the config file: `${workspaceFolder}` and relative `cwd` values. */
  readonly folder: string;
  /** Joins a relative `cwd` to the folder (hosts pass `path.resolve`; core does no path I/O). */
  readonly resolvePath: (folder: string, relative: string) => string;
}

/**
 * Expands `${env:NAME}` and `${workspaceFolder}` in every value of a server. A variable that is
 * not set, or another `${...}` (VS Code's `${input:...}`), is a problem naming the field.
 */
export function resolveMcpServer(entry: McpServerEntry, context: ResolveContext): { server: ResolvedMcpServer | null; problems: McpFieldProblem[] } {
  const problems: McpFieldProblem[] = [];
  const base = `mcpServers.${entry.name}`;
  const expand = (value: string, field: string): string =>
    value.replace(/\$\{([^}]*)\}/g, (whole, inner: string) => {
      if (inner === 'workspaceFolder') return context.folder;
      const m = /^env:([A-Za-z_][A-Za-z0-9_]*)$/.exec(inner);
      if (!m) {
        problems.push({ field, message: `field "${field}": ${whole} is not supported; use \${env:NAME} or \${workspaceFolder}`, span: entry.fields[field] ?? entry.span });
        return whole;
      }
      const v = context.env[m[1]!];
      if (v === undefined) {
        problems.push({ field, message: `field "${field}": the environment variable ${m[1]} is not set`, span: entry.fields[field] ?? entry.span });
        return '';
      }
      return v;
    });
  const map = (m: Readonly<Record<string, string>> | undefined, key: string) => {
    if (!m) return undefined;
    const out: Record<string, string> = {};
    for (const k of Object.keys(m)) out[k] = expand(m[k]!, `${base}.${key}.${k}`);
    return out;
  };
  const server: { -readonly [K in keyof ResolvedMcpServer]: ResolvedMcpServer[K] } = { name: entry.name, transport: entry.transport, bareNames: entry.bareNames };
  if (entry.command !== undefined) server.command = expand(entry.command, `${base}.command`);
  if (entry.args !== undefined) server.args = entry.args.map((a) => expand(a, `${base}.args`));
  const env = map(entry.env, 'env');
  if (env) server.env = env;
  if (entry.cwd !== undefined) server.cwd = context.resolvePath(context.folder, expand(entry.cwd, `${base}.cwd`));
  if (entry.url !== undefined) {
    server.url = expand(entry.url, `${base}.url`);
    if (problems.length === 0 && !/^https?:\/\//i.test(server.url)) {
      problems.push({ field: `${base}.url`, message: `field "${base}.url" must be an http(s) URL`, span: entry.fields[`${base}.url`] ?? entry.span });
    }
  }
  const headers = map(entry.headers, 'headers');
  if (headers) server.headers = headers;
  return problems.length > 0 ? { server: null, problems } : { server, problems };
}
