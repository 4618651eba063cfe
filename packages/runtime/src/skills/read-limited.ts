/**
 * Reading the small text files a host is configured with (a JSON skills description, a config
 * file), which may come from a hostile repository. A path is opened without blocking, so a FIFO
 * cannot hang the reader; it is read only when the opened descriptor is a regular file, so
 * neither a FIFO nor a device such as /dev/zero is read at all; and at most `maxBytes` are read
 * whatever the file claims its size is. File skills have their own rules (stdlib).
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
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
 * What both readers do with an opened file: refuse it unless it is a regular file within the
 * limit, then keep its chunks while the limit holds (the size can change after fstat, a file
 * being written), and decode them once at the end.
 */
class LimitedRead {
  private readonly chunks: Buffer[] = [];
  private total = 0;

  constructor(private readonly file: string, private readonly maxBytes: number, stat: Stats) {
    if (!stat.isFile()) throw new UnreadableFileError(file, 'not a regular file');
    if (stat.size > maxBytes) throw tooLarge(file, maxBytes);
  }

  /** Keeps one read's bytes of `buffer` (a fresh CHUNK-sized buffer); false at the end of the file. */
  take(buffer: Buffer, bytesRead: number): boolean {
    if (bytesRead === 0) return false;
    this.total += bytesRead;
    if (this.total > this.maxBytes) throw tooLarge(this.file, this.maxBytes);
    this.chunks.push(bytesRead === CHUNK ? buffer : buffer.subarray(0, bytesRead));
    return true;
  }

  text(): string {
    return Buffer.concat(this.chunks, this.total).toString('utf8');
  }
}

/**
 * Reads a regular file as UTF-8, at most `maxBytes`. Throws `UnreadableFileError` for anything
 * else, and the system error (ENOENT, EACCES, ...) when it cannot be opened.
 */
export async function readLimitedTextFile(file: string, maxBytes = MAX_CONFIG_FILE_BYTES): Promise<string> {
  const handle = await open(file, OPEN_FLAGS);
  try {
    const read = new LimitedRead(file, maxBytes, await handle.stat());
    for (;;) {
      const buffer = Buffer.alloc(CHUNK);
      if (!read.take(buffer, (await handle.read(buffer, 0, CHUNK, null)).bytesRead)) return read.text();
    }
  } finally {
    await handle.close();
  }
}

/** `readLimitedTextFile` for synchronous callers (the CLI's config lookup). */
export function readLimitedTextFileSync(file: string, maxBytes = MAX_CONFIG_FILE_BYTES): string {
  const fd = openSync(file, OPEN_FLAGS);
  try {
    const read = new LimitedRead(file, maxBytes, fstatSync(fd));
    for (;;) {
      const buffer = Buffer.alloc(CHUNK);
      if (!read.take(buffer, readSync(fd, buffer, 0, CHUNK, null))) return read.text();
    }
  } finally {
    closeSync(fd);
  }
}
