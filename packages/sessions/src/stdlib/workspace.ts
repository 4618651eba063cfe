/**
 * Confinement of the file skills to a workspace root. A path is first resolved against the root's
 * real path (links that stay inside are followed; a path that leaves the root, directly, through
 * `..` or through a link, is refused). The file is then opened by descriptor, one component at a
 * time and never following a link, and what was opened is checked rather than the path: its real
 * location (read back from the descriptor) must be inside the root, and it must be a regular file
 * with a single name. A link swapped in between the check and the use makes the call fail; it
 * never makes it read or write outside. This module owns every file access of the file skills.
 */
import { constants, existsSync, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, realpath, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** A path outside the workspace root, or an unusable path argument. */
export class WorkspacePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkspacePathError';
  }
}

function isInside(root: string, candidate: string): boolean {
  const a = process.platform === 'win32' ? root.toLowerCase() : root;
  const b = process.platform === 'win32' ? candidate.toLowerCase() : candidate;
  if (a === b) return true;
  const prefix = a.endsWith(path.sep) ? a : a + path.sep;
  return b.startsWith(prefix);
}

const codeOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | null)?.code;

/** The root's real path (the root must exist). */
export async function realRoot(root: string): Promise<string> {
  try {
    return await realpath(path.resolve(root));
  } catch {
    throw new WorkspacePathError(`the workspace root ${root} does not exist`);
  }
}

/**
 * Resolves `target` inside the workspace. The returned path has every existing component's links
 * resolved; components that do not exist yet (a file to be written) are appended as given. A link
 * whose target does not exist is refused: following it later would create its target, wherever
 * that is. The result only names what to open; the opening itself is checked again.
 */
export async function resolveInWorkspace(root: string, target: unknown): Promise<string> {
  if (typeof target !== 'string' || target.trim() === '') throw new WorkspacePathError('a path is required');
  if (target.includes('\0')) throw new WorkspacePathError('a path cannot contain NUL characters');
  const base = await realRoot(root);
  const absolute = path.resolve(base, target.trim());
  if (!isInside(base, absolute)) throw new WorkspacePathError(`${target} is outside the workspace root`);
  const missing: string[] = [];
  let existing = absolute;
  for (;;) {
    try {
      const real = await realpath(existing);
      const full = missing.length > 0 ? path.join(real, missing.reverse().join(path.sep)) : real;
      if (!isInside(base, full)) throw new WorkspacePathError(`${target} leads outside the workspace root (through a symbolic link)`);
      return full;
    } catch (error) {
      if (error instanceof WorkspacePathError) throw error;
      const code = codeOf(error);
      if (code === 'ELOOP') throw new WorkspacePathError(`${target} leads through a loop of symbolic links`);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      if ((await lstat(existing).catch(() => null))?.isSymbolicLink()) {
        throw new WorkspacePathError(`${target} leads through a symbolic link whose target does not exist; file skills do not follow it`);
      }
      const parent = path.dirname(existing);
      if (parent === existing) throw new WorkspacePathError(`${target} cannot be resolved`);
      missing.push(path.basename(existing));
      existing = parent;
    }
  }
}

/** The path relative to the root, with forward slashes, for messages and listings. */
export function displayPath(root: string, full: string): string {
  const rel = path.relative(root, full);
  return (rel === '' ? '.' : rel).split(path.sep).join('/');
}

// ------------------------------------------------------------------ opening by descriptor

// Flags that do not exist on a platform are 0, so the same code runs (with weaker guarantees).
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const NOCTTY = constants.O_NOCTTY ?? 0;
const DIRECTORY = constants.O_DIRECTORY ?? 0;
const FOLDER_FLAGS = constants.O_RDONLY | DIRECTORY | NOFOLLOW;
// O_NONBLOCK: opening a FIFO must not wait for a peer; the descriptor is refused right after.
const FILE_FLAGS = NOFOLLOW | NONBLOCK | NOCTTY;

let procFd: boolean | undefined;
/**
 * Whether `/proc/self/fd/N` names the file open on descriptor N (Linux). Through it, a child of an
 * open folder is named relative to that very folder (as `openat` would), and the real location of
 * an open file can be read back. Without it, paths are rechecked after opening instead.
 */
function hasProcFd(): boolean {
  if (procFd === undefined) procFd = process.platform === 'linux' && existsSync('/proc/self/fd');
  return procFd;
}

/** An open folder of the workspace, and the path it was expected at (messages and fallback). */
interface OpenFolder {
  handle: FileHandle;
  path: string;
}

