/**
 * Plan files on disk: expanding command-line paths (files, folders, globs, `-` for standard input),
 * reading plans as strict UTF-8, and rewriting them without damaging them. A path that matches
 * nothing is an error, never silently skipped; a file that is not UTF-8 text is refused, never
 * read with replacement characters; a rewrite keeps links, mode and owner, or leaves the file as
 * it was.
 */
import { randomBytes } from 'node:crypto';
import {
  accessSync, closeSync, constants, fchmodSync, fchownSync, fstatSync, fsyncSync, ftruncateSync, openSync, readFileSync, realpathSync, renameSync,
  statSync, unlinkSync, writeFileSync, writeSync, type Stats,
} from 'node:fs';
import { constants as bufferConstants } from 'node:buffer';
import path from 'node:path';
import { globSync, isDynamicPattern } from 'tinyglobby';
import { CliError } from './errors';

export interface InputFile {
  /** Path as shown to the user (relative to the working directory), or `<stdin>`. */
  readonly display: string;
  /** Absolute path, or null for standard input. */
  readonly absolute: string | null;
  /**
   * For a file found by walking a folder or expanding a glob: the real path of the folder it was
   * found under. A rewrite through a link must stay inside it, so that a link in a hostile
   * repository cannot make `fmt --write .` change a file elsewhere. Absent for a named file.
   */
  readonly root?: string;
}

const IGNORE = ['**/node_modules/**', '**/.git/**'];

function display(absolute: string, cwd: string): string {
  const rel = path.relative(cwd, absolute);
  return (rel === '' || rel.startsWith('..') ? absolute : rel).split(path.sep).join('/');
}

/** The real path of a file, so that one file reached by several names is handled once. */
function identity(absolute: string): string {
  try {
    return realpathSync.native(absolute);
  } catch {
    // A dangling link or a vanished file: reading it reports the problem.
    return absolute;
  }
}

/** An ordered set of input files without duplicates, by real path. */
class FileSet {
  readonly files: InputFile[] = [];
  private readonly seen = new Set<string>();

  constructor(private readonly cwd: string) {}

  add(absolute: string, root?: string): void {
    const key = identity(absolute);
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.files.push(root === undefined ? { display: display(absolute, this.cwd), absolute } : { display: display(absolute, this.cwd), absolute, root });
  }

  addStdin(): void {
    if (this.seen.has('-')) return;
    this.seen.add('-');
    this.files.push({ display: '<stdin>', absolute: null });
  }
}

/**
 * Every `*.sop` below a folder, sorted. The walk follows links to folders; tinyglobby stops at a
 * folder it has already entered, so a link loop ends, and FileSet drops the second names.
 */
function plansUnder(dir: string): string[] {
  return globSync('**/*.sop', { cwd: dir, absolute: true, ignore: IGNORE, dot: false }).map((f) => path.resolve(f)).sort();
}

/** Every plan below a folder (possibly none), one entry per real file. */
export function expandFolder(dir: string, cwd: string): InputFile[] {
  const set = new FileSet(cwd);
  const root = identity(dir);
  for (const f of plansUnder(dir)) set.add(f, root);
  return set.files;
}

/** Expands paths into files, in a stable order without duplicates (one entry per real file). */
export function expandPaths(args: readonly string[], cwd: string, usageExit: number): InputFile[] {
  const set = new FileSet(cwd);
  for (const arg of args) {
    if (arg === '-') {
      set.addStdin();
      continue;
    }
    const absolute = path.resolve(cwd, arg);
    let stat: Stats | undefined;
    try {
      stat = statSync(absolute);
    } catch {
      stat = undefined;
    }
    if (stat?.isDirectory()) {
      const found = plansUnder(absolute);
      if (found.length === 0) throw new CliError(`no plans (*.sop) found in ${arg}`, usageExit);
      const root = identity(absolute);
      for (const f of found) set.add(f, root);
    } else if (stat) {
      // A file, or something that is not one (a named pipe): reading it says which.
      set.add(absolute);
    } else if (isDynamicPattern(arg)) {
      const found = globSync(arg, { cwd, absolute: true, ignore: IGNORE }).sort();
      if (found.length === 0) throw new CliError(`no files match the pattern "${arg}"`, usageExit);
      const root = identity(cwd);
      for (const f of found) set.add(path.resolve(f), root);
    } else {
      throw new CliError(`${arg}: no such file or directory`, usageExit);
    }
  }
  return set.files;
}

/** Expands config globs relative to the config directory. */
export function expandConfigGlobs(globs: readonly string[], dir: string, cwd: string): InputFile[] {
  const set = new FileSet(cwd);
  const root = identity(dir);
  for (const f of globSync([...globs], { cwd: dir, absolute: true, ignore: IGNORE }).sort()) set.add(path.resolve(f), root);
  return set.files;
}

/** Why a file operation failed, in a few words. */
function why(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT': return 'no such file';
    case 'EACCES':
    case 'EPERM': return 'permission denied';
    case 'EISDIR': return 'is a directory';
    case 'ELOOP': return 'too many levels of symbolic links';
    default: return code ?? (error as Error).message;
  }
}

