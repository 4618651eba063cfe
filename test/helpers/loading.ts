/**
 * Which modules a command of the built CLI loads: a loader hook (test/distributed/fixtures/
 * record-modules.mjs) records every module URL the process loads. Each subcommand must load only
 * what it uses (docs/cli.md, ARCHITECTURE.md); the loading tests check one package each, with a
 * control case that shows the check sees the package when it is loaded.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { repoRoot } from './cli';

const PRELOAD = pathToFileURL(path.join(repoRoot, 'test/distributed/fixtures/record-modules.mjs')).href;
const BIN = path.join(repoRoot, 'packages/cli/bin/lightsop.js');

export interface Loaded {
  code: number;
  stderr: string;
  /** The files of every module the process loaded. */
  files: string[];
}

/** Runs `lightsop ARGS` in `cwd` (without the OTEL_* variables of whoever runs the tests). */
export function modulesLoadedBy(args: readonly string[], cwd: string, options: { input?: string; env?: Record<string, string> } = {}): Loaded {
  const logDir = mkdtempSync(path.join(tmpdir(), 'lightsop-modules-'));
  const log = path.join(logDir, 'modules.txt');
  try {
    writeFileSync(log, '');
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
    const res = spawnSync(process.execPath, ['--import', PRELOAD, BIN].concat(args), {
      cwd,
      input: options.input ?? '',
      encoding: 'utf8',
      env: { ...base, NO_COLOR: '1', LIGHTSOP_MODULE_LOG: log, ...options.env },
      timeout: 60_000,
    });
    const files = readFileSync(log, 'utf8').split('\n').filter((u) => u.startsWith('file:')).map((u) => fileURLToPath(u));
    return { code: res.status ?? -1, stderr: res.stderr, files };
  } finally {
    rmSync(logDir, { recursive: true, force: true });
  }
}

/** Whether the built CLI itself was among the loaded files (so a check of nothing cannot pass). */
export function loadsCliBundle(files: readonly string[]): boolean {
  return files.some((f) => f.startsWith(path.join(repoRoot, 'packages/cli/dist')));
}

/**
 * Whether a package was loaded: a file under a folder the pattern matches (node_modules), or a
 * bundled file holding one of the strings found only in that package's code.
 */
export function loadsPackage(files: readonly string[], folder: RegExp, markers: readonly string[]): boolean {
  return files.some((f) => folder.test(f) || markers.some((m) => readFileSync(f, 'utf8').includes(m)));
}
