/**
 * The files of `lightsop batch`: the inputs (JSON Lines, one input per line, read twice and never
 * held whole in memory) and the results file, which is appended one whole line per write, synced
 * to disk in small groups, guarded by a lock file, and read back on a rerun to skip what is done.
 */
import { createHash } from 'node:crypto';
import {
  closeSync, existsSync, fdatasyncSync, fstatSync, openSync, readFileSync, readSync, ftruncateSync, unlinkSync, writeFileSync, writeSync,
} from 'node:fs';
import { hostname } from 'node:os';

/** A problem with a batch file, with its position when there is one; the CLI prints it as is. */
export class BatchFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BatchFileError';
  }
}

/**
 * Every input of a batch: where its line is in the file, its line number and its content hash,
 * in typed arrays (about 24 bytes an input, so a million inputs fit in 24 MB); `idOf` builds the
 * job id when it is needed.
 */
export interface InputIndex {
  readonly count: number;
  readonly lines: Uint32Array;
  readonly offsets: Float64Array;
  readonly lengths: Uint32Array;
  /** The job id of input `i`: `PLANHASH-LINE-CONTENTHASH`. */
  idOf(i: number): string;
}

const CHUNK = 1 << 20;

/** Calls `each(lineText, lineNumber, byteOffset, byteLength)` for every line, reading in chunks. */
function forEachLine(fd: number, each: (bytes: Buffer, line: number, offset: number) => void): void {
  const buffer = Buffer.alloc(CHUNK);
  let carry: Buffer = Buffer.alloc(0);
  let carryOffset = 0;
  let position = 0;
  let line = 0;
  for (;;) {
    const n = readSync(fd, buffer, 0, CHUNK, position);
    if (n === 0) break;
    const data = carry.length > 0 ? Buffer.concat([carry, buffer.subarray(0, n)]) : buffer.subarray(0, n);
    const base = carry.length > 0 ? carryOffset : position;
    position += n;
    let start = 0;
    for (let i = data.indexOf(10, 0); i !== -1; i = data.indexOf(10, start)) {
      line++;
      each(data.subarray(start, i), line, base + start);
      start = i + 1;
    }
    carry = Buffer.from(data.subarray(start));
    carryOffset = base + start;
  }
  if (carry.length > 0) each(carry, line + 1, carryOffset);
}

/** Strips a CR before the newline. */
function trimLine(bytes: Buffer): Buffer {
  return bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.subarray(0, bytes.length - 1) : bytes;
}

/** 1-based column of a JSON.parse error in `text`, from V8's message. */
function jsonErrorColumn(message: string, text: string): number {
  const at = /position (\d+)/.exec(message);
  if (at) return Number(at[1]) + 1;
  if (/Unexpected end/.test(message)) return text.length + 1;
  const token = /Unexpected token '(.)'/.exec(message);
  if (token) return text.indexOf(token[1]!) + 1 || 1;
  return 1;
}

/** The `$input` text of one input line: a JSON string is the text itself; other JSON its JSON text. */
export function inputText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A short stable hash for job ids. */
export function shortHash(text: string | Buffer, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/**
 * Reads the inputs file once: checks every line is JSON (an error names file:line:column) and
 * gives each non-blank line its job id, `PLANHASH-LINE-CONTENTHASH`, so a rerun of the same plan
 * on the same file finds the same ids.
 */
export function indexInputs(file: string, display: string, planHash: string): InputIndex {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    const err = error as NodeJS.ErrnoException;
    throw new BatchFileError(`${display}: ${err.code === 'ENOENT' ? 'no such file' : `cannot read (${err.code ?? err.message})`}`);
  }
  let lines: number[] = [];
  let offsets: number[] = [];
  let lengths: number[] = [];
  let hashes: number[] = [];
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    forEachLine(fd, (raw, line, offset) => {
      const bytes = trimLine(raw);
      let text: string;
      try {
        text = decoder.decode(bytes);
      } catch {
        throw new BatchFileError(`${display}:${line}:1: the line is not UTF-8`);
      }
      if (text.trim() === '') return;
      try {
        JSON.parse(text);
      } catch (error) {
        throw new BatchFileError(`${display}:${line}:${jsonErrorColumn((error as Error).message, text)}: each line must be one JSON value (a string is the input text): ${(error as Error).message}`);
      }
      const digest = createHash('sha256').update(bytes).digest();
      hashes.push(digest.readUInt32BE(0), digest.readUInt32BE(4));
      lines.push(line);
      offsets.push(offset);
      lengths.push(bytes.length);
    });
  } finally {
    closeSync(fd);
  }
  const index = {
    count: lines.length,
    lines: Uint32Array.from(lines),
    offsets: Float64Array.from(offsets),
    lengths: Uint32Array.from(lengths),
    hashes: Uint32Array.from(hashes),
    idOf(i: number): string {
      const hex = (n: number) => n.toString(16).padStart(8, '0');
      return `${planHash}-${this.lines[i]}-${hex(this.hashes[2 * i]!)}${hex(this.hashes[2 * i + 1]!)}`;
    },
  };
  lines = [];
  offsets = [];
  lengths = [];
  hashes = [];
  return index;
}

