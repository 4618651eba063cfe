/**
 * The real process as the CLI's Io, shared by the full CLI (`main.ts`) and the plain-lint fast
 * path (`lint-fast.ts`), which loads neither commander nor anything of the other commands.
 */
import pkg from '../package.json';
import { CliError } from './errors';
import { guardStream, type Io } from './io';

/** The real process as an Io; `failureExit` is the exit code when stdout cannot be written. */
export function processIo(failureExit = 2): Io {
  const isTTY = Boolean(process.stdout.isTTY);
  const err = guardStream(process.stderr, 'standard error', failureExit, () => {});
  const out = guardStream(process.stdout, 'standard output', failureExit, (line) => err.write(line));
  const color = process.env.NO_COLOR ? false : process.env.FORCE_COLOR ? process.env.FORCE_COLOR !== '0' : isTTY;
  let cwd: string;
  try {
    cwd = process.cwd();
  } catch (error) {
    // Node cannot name the directory a shell sits in after it was deleted (ENOENT, uv_cwd).
    throw new CliError(`the current directory cannot be read (${entryErrorText(error)}): was it deleted or moved? Change to an existing directory.`, failureExit);
  }
  return {
    cwd,
    isTTY,
    color,
    version: pkg.version,
    columns: process.stdout.columns,
    rows: process.stdout.rows,
    stdout: (text) => out.write(text),
    stderr: (text) => err.write(text),
  };
}

/** Describes whatever was thrown without trusting it (the runtime's errorText is not loaded here). */
export function entryErrorText(error: unknown): string {
  try {
    if (error instanceof Error) return String(error.message);
  } catch {
    // A Proxy or a throwing getter: describe the value itself.
  }
  try {
    return String(error);
  } catch {
    return 'a value that cannot be described';
  }
}

