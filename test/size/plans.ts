/**
 * Plans of 200,000 declarations (or comment lines) for the size tests: large enough that a spread
 * of one argument per declaration into a call overflows V8's stack (about 125,000 arguments), and
 * that work quadratic in the declarations cannot finish within the tests' timeouts.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../helpers/cli';

export const SIZE = 200_000;

/** `@v0 assign start`, then each `@vN` assigns `$v(N-1)`: one chain of SIZE declarations. */
export function chainPlan(n = SIZE): string {
  const lines = ['@v0 assign start'];
  for (let i = 1; i < n; i++) lines.push(`@v${i} assign $v${i - 1}`);
  return lines.join('\n') + '\n';
}

/** Each `@vN` depends on `$v(N+1)` and the last on `$v0`: one cycle of SIZE members. */
export function cyclePlan(n = SIZE): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push(`@v${i} assign $v${(i + 1) % n}`);
  return lines.join('\n') + '\n';
}

/** SIZE comment lines attached to `@a`, then SIZE more attached to `@b`. */
export function commentsPlan(n = SIZE, indent = ''): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push(`${indent}# note ${i}`);
  lines.push('@a assign x');
  for (let i = 0; i < n; i++) lines.push(`${indent}# more ${i}`);
  lines.push('@b assign $a');
  return lines.join('\n') + '\n';
}

export interface BuiltRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built `lightsop` binary without a buffer limit (a 200k-declaration run prints tens of
 * megabytes) and kills it when it outlives `timeoutMs`, so a hang fails the test instead of
 * leaving a process behind.
 */
export function runBuilt(args: string[], options: { cwd: string; timeoutMs?: number; env?: Record<string, string>; input?: string }): Promise<BuiltRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'packages/cli/bin/lightsop.js'), ...args], {
      cwd: options.cwd,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.end(options.input ?? '');
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 80_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}
