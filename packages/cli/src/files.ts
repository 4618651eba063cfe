/**
 * Command-line paths: files, folders (every `*.sop` below them), globs, and `-` for standard
 * input. A path that matches nothing is an error, never silently skipped.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { globSync, isDynamicPattern } from 'tinyglobby';
import { CliError } from './errors';

export interface InputFile {
  /** Path as shown to the user (relative to the working directory), or `<stdin>`. */
  readonly display: string;
  /** Absolute path, or null for standard input. */
  readonly absolute: string | null;
}

const IGNORE = ['**/node_modules/**', '**/.git/**'];

function display(absolute: string, cwd: string): string {
  const rel = path.relative(cwd, absolute);
  return (rel === '' || rel.startsWith('..') ? absolute : rel).split(path.sep).join('/');
}

/** Expands paths into files, in a stable order without duplicates. */
export function expandPaths(args: readonly string[], cwd: string, usageExit: number): InputFile[] {
  const out: InputFile[] = [];
  const seen = new Set<string>();
  const add = (absolute: string) => {
    if (seen.has(absolute)) return;
    seen.add(absolute);
    out.push({ display: display(absolute, cwd), absolute });
  };
  for (const arg of args) {
    if (arg === '-') {
      if (!seen.has('-')) out.push({ display: '<stdin>', absolute: null });
      seen.add('-');
      continue;
    }
    const absolute = path.resolve(cwd, arg);
    let stat: ReturnType<typeof statSync> | undefined;
    try {
      stat = statSync(absolute);
    } catch {
      stat = undefined;
    }
    if (stat?.isFile()) add(absolute);
    else if (stat?.isDirectory()) {
      const found = globSync('**/*.sop', { cwd: absolute, absolute: true, ignore: IGNORE, dot: false }).sort();
      for (const f of found) add(path.resolve(f));
    } else if (isDynamicPattern(arg)) {
      const found = globSync(arg, { cwd, absolute: true, ignore: IGNORE }).sort();
      if (found.length === 0) throw new CliError(`no files match the pattern "${arg}"`, usageExit);
      for (const f of found) add(path.resolve(f));
    } else {
      throw new CliError(`${arg}: no such file or directory`, usageExit);
    }
  }
  return out;
}

/** Expands config globs relative to the config directory. */
export function expandConfigGlobs(globs: readonly string[], dir: string, cwd: string): InputFile[] {
  return globSync([...globs], { cwd: dir, absolute: true, ignore: IGNORE })
    .sort()
    .map((f) => ({ display: display(path.resolve(f), cwd), absolute: path.resolve(f) }));
}

/** Reads standard input to the end. */
export function readStdin(): string {
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}

/** Reads a plan as UTF-8. The caller strips a leading BOM (spec 1.1). */
export function readPlanFile(file: InputFile, usageExit: number): string {
  if (file.absolute === null) return readStdin();
  try {
    return readFileSync(file.absolute, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : (code ?? (error as Error).message);
    throw new CliError(`${file.display}: cannot read (${why})`, usageExit);
  }
}

/** Removes one U+FEFF at the very start of a file, as editors do (spec 1.1). */
export function stripBom(text: string): { text: string; bom: boolean } {
  return text.charCodeAt(0) === 0xfeff ? { text: text.slice(1), bom: true } : { text, bom: false };
}
