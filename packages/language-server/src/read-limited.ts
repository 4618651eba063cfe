/**
 * Reading the config and a JSON skills description, which come from the workspace and so perhaps
 * from a hostile repository. A path is opened without blocking, so a FIFO cannot hang the server;
 * it is read only when the opened descriptor is a regular file, so neither a FIFO nor a device
 * such as /dev/zero is read at all; and at most `MAX_WORKSPACE_FILE_BYTES` are read whatever the
 * file claims its size is. (The runtime has the same rule for the CLI; the server imports only
 * core, so it keeps its own copy of these few lines.)
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/** The most a config or skills description may hold (8 MiB); docs/language-server.md says so. */
export const MAX_WORKSPACE_FILE_BYTES = 8 * 1024 * 1024;

/** A path that is not a regular file or is too large; `reason` reads well after "cannot be read". */
export class UnreadableFileError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'UnreadableFileError';
  }
}

// O_NONBLOCK makes opening a FIFO return at once instead of waiting for a writer; a regular file
// reads the same with it. Windows has no such flag.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
const CHUNK = 64 * 1024;

/**
 * Reads a regular file as UTF-8, at most `maxBytes`. Throws `UnreadableFileError` for anything
 * else, and the system error (ENOENT, EACCES, ...) when it cannot be opened.
 */
export async function readLimitedTextFile(file: string, maxBytes = MAX_WORKSPACE_FILE_BYTES): Promise<string> {
  const handle = await open(file, OPEN_FLAGS);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new UnreadableFileError('not a regular file');
    const tooLarge = () => new UnreadableFileError(`larger than ${maxBytes / (1024 * 1024)} MiB`);
    if (stat.size > maxBytes) throw tooLarge();
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buffer = Buffer.alloc(CHUNK);
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      // The size can change after fstat (a file being written): the limit holds while reading.
      if (total > maxBytes) throw tooLarge();
      chunks.push(bytesRead === CHUNK ? buffer : buffer.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    await handle.close();
  }
}
