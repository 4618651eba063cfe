/**
 * What the CLI may put on a terminal. Text from a model, a skill, a plan or `--input` is shown,
 * never obeyed: every control character (C0, DEL, C1), every invisible format character (bidi
 * overrides and isolates, zero-width characters, tag characters), line and paragraph separators
 * and lone surrogates are printed as visible escapes, so no escape sequence can hide text, move
 * the cursor, clear the screen, set the window title or write the clipboard (OSC 52). Secrets
 * (the configured API key, URL credentials, bearer tokens) are redacted from everything the CLI
 * prints, by `guardIo` at the output edge. `--json` needs none of the escaping: JSON.stringify
 * already escapes control characters, and redaction keeps JSON valid.
 */
import { redactSecrets } from '@lightsop/core';
import type { Io } from './io';

/**
 * Characters that are never printed as they are: Cc (C0, DEL, C1), Cf (bidi controls, zero-width
 * characters, the BOM, tag characters), the line and paragraph separators, lone surrogates, and
 * the Hangul fillers, which are letters that render as blank space.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u115F\u1160\u3164\uFFA0]/gu;
const PICTOGRAPH = /\p{Extended_Pictographic}/u;

const SHORT_ESCAPES: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** The visible escape of one character: `\n`, `\x1b`, `\u202e` or `\u{e0041}`. */
function escapeChar(ch: string): string {
  const short = SHORT_ESCAPES[ch];
  if (short) return short;
  const code = ch.codePointAt(0)!;
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\u{${code.toString(16)}}`;
}

/** The code point that ends just before `index` (a surrogate pair counts as one). */
function codePointBefore(text: string, index: number): number | undefined {
  if (index <= 0) return undefined;
  const low = text.charCodeAt(index - 1);
  if (low >= 0xdc00 && low <= 0xdfff && index >= 2) {
    const high = text.charCodeAt(index - 2);
    if (high >= 0xd800 && high <= 0xdbff) return text.codePointAt(index - 2);
  }
  return low;
}

/**
 * A zero-width joiner between two pictographs builds one emoji (👩‍💻): harmless, and kept. A
 * variation selector or a skin tone before the joiner belongs to the first pictograph.
 */
function isEmojiJoiner(text: string, index: number): boolean {
  let i = index;
  for (;;) {
    const cp = codePointBefore(text, i);
    if (cp === 0xfe0f) i -= 1;
    else if (cp !== undefined && cp >= 0x1f3fb && cp <= 0x1f3ff) i -= 2;
    else break;
  }
  const before = codePointBefore(text, i);
  const after = text.codePointAt(index + 1);
  return before !== undefined && after !== undefined && PICTOGRAPH.test(String.fromCodePoint(before)) && PICTOGRAPH.test(String.fromCodePoint(after));
}

export interface TerminalTextOptions {
  /** Keep line breaks and tabs (a plan, an answer); otherwise they are escaped too. */
  readonly multiline?: boolean;
  /** Styles each escape, so the reader notices it (e.g. inverse video in an approval). */
  readonly mark?: (escape: string) => string;
}

/**
 * The text with every character that could act on the terminal or hide other text replaced by
 * a visible escape. With `multiline`, `\n` and `\t` stay and `\r\n` becomes `\n`.
 */
export function terminalText(text: string, options: TerminalTextOptions = {}): string {
  const source = options.multiline ? text.replace(/\r\n/g, '\n') : text;
  const mark = options.mark ?? ((s: string) => s);
  return source.replace(UNSAFE, (ch, index: number) => {
    if (options.multiline && (ch === '\n' || ch === '\t')) return ch;
    if (ch === '\u200d' && isEmojiJoiner(source, index)) return ch;
    return mark(escapeChar(ch));
  });
}

/**
 * A value as one line of JSON that is also safe on a terminal: JSON.stringify escapes C0 but
 * leaves DEL, C1, bidi and other invisible characters raw; they become `\uXXXX` escapes, which
 * any JSON reader decodes to the same value.
 */
export function jsonLine(value: unknown): string {
  return escapeJsonText(JSON.stringify(value));
}

/**
 * JSON text with the characters `JSON.stringify` leaves raw (DEL, C1, bidi, invisible) written as
 * `\uXXXX` escapes. They can only occur inside JSON strings, so the JSON reads back the same.
 */
export function escapeJsonText(json: string): string {
  return json.replace(UNSAFE, (ch) => {
    let out = '';
    for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return out;
  });
}

/** True when `terminalText` would escape something in the text (besides line breaks and tabs). */
export function hasHiddenCharacters(text: string): boolean {
  return terminalText(text, { multiline: true }) !== text.replace(/\r\n/g, '\n');
}

/** One line for a log or a table: whitespace runs become one space, then escaped, then cut to `max`. */
export function oneLine(text: string, max: number): string {
  const flat = terminalText(text.replace(/[ \t\n\r\v\f\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/g, ' ').trim());
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * An argument as an approval shows it: in double quotes, with `\` and `"` escaped and every
 * unsafe character as a visible escape, so the boundaries of each argument are unambiguous
 * (`"a b" "c"` differs from `"a" "b c"`). A line break is shown as `\n` and also breaks the line,
 * continued after `indent`, so long multi-line values stay readable and whole.
 */
export function quoteArgument(text: string, options: { indent?: string; mark?: (escape: string) => string } = {}): string {
  const mark = options.mark ?? ((s: string) => s);
  const indent = options.indent ?? '';
  const body = text.replace(/[\\"]/g, (c) => `\\${c}`).split('\n').map((line) => terminalText(line, { mark })).join(`${mark('\\n')}\n${indent} `);
  return `"${body}"`;
}

// ------------------------------------------------------------------ secrets

const secrets = new Set<string>();

/** Adds a value (an API key) that must never be printed; redact() replaces it from now on. */
export function rememberSecret(value: string | undefined): void {
  if (value) secrets.add(value);
}

/** Every value remembered as a secret (a run record redacts them too). */
export function rememberedSecrets(): string[] {
  return [...secrets];
}

/** The text without any remembered secret, URL credentials or bearer token. */
export function redact(text: string): string {
  return redactSecrets(text, secrets);
}

const GUARDED = Symbol('guarded');
type GuardedIo = Io & { [GUARDED]?: boolean };

/** The same Io with every write redacted: the CLI's output edge. */
export function guardIo(io: Io): Io {
  if ((io as GuardedIo)[GUARDED]) return io;
  const guarded: GuardedIo = {
    ...io,
    stdout: (text) => io.stdout(redact(text)),
    stderr: (text) => io.stderr(redact(text)),
    [GUARDED]: true,
  };
  return guarded;
}

/** The keys the environment gives (LIGHTSOP_LLM_API_KEY, OPENAI_API_KEY), remembered as secrets. */
export function rememberEnvironmentSecrets(env: NodeJS.ProcessEnv): void {
  rememberSecret(env.LIGHTSOP_LLM_API_KEY);
  rememberSecret(env.OPENAI_API_KEY);
}
