// What `lightsop chat` puts on a terminal, probed with a hostile model (issue 11, items 6 to 10):
// approvals show every argument whole, quoted and escaped; only an answer typed after the
// question counts; model text cannot drive the terminal; the key never shows. In-process with a
// fake terminal, and the built binary in a pseudo-terminal (`script` from util-linux).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chatCommand, type ChatOptions } from '../../packages/cli/src/commands/chat';
import { ensureBuilt, lightsopAsync, repoRoot } from '../helpers/cli';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { tempDir, waitFor } from './helpers';

let server: LlmServer | null = null;
const children: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await server?.close();
  server = null;
});

const SECRET = 'sk-terminal-secret-9876';
const ESC = '\x1b';
/** Raw characters that act on a terminal or hide text; none may reach it from model text. */
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/;
/** The replan after a denial: the planner's system message carries the denial. */
const denied = (req: { messages: { content: string }[] }) => req.messages[0]!.content.includes('Denied before execution');

function startChat(options: ChatOptions, setup: { interactive?: boolean; env?: Record<string, string> } = {}) {
  const input = new PassThrough();
  let out = '';
  let err = '';
  const io = { cwd: repoRoot, isTTY: Boolean(setup.interactive), color: false, version: 'test', stdout: (t: string) => void (out += t), stderr: (t: string) => void (err += t) };
  const done = chatCommand(options, io, {
    input,
    interactive: setup.interactive ?? false,
    env: { LIGHTSOP_LLM_BASE_URL: server!.url, LIGHTSOP_LLM_MODEL: 'chat-model', LIGHTSOP_LLM_API_KEY: SECRET, ...setup.env },
    onInterrupt: () => () => undefined,
  });
  return {
    done,
    send: (line: string) => input.write(line + '\n'),
    end: () => input.end(),
    out: () => out,
    err: () => err,
    questions: () => out.split('allow it?').length - 1,
  };
}

/** The approval block of the n-th question (1-based): from its header to its "allow it?". */
function question(out: string, n: number): string {
  const parts = out.split('allow it?');
  const before = parts[n - 1]!;
  return before.slice(before.lastIndexOf(' wants to run'));
}