/** Reads input `i` again (the file is not kept in memory) and returns its parsed value. */
export function readInput(fd: number, index: InputIndex, i: number): unknown {
  const buffer = Buffer.alloc(index.lengths[i]!);
  let done = 0;
  while (done < buffer.length) {
    const n = readSync(fd, buffer, done, buffer.length - done, index.offsets[i]! + done);
    if (n === 0) throw new BatchFileError(`the inputs file changed while the batch ran (line ${index.lines[i]} is shorter)`);
    done += n;
  }
  return JSON.parse(buffer.toString('utf8'));
}

/** The results file of a batch, opened for appending. */
export interface ResultsFile {
  /** Ids that have a line already (from earlier runs and this one). */
  readonly done: Set<string>;
  /** Ids whose line (from an earlier run) is not a success. */
  readonly notOkBefore: Set<string>;
  /** A note for the user about a repaired last line, if any. */
  readonly repaired: string | null;
  /** Appends one record unless its id has a line; returns false for a duplicate. */
  append(id: string, record: Record<string, unknown>): boolean;
  /** Forces what was written to disk. */
  sync(): void;
  close(): void;
}

/** Takes `${file}.lock`; a lock left by a process that is gone (on this host) is taken over. */
function lock(file: string, display: string): string {
  const lockFile = `${file}.lock`;
  const me = `${process.pid}@${hostname()}`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lockFile, me, { flag: 'wx' });
      return lockFile;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new BatchFileError(`${display}.lock: cannot create the lock file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
      }
    }
    let owner = '';
    try {
      owner = readFileSync(lockFile, 'utf8').trim();
    } catch {
      continue;
    }
    const m = /^(\d+)@(.*)$/.exec(owner);
    const alive = m && m[2] === hostname() && isAlive(Number(m[1]));
    if (alive || (m && m[2] !== hostname())) {
      throw new BatchFileError(`${display}: another lightsop batch (${owner}) is writing it; wait for it, or delete ${display}.lock if that process is gone`);
    }
    try {
      unlinkSync(lockFile);
    } catch {
      // Another process took it over first; the next attempt reports it.
    }
  }
  throw new BatchFileError(`${display}: cannot take the lock ${display}.lock`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Opens the results file: reads the ids already in it, drops an incomplete last line (what an
 * interrupted write leaves; that input runs again), and refuses a file with other content.
 */
export function openResults(file: string, display: string): ResultsFile {
  const lockFile = lock(file, display);
  try {
    const done = new Set<string>();
    const notOkBefore = new Set<string>();
    let repaired: string | null = null;
    if (existsSync(file)) {
      const fd = openSync(file, 'r+');
      try {
        const size = fstatSync(fd).size;
        let keep = 0;
        forEachLine(fd, (raw, line, offset) => {
          const complete = offset + raw.length < size;
          const text = raw.toString('utf8');
          if (!complete) {
            if (text.trim() !== '') repaired = `${display}: dropped an incomplete last line (${raw.length} bytes) left by an interrupted run; that input runs again`;
            return;
          }
          keep = offset + raw.length + 1;
          if (text.trim() === '') return;
          let record: { id?: unknown; status?: unknown };
          try {
            record = JSON.parse(text) as { id?: unknown; status?: unknown };
          } catch {
            throw new BatchFileError(`${display}:${line}:1: not a result line of lightsop batch; give another --out (the file was left as it is)`);
          }
          if (!record || typeof record.id !== 'string') throw new BatchFileError(`${display}:${line}:1: a result line without an "id"; give another --out (the file was left as it is)`);
          done.add(record.id);
          if (record.status !== 'success') notOkBefore.add(record.id);
        });
        if (keep < size) ftruncateSync(fd, keep);
      } finally {
        closeSync(fd);
      }
    }
    const fd = openSync(file, 'a');
    let dirty = false;
    return {
      done,
      notOkBefore,
      repaired,
      append(id, record) {
        if (done.has(id)) return false;
        const bytes = Buffer.from(JSON.stringify(record) + '\n', 'utf8');
        // One write per line: O_APPEND keeps each line whole and in one place.
        let written = 0;
        while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
        done.add(id);
        dirty = true;
        return true;
      },
      sync() {
        if (!dirty) return;
        fdatasyncSync(fd);
        dirty = false;
      },
      close() {
        try {
          this.sync();
        } finally {
          closeSync(fd);
          try {
            unlinkSync(lockFile);
          } catch {
            // Already gone.
          }
        }
      },
    };
  } catch (error) {
    try {
      unlinkSync(lockFile);
    } catch {
      // Nothing to undo.
    }
    throw error;
  }
}