/** The path of `name` inside exactly the open folder, even if the folder was moved or swapped. */
function childOf(folder: OpenFolder, name: string): string {
  return hasProcFd() ? `/proc/self/fd/${folder.handle.fd}/${name}` : path.join(folder.path, name);
}

function folderPathOf(folder: OpenFolder): string {
  return hasProcFd() ? `/proc/self/fd/${folder.handle.fd}` : folder.path;
}

/** Turns an error of opening `name` (a component of `target`) into a one-line message. */
async function openError(error: unknown, target: string, folder: OpenFolder, name: string): Promise<Error> {
  const code = codeOf(error);
  const isLink = await lstat(childOf(folder, name)).then((s) => s.isSymbolicLink(), () => false);
  if (isLink || code === 'ELOOP' || code === 'EMLINK') {
    return new WorkspacePathError(`${target} changed while it was opened (a symbolic link took the place of ${name}); file skills do not follow it`);
  }
  if (code === 'ENOENT') return new WorkspacePathError(`${target} does not exist`);
  if (code === 'ENOTDIR') return new WorkspacePathError(path.basename(target.trim()) === name ? `${target} is not a folder` : `${target}: ${name} is not a folder`);
  if (code === 'EISDIR') return new WorkspacePathError(`${target} is a directory`);
  if (code === 'ENXIO') return new WorkspacePathError(`${target} is not a regular file; file skills only read and write regular files`);
  if (code === 'EEXIST') return new WorkspacePathError(`${target} appeared while it was being created; try again`);
  if (code === 'EACCES' || code === 'EPERM') return new WorkspacePathError(`${target}: permission denied`);
  return error instanceof Error ? error : new Error(String(error));
}

/** Opens the root, then each folder of `parts` below it without following links (creating missing ones when asked). */
async function openFolderAt(base: string, parts: readonly string[], options: { create: boolean; target: string }): Promise<OpenFolder> {
  let folder: OpenFolder = { handle: await open(base, FOLDER_FLAGS), path: base };
  try {
    for (const name of parts) {
      let handle: FileHandle;
      try {
        handle = await open(childOf(folder, name), FOLDER_FLAGS);
      } catch (error) {
        if (codeOf(error) !== 'ENOENT' || !options.create) throw await openError(error, options.target, folder, name);
        try {
          await mkdir(childOf(folder, name));
        } catch (made) {
          if (codeOf(made) !== 'EEXIST') throw await openError(made, options.target, folder, name);
        }
        try {
          handle = await open(childOf(folder, name), FOLDER_FLAGS);
        } catch (again) {
          throw await openError(again, options.target, folder, name);
        }
      }
      const previous = folder;
      folder = { handle, path: path.join(previous.path, name) };
      await previous.handle.close();
    }
    return folder;
  } catch (error) {
    await folder.handle.close().catch(() => undefined);
    throw error;
  }
}

/**
 * Checks what a descriptor names, not the path that was opened: its real location, read back
 * from the descriptor, must be inside the root. Without `/proc`, the expected path must still
 * resolve inside the root to this very file (same device and inode); that check is itself made
 * through paths, so a process swapping links concurrently can occasionally pass it there.
 */
async function checkOpened(handle: FileHandle, expected: string, base: string, target: string): Promise<void> {
  if (hasProcFd()) {
    const actual = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => null);
    if (actual === null || !isInside(base, actual)) throw new WorkspacePathError(`${target} leads outside the workspace root (it was moved or linked while it was opened)`);
    return;
  }
  const opened = await handle.stat();
  const real = await realpath(expected).catch(() => null);
  const named = real ? await lstat(real).catch(() => null) : null;
  if (!real || !named || !isInside(base, real) || named.dev !== opened.dev || named.ino !== opened.ino) {
    throw new WorkspacePathError(`${target} leads outside the workspace root (it was moved or linked while it was opened)`);
  }
}

/**
 * File skills act only on regular files with a single name: a FIFO or device can block or never
 * end, and a second name (a hard link) may be outside the workspace, which cannot be told apart
 * from one inside, so both are refused, for reads as for writes.
 */
function checkRegular(info: Stats, target: string, directoryHint = ''): void {
  if (info.isDirectory()) throw new WorkspacePathError(`${target} is a directory${directoryHint}`);
  if (!info.isFile()) throw new WorkspacePathError(`${target} is not a regular file; file skills only read and write regular files`);
  if (info.nlink > 1) {
    throw new WorkspacePathError(`${target} has ${info.nlink} hard links; file skills refuse files with more than one name, since another name may be outside the workspace`);
  }
}

