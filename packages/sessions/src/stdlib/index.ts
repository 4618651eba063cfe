/**
 * The standard skills: read and list files (confined to a workspace root), write and edit
 * files, run a shell command, fetch a URL. They form one command registry (usable by plans,
 * SOP sessions and, through `toolsFromRegistry`, loop sessions). Every command with a side
 * effect asks for approval before acting: a call that a session's supervisor already approved
 * runs; otherwise the registry's own supervisor is asked; without one the call is refused. What an
 * approval did not cover (a redirect of fetch_url to another origin) is asked the same way.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { CommandSurface, readRegistryCommands } from '@lightsop/core';
import type { CommandPayload, CommandRegistry, Responder } from '@lightsop/runtime';
import { errorText } from '../control';
import { denialText, followUpApprover, isSupervised, normalizeDecision, type FollowUpRequest } from '../supervisor';
import type { CommandInfo, Supervisor } from '../types';
import { editWorkspaceFile, listWorkspaceFolder, readWorkspaceFile, realRoot, writeWorkspaceFile } from './workspace';

export { WorkspacePathError, resolveInWorkspace, readWorkspaceFile } from './workspace';

export interface StandardSkillsOptions {
  /** The workspace root; file skills never leave it. */
  root: string;
  /** Asked before side effects that no session supervisor approved. */
  supervisor?: Supervisor | null;
  /** Largest file read_file returns and edit_file edits, in bytes (default 1 MiB). */
  maxReadBytes?: number;
  /** Most entries list_files returns (default 1000). */
  maxListEntries?: number;
  shell?: { timeoutMs?: number; maxOutputBytes?: number; shell?: string };
  fetch?: { timeoutMs?: number; maxBytes?: number; maxRedirects?: number };
  /** Which commands to offer (default: all). */
  include?: readonly StandardSkillName[];
}

export type StandardSkillName = 'read_file' | 'list_files' | 'write_file' | 'edit_file' | 'run_shell' | 'fetch_url';

interface Skill {
  info: CommandInfo;
  run(args: Record<string, string>, payload: CommandPayload): Promise<string>;
  params: readonly string[];
  /** How a single-argument call (a loop tool input) is split when it is not JSON. */
  splitSingle?: (input: string) => Record<string, string> | null;
}

/** Where the standard skills' commands come from, for hosts that show it. */
const STANDARD_SKILLS_SOURCE = { kind: 'registry', name: 'standard skills' } as const;

const md = (summary: string, input: string) => `## Summary\n${summary}\n\n## Input Format\n${input}`;

/** Reads named arguments: positional, or one JSON object, or the skill's own single-input form. */
function readArgs(skill: Skill, payload: CommandPayload): Record<string, string> {
  const args = payload.args.map((a) => (a === null || a === undefined ? '' : typeof a === 'string' ? a : JSON.stringify(a)));
  if (args.length === 1 && skill.params.length > 1) {
    const single = args[0]!.trim();
    if (single.startsWith('{')) {
      try {
        const parsed = JSON.parse(single) as Record<string, unknown>;
        const out: Record<string, string> = {};
        for (const p of skill.params) if (parsed[p] !== undefined && parsed[p] !== null) out[p] = typeof parsed[p] === 'string' ? (parsed[p] as string) : JSON.stringify(parsed[p]);
        return out;
      } catch {
        // Not JSON: fall through to the single-input form.
      }
    }
    const split = skill.splitSingle?.(args[0]!);
    if (split) return split;
  }
  const out: Record<string, string> = {};
  skill.params.forEach((p, i) => {
    if (args[i] !== undefined) out[p] = args[i]!;
  });
  // Extra positional arguments belong to the last parameter (text with spaces passed unquoted).
  if (args.length > skill.params.length && skill.params.length > 0) {
    const last = skill.params[skill.params.length - 1]!;
    out[last] = args.slice(skill.params.length - 1).join(' ');
  }
  return out;
}

function required(args: Record<string, string>, name: string, command: string): string {
  const v = args[name];
  if (v === undefined || v === '') throw new Error(`${command} needs ${name}`);
  return v;
}

function firstLineSplit(first: string, rest: string) {
  return (input: string): Record<string, string> | null => {
    const i = input.indexOf('\n');
    if (i < 0) return null;
    return { [first]: input.slice(0, i).trim(), [rest]: input.slice(i + 1) };
  };
}

