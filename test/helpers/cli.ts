/** Runs the CLI in-process (runCli with a captured Io) or as the built binary. */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '../../packages/cli/src/main';

export const repoRoot = path.resolve(__dirname, '../..');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function cli(args: string[], options: { cwd?: string; isTTY?: boolean } = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    cwd: options.cwd ?? repoRoot,
    isTTY: options.isTTY ?? false,
    color: false,
    version: '0.0.0-test',
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
  });
  return { code, stdout, stderr };
}

/** Makes sure the bundles exist (CI builds before testing; a fresh checkout may not have). */
export function ensureBuilt(): void {
  if (!existsSync(path.join(repoRoot, 'packages/cli/dist/main.js')) || !existsSync(path.join(repoRoot, 'packages/cli/dist/lint.cjs'))) {
    execFileSync(process.execPath, [path.join(repoRoot, 'scripts/build.mjs')], { cwd: repoRoot, stdio: 'ignore' });
  }
}

/** Runs the built `lightsop` binary. */
export function lightsop(args: string[], options: { cwd?: string; input?: string; env?: Record<string, string> } = {}): CliRun {
  const res = spawnSync(process.execPath, [path.join(repoRoot, 'packages/cli/bin/lightsop.js'), ...args], {
    cwd: options.cwd ?? repoRoot,
    input: options.input ?? '',
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    timeout: 60000,
  });
  return { code: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

/** A temporary folder holding the given files. */
export function tempTree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'lightsop-test-'));
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  return dir;
}

/** Runs the built binary without blocking this process (needed when the test also serves HTTP). */
export function lightsopAsync(args: string[], options: { cwd?: string; input?: string; env?: Record<string, string> } = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'packages/cli/bin/lightsop.js'), ...args], {
      cwd: options.cwd ?? repoRoot,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
