/**
 * The base protocol's framing (`Content-Length: N\r\n\r\n` then N bytes), checked on the bytes
 * that reach vscode-jsonrpc's reader. The reader itself drops a header it cannot use and then reads
 * the following body as headers, so a bad frame would leave the server alive but deaf, and it
 * buffers whatever length a header declares. This guard passes every byte through unchanged and
 * fails with a `FramingError` instead: on a header block longer than `MAX_HEADER_BYTES`, a missing,
 * repeated or non-numeric `Content-Length`, or one above `MAX_MESSAGE_BYTES`. It never buffers more
 * than one header block, so memory stays bounded whatever the client sends.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** The largest message body the server accepts (64 MiB); docs/language-server.md says so. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** The largest header block (all header lines with their line breaks). */
export const MAX_HEADER_BYTES = 8 * 1024;

export class FramingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FramingError';
  }
}

const CR = 0x0d;
const LF = 0x0a;

/** Checks the header block of one message (without its final blank line) and returns the body length. */
export function contentLengthOf(block: string): number {
  let length: number | null = null;
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) throw new FramingError(`a header line has no ':' (${JSON.stringify(line.slice(0, 80))})`);
    // Names compare as vscode-jsonrpc compares them: lower-cased, not trimmed.
    if (line.slice(0, colon).toLowerCase() !== 'content-length') continue;
    if (length !== null) throw new FramingError('the header block has more than one Content-Length');
    const value = line.slice(colon + 1).trim();
    if (!/^\d+$/.test(value)) throw new FramingError(`Content-Length is not a non-negative integer (${JSON.stringify(value.slice(0, 40))})`);
    const n = Number(value);
    if (n > MAX_MESSAGE_BYTES) throw new FramingError(`Content-Length ${value} is above the limit of ${MAX_MESSAGE_BYTES} bytes`);
    length = n;
  }
  if (length === null) throw new FramingError('the header block has no Content-Length');
  return length;
}

/** A pass-through stream that fails on the first framing error (see the module comment). */
export class FramingGuard extends Transform {
  /** Body bytes still expected for the current message; 0 while reading headers. */
  #remaining = 0;
  readonly #header = Buffer.alloc(MAX_HEADER_BYTES);
  #headerLength = 0;
  /** How much of "\r\n\r\n" the header bytes end with. */
  #matched = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let pos = 0;
    try {
      while (pos < chunk.length) {
        if (this.#remaining > 0) {
          const n = Math.min(this.#remaining, chunk.length - pos);
          this.#remaining -= n;
          pos += n;
          continue;
        }
        const byte = chunk[pos]!;
        pos++;
        if (this.#headerLength === MAX_HEADER_BYTES) throw new FramingError(`a header block is longer than ${MAX_HEADER_BYTES} bytes`);
        this.#header[this.#headerLength++] = byte;
        if (byte === CR) this.#matched = this.#matched === 2 ? 3 : 1;
        else if (byte === LF && (this.#matched === 1 || this.#matched === 3)) this.#matched++;
        else this.#matched = 0;
        if (this.#matched === 4) {
          this.#remaining = contentLengthOf(this.#header.toString('latin1', 0, this.#headerLength - 4));
          this.#headerLength = 0;
          this.#matched = 0;
        }
      }
    } catch (error) {
      // The stream fails; nothing of this chunk reaches the reader, which would misread it.
      callback(error as Error);
      return;
    }
    callback(null, chunk);
  }
}
