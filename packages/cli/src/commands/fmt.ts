/**
 * `lightsop fmt`: print, check or rewrite plans in canonical form. Files are read as strict UTF-8
 * and rewritten by `rewritePlanFile` (through links, keeping mode and owner, atomic unless the file
 * has several hard links), keeping a leading BOM, so no byte is ever lost. A file that cannot be
 * read, is not UTF-8 or cannot be written is reported by name and left as it was; the other files
 * are still formatted, and the exit code is 2.
 */
import { formatPlan, parsePlan } from '@lightsop/core';
import { CliError } from '../errors';
import { readPlanSource, rewritePlanFile, stripBom, type InputFile } from '../files';
import type { Io } from '../io';
import { resolvePlanFiles } from './lint';

export interface FmtOptions {
  readonly check?: boolean;
  readonly write?: boolean;
}

const USAGE = 2;

export async function fmtCommand(paths: readonly string[], options: FmtOptions, io: Io): Promise<number> {
  const files: InputFile[] = resolvePlanFiles(paths, io.cwd, 'fmt');
  if (options.check && options.write) throw new CliError('--check and --write cannot be used together', USAGE);
  if (!options.check && !options.write && files.length > 1) {
    throw new CliError('several files given: use --write to rewrite them or --check to list those that need formatting', USAGE);
  }
  let unformatted = 0;
  let problems = 0;
  for (const file of files) {
    try {
      const source = readPlanSource(file, USAGE);
      const { text, bom } = stripBom(source.text);
      const formatted = (bom ? '\uFEFF' : '') + formatPlan(text);
      if (parsePlan(text).diagnostics.length > 0) {
        io.stderr(`lightsop: ${file.display} has syntax errors; declarations with errors were left as they are\n`);
      }
      if (!options.check && !options.write) {
        io.stdout(formatted);
        continue;
      }
      if (formatted === source.text) continue;
      if (options.check) {
        unformatted++;
        io.stdout(`${file.display}: not formatted\n`);
      } else if (file.absolute === null) io.stdout(formatted);
      else {
        rewritePlanFile({ ...file, absolute: file.absolute }, formatted, source.bytes, USAGE, io.cwd);
        io.stdout(`${file.display}: formatted\n`);
      }
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      io.stderr(`lightsop: ${error.message}\n`);
      problems++;
    }
  }
  if (options.check && unformatted > 0) {
    io.stderr(`lightsop: ${unformatted} file${unformatted === 1 ? '' : 's'} would be reformatted; run lightsop fmt --write\n`);
  }
  if (problems > 0) return USAGE;
  return options.check && unformatted > 0 ? 1 : 0;
}
