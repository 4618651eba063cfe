/**
 * The plain `lightsop lint` (paths and lint's own options, nothing unusual) without commander and
 * without the code of any other command: `bin/lightsop.js` loads this file's bundle
 * (`dist/lint.cjs`) for `lint` and falls back to the full CLI (`dist/main.js`) whenever
 * `runPlainLint` returns null: an option it does not know, `--help`, a value commander should
 * judge, a plan folder whose config starts MCP servers. What it runs is the same `lintCommand`
 * with the same Io, secrets guard and error reporting as `runCli`, so output and exit codes are
 * the same (test/cli/lint-fast.test.ts compares the two).
 */
import path from 'node:path';
import { errorText } from '@lightsop/runtime';
import { setModuleImporter } from '@lightsop/runtime/skills';
import { findConfig } from './config';
import { lintCommand, resolvePlanFiles, type LintOptions } from './commands/lint';
import { CliError, usageExitCode } from './errors';
import { exitAfterOutput, workLeftBehind } from './idle';
import { outputFailureExit, type Io } from './io';
import { processIo } from './process-io';
import { guardIo, rememberEnvironmentSecrets, terminalText } from './terminal-text';

const FORMATS: readonly string[] = ['text', 'json', 'sarif', 'github'];

interface PlainLint {
  readonly paths: string[];
  readonly options: LintOptions;
}

/**
 * Reads `lint [paths...] [--skills F] [-f|--format F] [--max-warnings N] [-q|--quiet]` as
 * commander would; null for anything else (commander then parses it and reports what is wrong).
 */
export function parsePlainLint(argv: readonly string[]): PlainLint | null {
  if (argv[0] !== 'lint') return null;
  const paths: string[] = [];
  let skills: string | undefined;
  let format = 'text';
  let maxWarnings: number | undefined;
  let quiet = false;
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-' || !arg.startsWith('-')) {
      paths.push(arg);
      continue;
    }
    if (arg === '-q' || arg === '--quiet') {
      quiet = true;
      continue;
    }
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    if (name !== '--skills' && name !== '-f' && name !== '--format' && name !== '--max-warnings') return null;
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      i++;
    }
    // A missing value, or one that looks like an option, is commander's to judge.
    if (value === undefined || value === '' || value.startsWith('-')) return null;
    if (name === '--skills') skills = value;
    else if (name === '--max-warnings') {
      const n = Number(value);
      if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) return null;
      maxWarnings = n;
    } else {
      if (!FORMATS.includes(value)) return null;
      format = value;
    }
  }
  const options: LintOptions = {
    format: format as LintOptions['format'],
    ...(skills !== undefined ? { skills } : {}),
    ...(maxWarnings !== undefined ? { maxWarnings } : {}),
    ...(quiet ? { quiet } : {}),
  };
  return { paths, options };
}

/** True when some plan's folder has a config with MCP servers: the full CLI starts and closes them. */
function startsMcpServers(paths: readonly string[], cwd: string): boolean {
  for (const file of resolvePlanFiles(paths, cwd, 'lint')) {
    const config = findConfig(file.absolute ? path.dirname(file.absolute) : cwd);
    if (config?.mcpServers && config.mcpServers.length > 0) return true;
  }
  return false;
}

/**
 * Runs a plain `lint` invocation as `runCli` would; returns its exit code, or null when the
 * invocation is not plain (nothing was written then, and the full CLI should run it).
 */
export async function runPlainLint(argv: readonly string[], rawIo?: Io): Promise<number | null> {
  const plain = parsePlainLint(argv);
  if (!plain) return null;
  rememberEnvironmentSecrets(process.env);
  let io: Io;
  try {
    io = guardIo(rawIo ?? processIo(usageExitCode('lint')));
  } catch {
    // The current directory is gone: the full CLI's entry reports it.
    return null;
  }
  try {
    if (startsMcpServers(plain.paths, io.cwd)) return null;
    return await lintCommand(plain.paths, plain.options, io);
  } catch (error) {
    if (error instanceof CliError) {
      io.stderr(`lightsop: ${terminalText(error.message)}\n`);
      return error.exitCode;
    }
    // What runCli says of an error it did not expect (a skills module can throw anything).
    let stack = '';
    try {
      stack = String((error as Error)?.stack ?? '');
    } catch {
      // An unreadable stack is left out.
    }
    io.stderr(`lightsop: internal error: ${terminalText(errorText(error))}${process.env.LIGHTSOP_DEBUG ? `\n${terminalText(stack, { multiline: true })}` : ' (set LIGHTSOP_DEBUG=1 for details)'}\n`);
    return usageExitCode('lint');
  }
}

/**
 * The entry of `bin/lightsop.js` for `lint`: resolves true once a plain invocation ran (the exit
 * code is set as main.ts's entry sets it), false when the full CLI should run instead. This
 * bundle runs from a code cache, where `import()` has no module loader: `importModule` is the
 * bin's own `import`, used for skills modules.
 */
export async function startPlainLint(argv: readonly string[], importModule?: (url: string) => Promise<unknown>): Promise<boolean> {
  if (importModule) setModuleImporter(importModule);
  const code = await runPlainLint(argv);
  if (code === null) return false;
  const exitCode = outputFailureExit() ?? code;
  process.exitCode = exitCode;
  if (workLeftBehind()) exitAfterOutput(exitCode);
  return true;
}
