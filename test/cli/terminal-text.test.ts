// The CLI's terminal text (packages/cli/src/terminal-text.ts) as properties over any Unicode: no
// character that acts on a terminal or hides text survives escaping; a quoted argument can be
// read back exactly (so two different argument lists never look the same); secrets are redacted.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonLine, quoteArgument, redact, rememberSecret, terminalText } from '../../packages/cli/src/terminal-text';

const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u115F\u1160\u3164\uFFA0]/u;
const text = () => fc.string({ unit: 'binary', maxLength: 60 });

/** Reads a quoteArgument back: continuation breaks dropped, escapes decoded. */
function unquote(shown: string, indent: string): string {
  const body = shown.slice(1, -1).split(`\n${indent} `).join('');
  return body.replace(/\\(x[0-9a-f]{2}|u\{[0-9a-f]+\}|u[0-9a-f]{4}|[nrt"\\])/g, (_m, e: string) => {
    if (e === 'n') return '\n';
    if (e === 'r') return '\r';
    if (e === 't') return '\t';
    if (e === '"' || e === '\\') return e;
    if (e.startsWith('x')) return String.fromCharCode(parseInt(e.slice(1), 16));
    if (e.startsWith('u{')) return String.fromCodePoint(parseInt(e.slice(2, -1), 16));
    return String.fromCharCode(parseInt(e.slice(1), 16));
  });
}

describe('terminal text', () => {
  it('leaves no control, format or separator character (but line feeds and tabs in multi-line text, and emoji joiners)', () => {
    fc.assert(fc.property(text(), (s) => {
      const one = terminalText(s).replace(/(?<=\p{Extended_Pictographic}[\uFE0F\u{1F3FB}-\u{1F3FF}]*)\u200d(?=\p{Extended_Pictographic})/gu, '');
      expect(one).not.toMatch(UNSAFE);
      const multi = terminalText(s, { multiline: true }).replace(/[\n\t]/g, '').replace(/(?<=\p{Extended_Pictographic}[\uFE0F\u{1F3FB}-\u{1F3FF}]*)\u200d(?=\p{Extended_Pictographic})/gu, '');
      expect(multi).not.toMatch(UNSAFE);
    }), { numRuns: 500 });
    expect(terminalText('a\x1b[2Jb\u202ec\x9bd\u{e0041}')).toBe('a\\x1b[2Jb\\u202ec\\x9bd\\u{e0041}');
    expect(terminalText('👩\u200d💻 ok \u200d')).toBe('👩\u200d💻 ok \\u200d');
  });

  it('quotes an argument so that it reads back exactly: argument boundaries are never ambiguous', () => {
    fc.assert(fc.property(text(), (s) => {
      const indent = '    ';
      const shown = quoteArgument(s, { indent });
      expect(unquote(shown, indent)).toBe(s);
      // Only line breaks are raw, and each one follows its visible \n.
      expect(shown.replace(/\\n\n {5}/g, '')).not.toMatch(/\n/);
    }), { numRuns: 500 });
    expect(['a b', 'c'].map((a) => quoteArgument(a))).not.toEqual(['a', 'b c'].map((a) => quoteArgument(a)));
  });

  it('jsonLine is JSON that reads back to the same value, with no raw unsafe character', () => {
    fc.assert(fc.property(text(), (s) => {
      const line = jsonLine({ s });
      expect(line).not.toMatch(UNSAFE);
      expect(JSON.parse(line)).toEqual({ s });
    }), { numRuns: 500 });
  });

  it('redacts remembered keys (also percent-encoded), URL credentials and bearer tokens', () => {
    rememberSecret('sk-redact/me+1');
    expect(redact('key sk-redact/me+1 and sk-redact%2Fme%2B1')).toBe('key *** and ***');
    expect(redact('at http://user:pw@host:1/v1 and https://tok@h')).toBe('at http://***@host:1/v1 and https://***@h');
    expect(redact('Authorization: Bearer abcdefgh1234')).toBe('Authorization: Bearer ***');
    expect(redact('mail ada@example.org')).toBe('mail ada@example.org');
  });
});
