// `lightsop run` on a terminal with hostile text (issue 11.9): values from skills, `--input` and
// generated plans are escaped in the live board, the log, the summary and the answer, and the
// error printer escapes what it names. The board's own cursor sequences are the only escapes left.
import { afterEach, describe, expect, it } from 'vitest';
import { cli, tempTree } from '../helpers/cli';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';

let server: LlmServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const ESC = '\x1b';
const HOSTILE = `${ESC}]52;c;SGVsbG8=\x07clip ${ESC}[2J${ESC}]0;pwned\x07 \u202eevil \x9b31m\u200b`;
const SHOWN = '\\x1b]52;c;SGVsbG8=\\x07clip \\x1b[2J\\x1b]0;pwned\\x07 \\u202eevil \\x9b31m\\u200b';
/** The live board's own sequences: cursor up and erase line. */
const BOARD = /\x1b\[\d*A|\x1b\[2K/g;
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/;

const SKILLS = `export default {
  evil: { description: 'returns hostile text', run: () => ${JSON.stringify(HOSTILE)} },
  echo: { description: 'returns its argument', run: ([text]) => text },
  broken: { description: 'fails with hostile text', run: () => { throw new Error(${JSON.stringify(HOSTILE)}); } },
  final_answer: { description: 'the answer', run: ([text]) => text },
};`;

describe('lightsop run prints no raw control characters from plans, skills or --input', () => {
  it('on the live board, in the summary and in the answer', async () => {
    const dir = tempTree({
      'p.sop': '@a evil\n@b echo $input\n@c broken\n@lastAnswer final_answer $a\n',
      'skills.mjs': SKILLS,
    });
    const res = await cli(['run', 'p.sop', '--skills', 'skills.mjs', '--input', HOSTILE], { cwd: dir, isTTY: true });
    expect(res.code).toBe(1);
    const shown = res.stdout.replace(BOARD, '');
    expect(shown).not.toMatch(RAW_CONTROL);
    expect(res.stderr).not.toMatch(RAW_CONTROL);
    expect(shown).toContain(`Answer:\n${SHOWN}\n`);
    expect(shown).toContain('\\x1b]52;c;SGVsbG8=');
  });

  it('in the log of a plan too long for the board, and without a terminal', async () => {
    const many = Array.from({ length: 45 }, (_, i) => `@v${i} echo $input`).join('\n');
    const dir = tempTree({ 'p.sop': `${many}\n@lastAnswer final_answer $v0\n`, 'skills.mjs': SKILLS });
    for (const isTTY of [true, false]) {
      const res = await cli(['run', 'p.sop', '--skills', 'skills.mjs', '--input', HOSTILE], { cwd: dir, isTTY });
      expect(res.code).toBe(0);
      expect(res.stdout.replace(BOARD, '')).not.toMatch(RAW_CONTROL);
      expect(res.stdout).toContain(SHOWN.slice(0, 30));
    }
  });

  it('in a generated plan of an english script', async () => {
    server = await startLlmServer(() => `# ${ESC}]0;pwned${ESC}\\\\ ok\n@lastAnswer final_answer "done ${ESC}[2J"`);
    const dir = tempTree({ 'e.sop': '#!english\nSay done.\n', 'skills.mjs': SKILLS });
    const res = await cli(['run', 'e.sop', '--skills', 'skills.mjs', '--llm-base-url', server.url, '--llm-model', 'm'], { cwd: dir, isTTY: true });
    expect(res.code).toBe(0);
    expect(res.stdout.replace(BOARD, '')).not.toMatch(RAW_CONTROL);
    expect(res.stdout).toContain('# \\x1b]0;pwned\\x1b\\\\ ok');
    expect(res.stdout).toContain('done \\x1b[2J');
  });

  it('in error messages: a file name with escape sequences is shown escaped', async () => {
    const dir = tempTree({});
    const res = await cli(['run', `missing${ESC}]0;pwned\x07.sop`], { cwd: dir });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain('missing\\x1b]0;pwned\\x07.sop');
    expect(res.stderr).not.toMatch(RAW_CONTROL);
  });

  it('--json escapes DEL, C1 and bidi characters that JSON.stringify leaves raw; the values read back unchanged', async () => {
    const dir = tempTree({ 'p.sop': '@b echo $input\n', 'skills.mjs': SKILLS });
    const res = await cli(['run', 'p.sop', '--skills', 'skills.mjs', '--input', 'a\x7fb\x9bc\u202ed', '--json'], { cwd: dir });
    expect(res.code).toBe(0);
    expect(res.stdout).not.toMatch(RAW_CONTROL);
    expect(JSON.parse(res.stdout).variables.b.value).toBe('a\x7fb\x9bc\u202ed');
  });
});
