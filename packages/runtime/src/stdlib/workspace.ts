/**
 * Confinement of file skills to a workspace root: paths are resolved against the root, and the
 * real path of the longest existing prefix (symbolic links resolved) must stay inside the root's
 * real path. A path that leaves the root, directly, through `..` or through a link, is refused.
 */
import { realpath } from 'node:fs/promises';
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
 * resolved; components that do not exist yet (a file to be written) are appended as given.
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
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
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