/** Reads standard input to the end, as bytes. */
function readStdinBytes(): Buffer {
  try {
    return readFileSync(0);
  } catch {
    return Buffer.alloc(0);
  }
}

/** The 1-based line and column (UTF-16 units, as everywhere in the CLI) of a byte offset. */
function locate(bytes: Uint8Array, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (bytes[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  // The bytes before the offset are valid UTF-8 (the offset is the first problem).
  return { line, column: new TextDecoder().decode(bytes.subarray(lineStart, offset)).length + 1 };
}

/**
 * The offset of the first byte that starts an invalid UTF-8 sequence, or -1. It accepts exactly
 * what a fatal TextDecoder accepts (no overlong forms, no surrogates, nothing above U+10FFFF);
 * it only runs after the decoder has refused the bytes, to say where.
 */
function firstInvalidUtf8(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lower = 0x80;
    let upper = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lower = 0xa0;
      if (b === 0xed) upper = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lower = 0x90;
      if (b === 0xf4) upper = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < lower || c > upper) return i;
      lower = 0x80;
      upper = 0xbf;
    }
    i += need + 1;
  }
  return -1;
}

const BYTE_ORDER_MARKS: readonly { name: string; bytes: readonly number[] }[] = [
  // UTF-32 first: its little-endian mark starts with UTF-16's.
  { name: 'UTF-32 LE', bytes: [0xff, 0xfe, 0x00, 0x00] },
  { name: 'UTF-32 BE', bytes: [0x00, 0x00, 0xfe, 0xff] },
  { name: 'UTF-16 LE', bytes: [0xff, 0xfe] },
  { name: 'UTF-16 BE', bytes: [0xfe, 0xff] },
];

/**
 * Decodes a plan's bytes as strict UTF-8 (a UTF-8 BOM is kept for the caller to strip). Text in
 * another encoding or binary data is a CliError at `file:line:column` of the first bad byte:
 * reading it with replacement characters would lose the bytes on the next write.
 */
export function decodePlan(bytes: Uint8Array, shown: string, usageExit: number): string {
  for (const bom of BYTE_ORDER_MARKS) {
    if (bytes.length >= bom.bytes.length && bom.bytes.every((b, i) => bytes[i] === b)) {
      throw new CliError(`${shown}:1:1: encoded as ${bom.name} (it starts with a byte order mark), not UTF-8; save the file as UTF-8`, usageExit);
    }
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0) {
    const at = locate(bytes, nul);
    throw new CliError(`${shown}:${at.line}:${at.column}: contains a NUL byte (offset ${nul}): a binary file, or UTF-16 without a byte order mark; save the plan as UTF-8 text`, usageExit);
  }
  if (bytes.length > bufferConstants.MAX_STRING_LENGTH) {
    throw new CliError(`${shown}: too large to read (${bytes.length} bytes)`, usageExit);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    const offset = Math.max(0, firstInvalidUtf8(bytes));
    const at = locate(bytes, offset);
    const byte = (bytes[offset] ?? 0).toString(16).toUpperCase().padStart(2, '0');
    throw new CliError(`${shown}:${at.line}:${at.column}: not valid UTF-8 (byte 0x${byte} at offset ${offset}); save the file as UTF-8`, usageExit);
  }
}

/** A plan as read: its text (with any BOM) and the exact bytes, for a later rewrite. */
export interface PlanSource {
  readonly text: string;
  readonly bytes: Buffer;
}

/** Reads a file's bytes; a folder, a named pipe or a device is refused without blocking. */
function readRegularFile(file: InputFile & { absolute: string }, usageExit: number): Buffer {
  let fd: number;
  try {
    // O_NONBLOCK: opening a named pipe must not wait for a writer.
    fd = openSync(file.absolute, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw new CliError(`${file.display}: cannot read (${why(error)})`, usageExit);
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw new CliError(`${file.display}: cannot read (is a directory)`, usageExit);
    if (!stat.isFile()) throw new CliError(`${file.display}: not a regular file`, usageExit);
    return readFileSync(fd);
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`${file.display}: cannot read (${why(error)})`, usageExit);
  } finally {
    closeSync(fd);
  }
}

/** Reads a plan as strict UTF-8, keeping its bytes. */
export function readPlanSource(file: InputFile, usageExit: number): PlanSource {
  const bytes = file.absolute === null ? readStdinBytes() : readRegularFile({ display: file.display, absolute: file.absolute }, usageExit);
  return { text: decodePlan(bytes, file.display, usageExit), bytes };
}

/** Reads a plan as strict UTF-8. The caller strips a leading BOM (spec 1.1). */
export function readPlanFile(file: InputFile, usageExit: number): string {
  return readPlanSource(file, usageExit).text;
}

/** Removes one U+FEFF at the very start of a file, as editors do (spec 1.1). */
export function stripBom(text: string): { text: string; bom: boolean } {
  return text.charCodeAt(0) === 0xfeff ? { text: text.slice(1), bom: true } : { text, bom: false };
}