describe('lightsop chat approvals on a terminal', () => {
  it('show escape sequences as visible escapes, so the hidden part of a command is seen (11.6)', async () => {
    server = await startLlmServer((req) => (denied(req) ? '@lastAnswer final_answer "not run"' : `@r run_shell "ls ${ESC}[8m; echo HIDDEN > hidden.txt ${ESC}[0m"\n@lastAnswer final_answer $r`));
    const root = tempDir({});
    const chat = startChat({ root }, { interactive: true });
    chat.send('list the files');
    await waitFor(() => chat.questions() === 1, 10_000, 'the approval question');
    expect(question(chat.out(), 1)).toContain('1. "ls \\x1b[8m; echo HIDDEN > hidden.txt \\x1b[0m"');
    expect(chat.out()).toContain('the input contains control or invisible characters');
    expect(chat.out()).not.toMatch(RAW_CONTROL);
    chat.send('n');
    await waitFor(() => chat.out().includes('\nnot run\n'), 10_000, 'the answer');
    chat.end();
    expect(await chat.done).toBe(0);
    expect(existsSync(path.join(root, 'hidden.txt'))).toBe(false);
  });

  it('show the whole input however long, and where each argument begins and ends (11.7)', async () => {
    const long = `${'x'.repeat(5000)}; echo TAIL`;
    const plans: Record<string, string> = {
      first: '@w write_file "a b" c\n@lastAnswer final_answer $w',
      second: '@w write_file a "b c"\n@lastAnswer final_answer $w',
      long: `@w write_file long.txt "${long}"\n@lastAnswer final_answer $w`,
      lines: '@w write_file notes.txt\nline one\n  "quoted" \\ two\n@lastAnswer final_answer $w',
    };
    server = await startLlmServer((req) => (denied(req) ? '@lastAnswer final_answer "skipped"' : plans[req.messages.at(-1)!.content]!));
    const chat = startChat({ root: tempDir({}) }, { interactive: true });
    const names = Object.keys(plans);
    for (const [i, name] of names.entries()) {
      chat.send(name);
      await waitFor(() => chat.questions() === i + 1, 10_000, `question ${i + 1}`);
      chat.send('no');
      await waitFor(() => chat.out().split('\nskipped\n').length === i + 2, 10_000, `answer ${i + 1}`);
    }
    chat.end();
    expect(await chat.done).toBe(0);
    expect(question(chat.out(), 1)).toContain('with 2 arguments:\n    1. "a b"\n    2. "c"\n');
    expect(question(chat.out(), 2)).toContain('with 2 arguments:\n    1. "a"\n    2. "b c"\n');
    expect(question(chat.out(), 3)).toContain(`2. "${long}"\n`);
    // A multi-line value: line breaks shown and kept, quotes and backslashes escaped.
    expect(question(chat.out(), 4)).toContain('2. "line one\\n\n          \\"quoted\\" \\\\ two"\n');
  });

  it('ignore lines typed before the question: type-ahead never approves (11.8)', async () => {
    server = await startLlmServer((req) => (denied(req) ? '@lastAnswer final_answer "not written"' : '@w write_file typed.txt "surprise"\n@lastAnswer final_answer $w'));
    const root = tempDir({});
    const chat = startChat({ root }, { interactive: true });
    chat.send('make a note');
    chat.send('yes and then summarise the README');
    await waitFor(() => chat.questions() === 1, 10_000, 'the approval question');
    expect(chat.out()).toContain('(typed before the question, so not taken as an answer: "yes and then summarise the README")');
    expect(existsSync(path.join(root, 'typed.txt'))).toBe(false);
    chat.send('n');
    await waitFor(() => chat.out().includes('\nnot written\n'), 10_000, 'the answer');
    chat.end();
    expect(await chat.done).toBe(0);
    expect(existsSync(path.join(root, 'typed.txt'))).toBe(false);
    expect(chat.questions()).toBe(1);
  });

  it('ask one question at a time when steps run in parallel, so an answer goes to the question in view', async () => {
    server = await startLlmServer(() => '@a write_file a.txt "A"\n@b write_file b.txt "B"\n@lastAnswer final_answer "done"');
    const root = tempDir({});
    const chat = startChat({ root }, { interactive: true });
    chat.send('write both');
    await waitFor(() => chat.questions() === 1, 10_000, 'the first question');
    // Both steps are waiting for approval; only the first question is on the screen.
    expect(chat.out().split(' wants to run').length - 1).toBe(1);
    const first = question(chat.out(), 1).includes('"a.txt"') ? 'a.txt' : 'b.txt';
    chat.send('y');
    // The file appears when it is created, before its text is written: wait for the text.
    const expected = first === 'a.txt' ? 'A' : 'B';
    await waitFor(() => existsSync(path.join(root, first)) && readFileSync(path.join(root, first), 'utf8') === expected, 10_000, `the write of ${first}`);
    await waitFor(() => chat.questions() === 2, 10_000, 'the second question');
    chat.send('y');
    await waitFor(() => chat.out().includes('\ndone\n'), 10_000, 'the answer');
    chat.end();
    expect(await chat.done).toBe(0);
  });
});

describe('lightsop chat output a model cannot hijack (11.9) and that never shows the key (11.10)', () => {
  const HOSTILE = `${ESC}]52;c;SGVsbG8=\x07copied ${ESC}[2J${ESC}]0;pwned\x07 \u202eevil \x9b31m`;

  it('plans, values and answers are escaped in text mode', async () => {
    server = await startLlmServer(() => `# note ${ESC}[8m hidden\n@x assign "${HOSTILE}"\n@lastAnswer final_answer "done ${ESC}[2J \u202e"`);
    const chat = startChat({ stdlib: false }, { interactive: true });
    chat.send('go');
    await waitFor(() => chat.out().includes('done \\x1b[2J \\u202e'), 10_000, 'the answer');
    chat.end();
    expect(await chat.done).toBe(0);
    expect(chat.out()).not.toMatch(RAW_CONTROL);
    expect(chat.err()).not.toMatch(RAW_CONTROL);
    expect(chat.out()).toContain('\\x1b]52;c;SGVsbG8=\\x07copied \\x1b[2J\\x1b]0;pwned\\x07 \\u202eevil \\x9b31m');
    expect(chat.out()).toContain('# note \\x1b[8m hidden');
  });

  it('--json escapes the characters JSON.stringify leaves raw (DEL, C1, bidi), and the values read back unchanged', async () => {
    server = await startLlmServer(() => `@lastAnswer final_answer "a\x7fb\x9bc\u202ed"`);
    const chat = startChat({ stdlib: false, json: true });
    chat.send('go');
    chat.end();
    expect(await chat.done).toBe(0);
    expect(chat.out()).not.toMatch(RAW_CONTROL);
    const events = chat.out().trim().split('\n').map((l) => JSON.parse(l) as { type: string; text?: string });
    expect(events.at(-1)).toEqual({ type: 'answer', status: 'answered', text: 'a\x7fb\x9bc\u202ed' });
  });

  it('an error body that echoes the key is shown without it, in text and JSON mode', async () => {
    server = await startLlmServer(() => ({ status: 401, text: `Incorrect API key provided: ${SECRET}. Authorization: Bearer ${SECRET}` }));
    for (const json of [false, true]) {
      const chat = startChat({ stdlib: false, json }, { interactive: !json });
      chat.send('hello');
      chat.end();
      expect(await chat.done).toBe(1);
      expect(chat.out()).toContain(`the language model at ${server.url} answered HTTP 401: Incorrect API key provided: ***`);
      expect(chat.out() + chat.err()).not.toContain(SECRET);
    }
  });
});