// How long output may still arrive after the command exited. A process that left the command's
// process group (`setsid`, a daemon) can hold the pipes open for ever; it is not waited for.
const DRAIN_MS = 500;
// How long after a kill the call settles even if the exit is never reported.
const KILL_GRACE_MS = 2000;

/**
 * Runs a shell command in `cwd` in its own process group; resolves with the exit code and capped
 * output. On timeout or abort the whole group is killed. The call always settles: on `close`, or
 * shortly after the command's exit (pipes held by a detached grandchild are then closed on our
 * side), or shortly after a kill. Processes that left the group are not tracked or killed.
 */
function runShell(command: string, cwd: string, options: { timeoutMs: number; maxOutputBytes: number; shell?: string; signal?: AbortSignal }): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new Error('run_shell was interrupted before it started'));
      return;
    }
    const child = spawn(command, { cwd, shell: options.shell ?? true, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true, detached: process.platform !== 'win32' });
    let stdout = '';
    let stderr = '';
    let bytes = 0;
    let truncated = false;
    let timedOut = false;
    let settled = false;
    let exitCode: number | null = null;
    let drain: NodeJS.Timeout | undefined;
    let grace: NodeJS.Timeout | undefined;
    const kill = () => {
      try {
        if (process.platform !== 'win32' && child.pid) process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // Already gone.
      }
      grace ??= setTimeout(() => finish(exitCode), KILL_GRACE_MS);
    };
    const take = (chunk: Buffer, to: 'out' | 'err') => {
      if (bytes >= options.maxOutputBytes) {
        truncated = true;
        return;
      }
      const room = options.maxOutputBytes - bytes;
      const text = chunk.subarray(0, room).toString('utf8');
      if (chunk.length > room) truncated = true;
      bytes += Math.min(chunk.length, room);
      if (to === 'out') stdout += text;
      else stderr += text;
    };
    child.stdout!.on('data', (c: Buffer) => take(c, 'out'));
    child.stderr!.on('data', (c: Buffer) => take(c, 'err'));
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    const onAbort = () => kill();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    function finish(code: number | null, error?: Error): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drain);
      clearTimeout(grace);
      options.signal?.removeEventListener('abort', onAbort);
      // Our ends of the pipes: a grandchild outside the group may still hold the other ends.
      child.stdout!.destroy();
      child.stderr!.destroy();
      if (error) reject(error);
      else resolve({ code, stdout, stderr, timedOut, truncated });
    }
    child.on('error', (error) => finish(null, error));
    child.on('exit', (code) => {
      exitCode = code;
      drain ??= setTimeout(() => finish(exitCode), DRAIN_MS);
    });
    child.on('close', (code) => finish(exitCode ?? code));
  });
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function checkScheme(url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`fetch_url only fetches http and https URLs, not ${url.protocol}`);
}

/** Reads a response body as it streams in, stopping (and cancelling the rest) at `maxBytes`. */
async function readCapped(response: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (total + value.length > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - total));
      total = maxBytes;
      truncated = true;
      await reader.cancel().catch(() => undefined);
      break;
    }
    chunks.push(value);
    total += value.length;
  }
  return { text: Buffer.concat(chunks.map((c) => Buffer.from(c))).toString('utf8'), truncated };
}

