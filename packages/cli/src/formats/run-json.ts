/**
 * The `lightsop run --json` object (contract.md), written piece by piece so that its size is not
 * bounded by V8's longest string: a run of 200k declarations or a value of 400 million characters
 * prints every result. The bytes are those of `JSON.stringify` on the same object, except that a
 * text whose JSON form would itself be longer than a string can be is cut with a marker and
 * listed under an extra `"truncated"` key (absent when nothing was cut).
 */
import { constants } from 'node:buffer';

const { MAX_STRING_LENGTH } = constants;

export interface RunJsonResult {
  /** Every declared variable in table order. */
  readonly variables: Iterable<readonly [string, { readonly status: string; readonly value: string }]>;
  readonly failures: readonly { readonly variable: string; readonly reason: string }[];
  readonly commands: readonly string[];
  /** The tokens an `#!english` run spent (an added key, present only for english plans). */
  readonly usage?: RunUsage;
}

/** `"usage"` of `run --json`: what the provider reported, and the `--max-tokens` budget. */
export interface RunUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  readonly maxTokens: number | null;
  /** True when the budget stopped a model request. */
  readonly exhausted: boolean;
}

/** One text that was cut: where it is and its length before the cut. */
export interface TruncatedText {
  readonly field: 'value' | 'reason' | 'command';
  readonly variable?: string;
  /** The position in `commands` (for field `command`). */
  readonly index?: number;
  readonly length: number;
}

/** How much of a text that cannot be printed whole is kept. */
export const KEPT_WHEN_CUT = 1 << 20;

/** Pieces are gathered up to this size before a write, so 200k variables are not 200k writes. */
const CHUNK = 1 << 20;

/**
 * Writes the result as one line of JSON through `write`. `escape` post-processes each JSON text
 * that holds user text (the CLI escapes the characters `JSON.stringify` leaves raw).
 */
export function writeRunJson(write: (text: string) => void, result: RunJsonResult, escape: (json: string) => string = (json) => json): void {
  const truncated: TruncatedText[] = [];
  let buffer = '';
  const put = (piece: string) => {
    if (buffer.length + piece.length > CHUNK) {
      if (buffer !== '') write(buffer);
      buffer = '';
      // A piece as long as a chunk is written as it is, never concatenated.
      if (piece.length > CHUNK) {
        write(piece);
        return;
      }
    }
    buffer += piece;
  };
  const text = (value: string, where: Omit<TruncatedText, 'length'>) => {
    const json = jsonString(value, escape);
    if (json !== null) return json;
    truncated.push({ ...where, length: value.length });
    return escape(JSON.stringify(cut(value)));
  };

  put('{"variables":{');
  let first = true;
  for (const [name, v] of result.variables) {
    put(`${first ? '' : ','}${escape(JSON.stringify(name))}:{"status":${JSON.stringify(v.status)},"value":`);
    put(text(v.value, { field: 'value', variable: name }));
    put('}');
    first = false;
  }
  put('},"failures":[');
  result.failures.forEach((f, i) => {
    put(`${i === 0 ? '' : ','}{"variable":${escape(JSON.stringify(f.variable))},"reason":`);
    put(text(f.reason, { field: 'reason', variable: f.variable }));
    put('}');
  });
  put('],"commands":[');
  result.commands.forEach((c, i) => {
    if (i > 0) put(',');
    put(text(c, { field: 'command', index: i }));
  });
  put(']');
  if (result.usage) put(`,"usage":${JSON.stringify(result.usage)}`);
  if (truncated.length > 0) put(`,"truncated":${escape(JSON.stringify(truncated))}`);
  put('}\n');
  write(buffer);
}

/** `escape(JSON.stringify(value))`, or null when the result would be longer than a string can be. */
function jsonString(value: string, escape: (json: string) => string): string | null {
  // Measured first: a JSON.stringify that fails only after building half a gigabyte costs
  // seconds and gigabytes. Below MAX_STRING_LENGTH / 6 even a text of control characters fits.
  if (value.length > (MAX_STRING_LENGTH - 2) / 6 && jsonLength(value) > MAX_STRING_LENGTH) return null;
  try {
    return escape(JSON.stringify(value));
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

/** The length of `JSON.stringify(value)`, without building it. */
export function jsonLength(value: string): number {
  let n = 2;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) n += 2;
    else if (c < 0x20) n += 6;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < value.length && (value.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2;
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) n += 6;
    else n += 1;
  }
  return n;
}

/** The start of a text that is too long to print, with a marker that says so. */
function cut(value: string): string {
  return `${value.slice(0, KEPT_WHEN_CUT)}… [cut by lightsop: ${KEPT_WHEN_CUT} of ${value.length} characters shown; the whole text is too long for JSON output]`;
}
