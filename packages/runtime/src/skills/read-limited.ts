/**
 * Reading the small text files a host is configured with (a JSON skills description, a config
 * file), which may come from a hostile repository. A path is opened without blocking, so a FIFO
 * cannot hang the reader; it is read only when the opened descriptor is a regular file, so
 * neither a FIFO nor a device such as /dev/zero is read at all; and at most `maxBytes` are read
 * whatever the file claims its size is. File skills have their own rules (stdlib).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

/** The most a configuration or skills description file may hold (8 MiB). */
export const MAX_CONFIG_FILE_BYTES = 8 * 1024 * 1024;

/** A file that is not a regular file or is too large; `reason` reads well after "cannot read". */
export class UnreadableFileError extends Error {
  constructor(readonly file: string, readonly reason: string) {
    super(`${file}: cannot read (${reason})`);
    this.name = 'UnreadableFileError';
  }
}

// O_NONBLOCK makes opening a FIFO return at once instead of waiting for a writer; a regular file
// reads the same with it. Windows has no such flag (and no FIFOs at a path).
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
const CHUNK = 64 * 1024;

function tooLarge(file: string, maxBytes: number): UnreadableFileError {
  return new UnreadableFileError(file, `larger than ${maxBytes % (1024 * 1024) === 0 ? `${maxBytes / (1024 * 1024)} MiB` : `${maxBytes} bytes`}`);
}

/**
 * Reads a regular file as UTF-8, at most `maxBytes`. Throws `UnreadableFileError` for anything
 * else, and the system error (ENOENT, EACCES, ...) when it cannot be opened.
 */
export async function readLimitedTextFile(file: string, maxBytes = MAX_CONFIG_FILE_BYTES): Promise<string> {
  const handle = await open(file, OPEN_FLAGS);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new UnreadableFileError(file, 'not a regular file');
    if (stat.size > maxBytes) throw tooLarge(file, maxBytes);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buffer = Buffer.alloc(CHUNK);
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      // The size can change after fstat (a file being written): the limit holds while reading.
      if (total > maxBytes) throw tooLarge(file, maxBytes);
      chunks.push(bytesRead === CHUNK ? buffer : buffer.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** `readLimitedTextFile` for synchronous callers (the CLI's config lookup). */
export function readLimitedTextFileSync(file: string, maxBytes = MAX_CONFIG_FILE_BYTES): string {
  const fd = openSync(file, OPEN_FLAGS);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UnreadableFileError(file, 'not a regular file');
    if (stat.size > maxBytes) throw tooLarge(file, maxBytes);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buffer = Buffer.alloc(CHUNK);
      const bytesRead = readSync(fd, buffer, 0, CHUNK, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw tooLarge(file, maxBytes);
      chunks.push(bytesRead === CHUNK ? buffer : buffer.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
