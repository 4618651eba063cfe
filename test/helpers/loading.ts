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
import { afterAll, beforeAll, expect } from 'vitest';
import { ensureBuilt, repoRoot } from './cli';

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

/** lint, fmt, graph and a local run of the folder's `plan.sop`: the commands that load nothing heavy. */
export const LIGHT_COMMANDS: readonly (readonly string[])[] = [['lint', 'plan.sop'], ['fmt', 'plan.sop'], ['graph', 'plan.sop'], ['run', 'plan.sop', '--json']];

/**
 * Registers the enclosing describe block's hooks: before its tests the CLI is built and a fresh
 * temporary folder holds a simple `plan.sop` (and `files`, by name); after them it is removed.
 * Returns the folder's path, to be read in the tests.
 */
export function usePlanFolder(prefix: string, files: Readonly<Record<string, string>> = {}): () => string {
  let dir = '';
  beforeAll(() => {
    ensureBuilt();
    dir = mkdtempSync(path.join(tmpdir(), prefix));
    writeFileSync(path.join(dir, 'plan.sop'), '@a assign hello\n@lastAnswer assign $a\n');
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return () => dir;
}

/**
 * Runs each `lightsop ARGS` of `commands` in `dir` and expects it to exit 0, to load the CLI bundle
 * (so that a check of nothing cannot pass) and none of `packages`: a check per package, named for
 * the failure's message ("lightsop lint plan.sop loaded NAME").
 */
export function expectLoadsNone(
  commands: readonly (readonly string[])[],
  dir: string,
  packages: Readonly<Record<string, (files: string[]) => boolean>>,
  env: Record<string, string> = {},
): void {
  for (const args of commands) {
    const res = modulesLoadedBy(args, dir, { env });
    expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(0);
    expect(loadsCliBundle(res.files)).toBe(true);
    for (const [name, loads] of Object.entries(packages)) expect(loads(res.files), `lightsop ${args.join(' ')} loaded ${name}`).toBe(false);
  }
}