interface Located {
  base: string;
  /** Components below the root; empty for the root itself. */
  parts: string[];
  display: string;
}

async function locate(root: string, target: string): Promise<Located> {
  const full = await resolveInWorkspace(root, target);
  const base = await realRoot(root);
  const rel = path.relative(base, full);
  return { base, parts: rel === '' ? [] : rel.split(path.sep), display: displayPath(base, full) };
}

/** Refuses a special file before opening it (opening a device can itself have effects); the descriptor is checked again after. */
async function refuseSpecial(folder: OpenFolder, name: string, target: string, directoryHint: string): Promise<void> {
  const info = await lstat(childOf(folder, name)).catch(() => null);
  if (info && !info.isSymbolicLink()) checkRegular(info, target, directoryHint);
}

/** Reads an open file in chunks, never more than `maxBytes + 1` bytes; null when it holds more than `maxBytes`. */
async function readCapped(handle: FileHandle, maxBytes: number, signal: AbortSignal | undefined, verb: string): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    if (signal?.aborted) throw new Error(`${verb} was interrupted`);
    const want = Math.min(64 * 1024, maxBytes + 1 - total);
    if (want <= 0) break;
    const buffer = Buffer.allocUnsafe(want);
    const { bytesRead } = await handle.read(buffer, 0, want, null);
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
  }
  return total > maxBytes ? null : Buffer.concat(chunks, total);
}

/** Writes all of `data` from offset 0, then cuts the file to its length. */
async function replaceContent(handle: FileHandle, data: Buffer): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await handle.write(data, done, data.length - done, done);
    done += bytesWritten;
  }
  await handle.truncate(data.length);
}

function tooLarge(target: string, info: Stats, maxBytes: number, limit: string): WorkspacePathError {
  const size = info.size > maxBytes ? `${info.size} bytes, ` : '';
  return new WorkspacePathError(`${target} is ${size}more than the ${maxBytes} bytes ${limit}`);
}

export interface ReadOptions {
  maxBytes: number;
  signal?: AbortSignal;
}

/**
 * Opens an existing regular file of the workspace through the descriptor of its folder and checks
 * that what was opened is that file (never a link, a special file or a folder). The caller closes
 * the handle.
 */