function writeAll(fd: number, data: Uint8Array): void {
  let done = 0;
  while (done < data.length) done += writeSync(fd, data, done, data.length - done, done);
}

/**
 * Writes the file's own inode: hard links stay together and owner, mode and every other
 * attribute stay as they are. Not atomic, so a failed write puts the original bytes back.
 */
function writeInPlace(target: string, data: Uint8Array, original: Uint8Array): void {
  const fd = openSync(target, 'r+');
  try {
    writeAll(fd, data);
    ftruncateSync(fd, data.length);
    fsyncSync(fd);
  } catch (error) {
    try {
      // The original never needs more room than the file already had.
      writeAll(fd, original);
      ftruncateSync(fd, original.length);
    } catch (restoreError) {
      throw Object.assign(new Error('restore failed'), { code: (error as NodeJS.ErrnoException).code, restoreError });
    }
    throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces the file atomically with a temporary file next to it (same folder, so the rename
 * cannot cross file systems) that has the original's owner, group and mode. Returns false, having
 * removed the temporary file, when that identity cannot be given to a new file (the folder is not
 * writable, or the owner is someone else and this process may not give files away).
 */
function replaceAtomically(target: string, data: Uint8Array, stat: Stats): boolean {
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.lightsop-${randomBytes(6).toString('hex')}.tmp`);
  let fd: number;
  try {
    // 'wx': never follow or reuse something already at the temporary name.
    fd = openSync(temp, 'wx', 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') return false;
    throw error;
  }
  let keep = false;
  try {
    if (stat.uid !== process.getuid?.() || stat.gid !== process.getgid?.()) {
      try {
        fchownSync(fd, stat.uid, stat.gid);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EPERM') return false;
        throw error;
      }
    }
    // After fchown, which may clear set-id bits.
    fchmodSync(fd, stat.mode & 0o7777);
    writeAll(fd, data);
    fsyncSync(fd);
    closeSync(fd);
    fd = -1;
    renameSync(temp, target);
    keep = true;
    return true;
  } finally {
    if (fd >= 0) closeSync(fd);
    if (!keep) {
      try {
        unlinkSync(temp);
      } catch {
        // Already gone.
      }
    }
  }
}

function isInside(file: string, folder: string): boolean {
  const rel = path.relative(folder, file);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

/**
 * Rewrites a plan file with new text, never damaging it. Links are written through to the real
 * file; a file with several hard links is written in place, so every name keeps seeing one file;
 * otherwise the file is replaced atomically, keeping mode, owner and group (when the owner cannot
 * be kept, it is written in place instead). A file found by a folder walk or a glob is only
 * written through a link when the link's target is inside that folder. A read-only file (no write bit, even for root) or one
 * this user may not write is refused. On any failure the file is left as it was and no temporary
 * file remains.
 */
export function rewritePlanFile(file: InputFile & { absolute: string }, text: string, original: Uint8Array, usageExit: number, cwd: string): void {
  let target: string;
  let stat: Stats;
  try {
    target = realpathSync.native(file.absolute);
    stat = statSync(target);
  } catch (error) {
    throw new CliError(`${file.display}: cannot write (${why(error)})`, usageExit);
  }
  if (file.root !== undefined && !isInside(target, file.root)) {
    throw new CliError(`${file.display}: is a link to ${display(target, cwd)}, outside the folder being formatted; not formatted (name the link itself to format its target)`, usageExit);
  }
  if (!stat.isFile()) throw new CliError(`${file.display}: not a regular file`, usageExit);
  if ((stat.mode & 0o222) === 0) {
    throw new CliError(`${file.display}: is read-only (mode ${(stat.mode & 0o7777).toString(8).padStart(4, '0')}); not formatted`, usageExit);
  }
  try {
    // An atomic replace only needs a writable folder: check the file itself, as an editor would.
    accessSync(target, constants.W_OK);
  } catch (error) {
    throw new CliError(`${file.display}: cannot write (${why(error)}); not formatted`, usageExit);
  }
  const data = Buffer.from(text, 'utf8');
  try {
    if (stat.nlink > 1 || !replaceAtomically(target, data, stat)) writeInPlace(target, data, original);
  } catch (error) {
    if ((error as { restoreError?: unknown }).restoreError !== undefined) {
      // The disk failed twice; a copy of the original elsewhere in the folder is the last resort.
      const backup = `${target}.lightsop-original-${randomBytes(4).toString('hex')}`;
      let saved = false;
      try {
        writeFileSync(backup, original, { flag: 'wx', mode: stat.mode & 0o777 });
        saved = true;
      } catch {
        // Nothing more can be done; the message says so.
      }
      throw new CliError(`${file.display}: cannot write (${why(error)}), and the original could not be put back${saved ? `; it is saved in ${backup}` : ''}`, usageExit);
    }
    throw new CliError(`${file.display}: cannot write (${why(error)}); the file was left as it was`, usageExit);
  }
}
