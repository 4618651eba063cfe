/**
 * `lightsop fmt`: print, check or rewrite plans in canonical form. Writes are atomic (a
 * temporary file renamed over the original) and keep a leading BOM, so no text is ever lost.
 */
import { renameSync, statSync, writeFileSync, chmodSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { formatPlan, parsePlan } from '@lightsop/core';
import { CliError } from '../errors';
import { readPlanFile, stripBom, type InputFile } from '../files';
import type { Io } from '../io';
import { resolveLintFiles } from './lint';

export interface FmtOptions {
  readonly check?: boolean;
  readonly write?: boolean;
}

const USAGE = 2;

function writeAtomic(file: string, text: string): void {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.lightsop-fmt-${process.pid}`);
  try {
    const mode = statSync(file).mode;
    writeFileSync(temp, text, 'utf8');
    chmodSync(temp, mode);
    renameSync(temp, file);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      // The temporary file was never written.
    }
    throw new CliError(`${file}: cannot write (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, USAGE);
  }
}

export async function fmtCommand(paths: readonly string[], options: FmtOptions, io: Io): Promise<number> {
  const files: InputFile[] = resolveLintFiles(paths, io.cwd);
  if (options.check && options.write) throw new CliError('--check and --write cannot be used together', USAGE);
  if (!options.check && !options.write && files.length > 1) {
    throw new CliError('several files given: use --write to rewrite them or --check to list those that need formatting', USAGE);
  }
  let unformatted = 0;
  for (const file of files) {
    const original = readPlanFile(file, USAGE);
    const { text, bom } = stripBom(original);
    const formatted = (bom ? '\uFEFF' : '') + formatPlan(text);
    if (parsePlan(text).diagnostics.length > 0) {
      io.stderr(`lightsop: ${file.display} has syntax errors; declarations with errors were left as they are\n`);
    }
    if (!options.check && !options.write) {
      io.stdout(formatted);
      continue;
    }
    if (formatted === original) continue;
    unformatted++;
    if (options.check) io.stdout(`${file.display}: not formatted\n`);
    else if (file.absolute === null) io.stdout(formatted);
    else {
      writeAtomic(file.absolute, formatted);
      io.stdout(`${file.display}: formatted\n`);
    }
  }
  if (options.check && unformatted > 0) {
    io.stderr(`lightsop: ${unformatted} file${unformatted === 1 ? '' : 's'} would be reformatted; run lightsop fmt --write\n`);
    return 1;
  }
  return 0;
}