/** The standard skills as one command registry. */
export function createStandardSkills(options: StandardSkillsOptions): CommandRegistry & { readonly root: string } {
  const root = path.resolve(options.root);
  const maxRead = options.maxReadBytes ?? 1024 * 1024;
  const maxList = options.maxListEntries ?? 1000;
  const shellTimeout = options.shell?.timeoutMs ?? 60_000;
  const shellMax = options.shell?.maxOutputBytes ?? 64 * 1024;
  const fetchTimeout = options.fetch?.timeoutMs ?? 30_000;
  const fetchMax = options.fetch?.maxBytes ?? 1024 * 1024;
  const fetchRedirects = options.fetch?.maxRedirects ?? 5;

  const skills: Record<StandardSkillName, Skill> = {
    read_file: {
      info: { name: 'read_file', sideEffects: false, description: md('Reads a text file inside the workspace and returns its content.', 'read_file PATH (relative to the workspace root).') },
      params: ['path'],
      async run(args, payload) {
        const { text } = await readWorkspaceFile(root, required(args, 'path', 'read_file'), { maxBytes: maxRead, signal: payload.signal });
        return text;
      },
    },
    list_files: {
      info: { name: 'list_files', sideEffects: false, description: md('Lists the files of a folder inside the workspace, one per line (folders end with /).', 'list_files [PATH] [recursive] (PATH defaults to the workspace root).') },
      params: ['path', 'recursive'],
      splitSingle: (input) => {
        const m = /^(.*?)(?:\s+(recursive))?\s*$/.exec(input.trim());
        return { path: m?.[1] || '.', ...(m?.[2] ? { recursive: 'recursive' } : {}) };
      },
      async run(args) {
        const recursive = /^(recursive|true|yes|-r|--recursive)$/i.test(args.recursive ?? '');
        const target = args.path && args.path.trim() !== '' ? args.path : '.';
        const { entries, truncated } = await listWorkspaceFolder(root, target, { recursive, maxEntries: maxList, skip: (name) => name === '.git' || name === 'node_modules' });
        if (truncated) entries.push(`… (listing stopped at ${maxList} entries)`);
        return entries.join('\n');
      },
    },
    write_file: {
      info: { name: 'write_file', sideEffects: true, description: md('Writes a text file inside the workspace (creating folders; replacing an existing file).', 'write_file PATH CONTENT; as one input: the path on the first line and the content on the following lines, or JSON {"path","content"}.') },
      params: ['path', 'content'],
      splitSingle: firstLineSplit('path', 'content'),
      async run(args) {
        const { bytes, display } = await writeWorkspaceFile(root, required(args, 'path', 'write_file'), args.content ?? '');
        return `Wrote ${bytes} bytes to ${display}`;
      },
    },
    edit_file: {
      info: { name: 'edit_file', sideEffects: true, description: md('Replaces one exact occurrence of a text in a file inside the workspace.', 'edit_file PATH OLD_TEXT NEW_TEXT; as one input: JSON {"path","old","new"}. OLD_TEXT must occur exactly once.') },
      params: ['path', 'old', 'new'],
      async run(args, payload) {
        const target = required(args, 'path', 'edit_file');
        const oldText = required(args, 'old', 'edit_file');
        const newText = args.new ?? '';
        const { display } = await editWorkspaceFile(root, target, (text) => {
          const first = text.indexOf(oldText);
          if (first < 0) throw new Error(`the text to replace does not occur in ${target}`);
          if (text.indexOf(oldText, first + 1) >= 0) throw new Error(`the text to replace occurs more than once in ${target}; give more context`);
          return text.slice(0, first) + newText + text.slice(first + oldText.length);
        }, { maxBytes: maxRead, signal: payload.signal });
        return `Edited ${display}: replaced ${oldText.length} characters with ${newText.length}`;
      },
    },
    run_shell: {
      info: { name: 'run_shell', sideEffects: true, description: md('Runs a shell command in the workspace root and returns its standard output; a non-zero exit fails with the error output.', 'run_shell COMMAND (one shell command line).') },
      params: ['command'],
      async run(args, payload) {
        const command = required(args, 'command', 'run_shell');
        const cwd = await realRoot(root);
        const r = await runShell(command, cwd, { timeoutMs: shellTimeout, maxOutputBytes: shellMax, shell: options.shell?.shell, signal: payload.signal });
        if (payload.signal?.aborted) throw new Error('run_shell was interrupted');
        const note = r.truncated ? `\n… (output cut at ${shellMax} bytes)` : '';
        if (r.timedOut) throw new Error(`the command timed out after ${shellTimeout} ms${r.stderr ? `: ${r.stderr.trim()}` : ''}`);
        if (r.code !== 0) throw new Error(`exit code ${r.code}${r.stderr.trim() ? `: ${r.stderr.trim()}` : r.stdout.trim() ? `: ${r.stdout.trim()}` : ''}${note}`);
        return r.stdout.replace(/\s+$/, '') + note;
      },
    },
    fetch_url: {
      info: { name: 'fetch_url', sideEffects: true, description: md('Fetches a URL with HTTP GET and returns the response body as text.', 'fetch_url URL (http or https).') },
      params: ['url'],
      async run(args, payload) {
        const raw = required(args, 'url', 'fetch_url').trim();
        let url: URL;
        try {
          url = new URL(raw);
        } catch {
          throw new Error(`${raw} is not a URL`);
        }
        checkScheme(url);
        const signals = [AbortSignal.timeout(fetchTimeout)];
        if (payload.signal) signals.push(payload.signal);
        const signal = AbortSignal.any(signals);
        // Redirects are followed here, not by fetch: the approval covered the first URL's origin
        // only, so each other origin a redirect leads to is asked about before it is requested.
        const approvedOrigins = new Set([url.origin]);
        for (let redirects = 0; ; redirects++) {
          const response = await fetch(url, { signal, redirect: 'manual' });
          const location = REDIRECTS.has(response.status) ? response.headers.get('location') : null;
          if (location === null) {
            const { text, truncated } = await readCapped(response, fetchMax);
            if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
            return truncated ? `${text}\n… (body cut at ${fetchMax} bytes)` : text;
          }
          await response.body?.cancel().catch(() => undefined);
          if (redirects >= fetchRedirects) throw new Error(`fetch_url stopped after ${fetchRedirects} redirects (too many redirects) at ${url.href}`);
          let next: URL;
          try {
            next = new URL(location, url);
          } catch {
            throw new Error(`${url.href} redirected to ${location}, which is not a URL`);
          }
          checkScheme(next);
          if (!approvedOrigins.has(next.origin)) {
            await approveFollowUp(payload, { toolName: 'fetch_url', args: [next.href], reason: `redirected from ${url.href}` });
            approvedOrigins.add(next.origin);
          }
          url = next;
        }
      },
    },
  };

  const offered = (options.include ?? (Object.keys(skills) as StandardSkillName[])).filter((n) => skills[n]);

  /** Asks the registry's own supervisor; throws the denial text when it denies or there is none. */
  async function askOwnSupervisor(toolName: string, params: { args: unknown[]; raw: string }, payload: CommandPayload, reason: string | undefined): Promise<void> {
    const supervisor = options.supervisor;
    if (!supervisor) throw new Error(denialText(toolName, params, 'no supervisor is available to approve a side effect'));
    const signal = payload.signal ?? new AbortController().signal;
    let decision;
    try {
      decision = normalizeDecision(await supervisor.approve({ toolName, params, origin: 'sop', variable: payload.variable, ...(reason ? { reason } : {}), sideEffects: true }, { signal }));
    } catch (error) {
      decision = { decision: 'deny' as const, reason: `the supervisor failed: ${errorText(error)}` };
    }
    if (signal.aborted) throw new Error(`${toolName} was interrupted before it ran`);
    if (decision.decision === 'deny') throw new Error(denialText(toolName, params, decision.reason));
  }

  async function approve(skill: Skill, payload: CommandPayload): Promise<void> {
    if (skill.info.sideEffects === false || isSupervised(payload)) return;
    await askOwnSupervisor(skill.info.name, { args: [...payload.args], raw: payload.raw }, payload, payload.comment || undefined);
  }

  /**
   * Asks about a follow-up of an approved call: through the session supervisor that approved the
   * call when there is one, else through the registry's own supervisor; refuses without either.
   */
  async function approveFollowUp(payload: CommandPayload, request: FollowUpRequest): Promise<void> {
    const what = `${request.toolName} ${request.args.join(' ')}`;
    const refused = (text: string) => new Error(`${request.args.join(' ')} (${request.reason}) was not approved, so it was not followed.\n${text}`);
    const viaSession = followUpApprover(payload);
    if (viaSession) {
      // An interruption while asking propagates as it is, so the session sees an interruption.
      const gate = await viaSession(request);
      if (!gate.approved) throw refused(gate.text);
      return;
    }
    try {
      await askOwnSupervisor(request.toolName, { args: [...request.args], raw: what }, payload, request.reason);
    } catch (error) {
      throw refused(errorText(error));
    }
  }

  return {
    root,
    listCommands: () => offered.map((n) => ({ ...skills[n].info, parameters: [...skills[n].params], source: STANDARD_SKILLS_SOURCE })),
    async executeCommand(payload: CommandPayload, responder: Responder) {
      const name = payload.command as StandardSkillName;
      if (!offered.includes(name)) throw new Error(`Unknown command ${payload.command}`);
      const skill = skills[name];
      await approve(skill, payload);
      return responder.success(await skill.run(readArgs(skill, payload), payload));
    },
  };
}

/** Combines registries: the first one listing a command runs it (and describes it). */
export function combineRegistries(...registries: (CommandRegistry | null | undefined)[]): CommandRegistry {
  const list = registries.filter((r): r is CommandRegistry => Boolean(r));
  return {
    listCommands: () => new CommandSurface(list.map((r) => readRegistryCommands(r))).commands,
    executeCommand(payload, responder) {
      const r = list.find((candidate) => readRegistryCommands(candidate).some((c) => c.name === payload.command));
      if (!r) throw new Error(`Unknown command ${payload.command}`);
      return r.executeCommand(payload, responder);
    },
  };
}