async function openExistingFile(at: Located, target: string, flags: number, directoryHint: string): Promise<{ handle: FileHandle; info: Stats }> {
  if (at.parts.length === 0) throw new WorkspacePathError(`${target} is a directory${directoryHint}`);
  const name = at.parts[at.parts.length - 1]!;
  const folder = await openFolderAt(at.base, at.parts.slice(0, -1), { create: false, target });
  let handle: FileHandle;
  try {
    await refuseSpecial(folder, name, target, directoryHint);
    try {
      handle = await open(childOf(folder, name), flags | FILE_FLAGS);
    } catch (error) {
      throw await openError(error, target, folder, name);
    }
  } finally {
    await folder.handle.close();
  }
  try {
    const info = await handle.stat();
    checkRegular(info, target, directoryHint);
    await checkOpened(handle, path.join(folder.path, name), at.base, target);
    return { handle, info };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Reads a regular file of the workspace as UTF-8 text, capped while reading. */
export async function readWorkspaceFile(root: string, target: string, options: ReadOptions): Promise<{ text: string; display: string }> {
  const at = await locate(root, target);
  const { handle, info } = await openExistingFile(at, target, constants.O_RDONLY, '; use list_files');
  try {
    const bytes = await readCapped(handle, options.maxBytes, options.signal, 'read_file');
    if (bytes === null) throw tooLarge(target, info, options.maxBytes, 'read_file returns');
    return { text: bytes.toString('utf8'), display: at.display };
  } finally {
    await handle.close();
  }
}

/**
 * Without `/proc`, a new file is created through the folder's path: make sure that path still
 * names the open folder (not a link put in its place) right before creating. With `/proc` the
 * file is created inside the open folder itself and nothing needs checking.
 */
async function checkFolderStill(folder: OpenFolder, target: string): Promise<void> {
  if (hasProcFd()) return;
  const [opened, named] = await Promise.all([folder.handle.stat(), lstat(folder.path).catch(() => null)]);
  if (!named || !named.isDirectory() || named.dev !== opened.dev || named.ino !== opened.ino) {
    throw new WorkspacePathError(`${target} changed while it was opened (a folder on its path was replaced); file skills do not follow it`);
  }
}

/** Removes a file this call created, only if the name still holds that very file. */
async function removeCreated(folder: OpenFolder, name: string, handle: FileHandle): Promise<void> {
  try {
    const [mine, there] = await Promise.all([handle.stat(), lstat(childOf(folder, name))]);
    if (mine.dev === there.dev && mine.ino === there.ino) await unlink(childOf(folder, name));
  } catch {
    // Gone already, or replaced by something that is not ours: leave it.
  }
}

/**
 * Writes a regular file of the workspace, creating it (and its folders) when missing. An existing
 * file is opened for writing without truncation, checked, then replaced through the descriptor; a
 * new one is created exclusively, so a link put in its place is never followed.
 */
export async function writeWorkspaceFile(root: string, target: string, content: string): Promise<{ bytes: number; display: string }> {
  const at = await locate(root, target);
  if (at.parts.length === 0) throw new WorkspacePathError(`${target} is a directory`);
  const name = at.parts[at.parts.length - 1]!;
  const folder = await openFolderAt(at.base, at.parts.slice(0, -1), { create: true, target });
  try {
    await refuseSpecial(folder, name, target, '');
    let handle: FileHandle;
    let created = false;
    try {
      handle = await open(childOf(folder, name), constants.O_WRONLY | FILE_FLAGS);
    } catch (error) {
      if (codeOf(error) !== 'ENOENT') throw await openError(error, target, folder, name);
      await checkFolderStill(folder, target);
      try {
        handle = await open(childOf(folder, name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | FILE_FLAGS, 0o666);
        created = true;
      } catch (again) {
        throw await openError(again, target, folder, name);
      }
    }
    try {
      checkRegular(await handle.stat(), target);
      await checkOpened(handle, path.join(folder.path, name), at.base, target);
    } catch (error) {
      if (created) await removeCreated(folder, name, handle);
      await handle.close();
      throw error;
    }
    try {
      const data = Buffer.from(content, 'utf8');
      await replaceContent(handle, data);
      return { bytes: data.length, display: at.display };
    } finally {
      await handle.close();
    }
  } finally {
    await folder.handle.close();
  }
}

/**
 * Edits an existing regular file of the workspace: reads it (capped) through a read-write
 * descriptor, lets `edit` compute the new text, and writes it back through the same descriptor.
 */
export async function editWorkspaceFile(root: string, target: string, edit: (text: string) => string, options: ReadOptions): Promise<{ display: string }> {
  const at = await locate(root, target);
  const { handle, info } = await openExistingFile(at, target, constants.O_RDWR, '');
  try {
    const bytes = await readCapped(handle, options.maxBytes, options.signal, 'edit_file');
    if (bytes === null) throw tooLarge(target, info, options.maxBytes, 'edit_file edits');
    const text = edit(bytes.toString('utf8'));
    await replaceContent(handle, Buffer.from(text, 'utf8'));
    return { display: at.display };
  } finally {
    await handle.close();
  }
}

export interface ListOptions {
  recursive: boolean;
  maxEntries: number;
  /** Folder names not descended into in a recursive listing. */
  skip?: (name: string) => boolean;
}

/**
 * Lists a folder of the workspace (paths relative to the root, folders ending with `/`). Links are
 * listed as names and never followed; a recursive listing descends through open folders only.
 */
export async function listWorkspaceFolder(root: string, target: string, options: ListOptions): Promise<{ entries: string[]; truncated: boolean }> {
  const at = await locate(root, target);
  const start = await openFolderAt(at.base, at.parts, { create: false, target });
  const entries: string[] = [];
  let truncated = false;
  const walk = async (folder: OpenFolder, prefix: string): Promise<void> => {
    const listed = (await readdir(folderPathOf(folder), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const e of listed) {
      if (entries.length >= options.maxEntries) {
        truncated = true;
        return;
      }
      const isDir = e.isDirectory();
      entries.push(prefix + e.name + (isDir ? '/' : ''));
      if (!options.recursive || !isDir || options.skip?.(e.name)) continue;
      // A folder swapped for a link since it was listed is not descended into.
      const handle = await open(childOf(folder, e.name), FOLDER_FLAGS).catch(() => null);
      if (!handle) continue;
      try {
        const sub = { handle, path: path.join(folder.path, e.name) };
        if (await checkOpened(handle, sub.path, at.base, target).then(() => true, () => false)) await walk(sub, `${prefix}${e.name}/`);
      } finally {
        await handle.close();
      }
    }
  };
  try {
    await checkOpened(start.handle, start.path, at.base, target);
    await walk(start, at.display === '.' ? '' : `${at.display}/`);
  } finally {
    await start.handle.close();
  }
  return { entries, truncated };
}