describe('lightsop chat, the built binary', () => {
  beforeAll(() => ensureBuilt());

  it('OPENAI_LOG=debug logs to standard error, redacted; standard output stays one JSON object per line', async () => {
    server = await startLlmServer((_req, i) => (i === 0 ? { status: 500, text: `upstream said ${SECRET}`, headers: { 'retry-after-ms': '1' } } : '@lastAnswer final_answer "hi"'));
    const env = { LIGHTSOP_LLM_BASE_URL: server.url, LIGHTSOP_LLM_MODEL: 'm', LIGHTSOP_LLM_API_KEY: SECRET, OPENAI_LOG: 'debug' };
    const res = await lightsopAsync(['chat', '--json', '--no-stdlib'], { input: 'hello\n', env });
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(JSON.parse(lines.at(-1)!)).toEqual({ type: 'answer', status: 'answered', text: 'hi' });
    expect(res.stderr).toContain('sending request');
    expect(res.stdout + res.stderr).not.toContain(SECRET);
  }, 60_000);

  it('in a pseudo-terminal: escaped approval, and neither a line typed ahead nor a half-typed answer approves', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    server = await startLlmServer(async (req) => {
      if (denied(req)) return '@lastAnswer final_answer "left alone"';
      await gate;
      return `@r run_shell "ls ${ESC}[8m; echo HIDDEN > hidden.txt ${ESC}[0m"\n@lastAnswer final_answer $r`;
    });
    const root = tempDir({});
    const bin = path.join(repoRoot, 'packages/cli/bin/lightsop.js');
    const command = [process.execPath, bin, 'chat', '--root', root, '--llm-base-url', server.url, '--llm-model', 'm'].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: root, env: { ...process.env, NO_COLOR: '1', LIGHTSOP_LLM_API_KEY: SECRET } });
    children.push(child);
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    const questions = () => out.split('allow it?').length - 1;
    await waitFor(() => out.includes('› '), 20_000, 'the prompt');
    child.stdin.write('list the files\r');
    await waitFor(() => server!.requests.length === 1, 20_000, 'the plan request');
    // Typed while the model thinks: a whole line, then an answer without Enter.
    child.stdin.write('yes and then summarise the README\ry');
    await waitFor(() => /summarise the README[\s\S]*y$/.test(out), 20_000, 'the echo of the typed-ahead input');
    release();
    await waitFor(() => questions() === 1, 20_000, 'the approval question');
    expect(out).toContain('1. "ls \\x1b[8m; echo HIDDEN > hidden.txt \\x1b[0m"');
    expect(out).not.toContain(`${ESC}[8m`);
    expect(out).toContain('(typed before the question, so not taken as an answer: "yes and then summarise the README", "y")');
    // Enter now sends an empty line (the half-typed "y" was cleared): asked again.
    child.stdin.write('\r');
    await waitFor(() => questions() === 2, 20_000, 'the question again');
    expect(existsSync(path.join(root, 'hidden.txt'))).toBe(false);
    child.stdin.write('n\r');
    await waitFor(() => out.includes('left alone'), 20_000, 'the answer');
    child.stdin.write('/exit\r');
    expect(await closed).toBe(0);
    expect(existsSync(path.join(root, 'hidden.txt'))).toBe(false);
    expect(out).not.toContain(SECRET);
  }, 90_000);
});
