// `lightsop chat` (contract.md): JSON events for scripts, TTY approvals (yes / no / always),
// Ctrl-C interrupting a turn while the session goes on, usage errors, and the built binary
// against a scripted OpenAI-compatible server.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chatCommand, type ChatOptions } from '../../packages/cli/src/commands/chat';
import { ensureBuilt, lightsopAsync, repoRoot, cli } from '../helpers/cli';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { tempDir, waitFor } from './helpers';

let server: LlmServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const SECRET = 'sk-chat-secret-123';

/** Runs chat in-process with a fake terminal or pipe; returns controls and the captured output. */
function startChat(options: ChatOptions, setup: { interactive?: boolean; cwd?: string; env?: Record<string, string> } = {}) {
  const input = new PassThrough();
  let out = '';
  let err = '';
  let interrupt: (() => void) | null = null;
  const io = { cwd: setup.cwd ?? repoRoot, isTTY: false, color: false, version: 'test', stdout: (t: string) => void (out += t), stderr: (t: string) => void (err += t) };
  const done = chatCommand(options, io, {
    input,
    interactive: setup.interactive ?? false,
    env: { LIGHTSOP_LLM_BASE_URL: server!.url, LIGHTSOP_LLM_MODEL: 'chat-model', LIGHTSOP_LLM_API_KEY: SECRET, ...setup.env },
    onInterrupt(handler) {
      interrupt = handler;
      return () => void (interrupt = null);
    },
  });
  return {
    done,
    send: (line: string) => input.write(line + '\n'),
    end: () => input.end(),
    ctrlC: () => interrupt?.(),
    out: () => out,
    err: () => err,
    events: () => out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const plan = (text: string) => text;

describe('lightsop chat', () => {
  it('--json prints the plan, the variable events and the answer, one object per line, and never the key', async () => {
    server = await startLlmServer(() => plan('# Say hello\n@greeting assign "Hello, Ada!"\n@lastAnswer final_answer $greeting'));
    const chat = startChat({ json: true, stdlib: false });
    chat.send('Greet Ada');
    chat.end();
    expect(await chat.done).toBe(0);
    const events = chat.events();
    expect(events.every((e) => typeof e.type === 'string')).toBe(true);
    expect(events[0]).toEqual({ type: 'turn', regime: 'sop' });
    expect(events).toContainEqual({ type: 'plan', attempt: 1, plan: '# Say hello\n@greeting assign "Hello, Ada!"\n@lastAnswer final_answer $greeting' });
    expect(events).toContainEqual({ type: 'variable', variable: 'greeting', command: 'assign', state: 'success', value: 'Hello, Ada!' });
    expect(events.at(-1)).toEqual({ type: 'answer', status: 'answered', text: 'Hello, Ada!' });
    expect(chat.out() + chat.err()).not.toContain(SECRET);
  });

  it('--mode loop runs the loop session; every turn ends with an answer object', async () => {
    server = await startLlmServer((_r, i) => (i === 0 ? '## tool\nlist_files\n## prompt\n.' : '## tool\nfinal_answer\n## prompt\nThere is one file: a.txt'));
    const root = tempDir({ 'a.txt': 'x' });
    const chat = startChat({ json: true, mode: 'loop', root });
    chat.send('what files are there?');
    chat.send('');
    chat.end();
    expect(await chat.done).toBe(0);
    const events = chat.events();
    expect(events[0]).toEqual({ type: 'turn', regime: 'loop' });
    expect(events).toContainEqual({ type: 'approval', tool: 'list_files', input: '.', verdict: 'approve' });
    expect(events).toContainEqual({ type: 'tool', tool: 'list_files', state: 'ok', resultRef: 'list_files-res-1' });
    expect(events.filter((e) => e.type === 'answer')).toEqual([{ type: 'answer', status: 'answered', text: 'There is one file: a.txt' }]);
  });

  it('without a TTY, calls with side effects are denied unless --approve-all', async () => {
    server = await startLlmServer((req) => (req.messages[0]!.content.includes('Denied before execution')
      ? '@lastAnswer final_answer "I may not write files here."'
      : '# Save the note\n@w write_file note.txt "hello"\n@lastAnswer final_answer $w'));
    const root = tempDir({});
    const denied = startChat({ json: true, root });
    denied.send('save a note');
    denied.end();
    expect(await denied.done).toBe(0);
    expect(denied.events()).toContainEqual({ type: 'approval', tool: 'write_file', input: 'write_file note.txt hello', verdict: 'deny' });
    expect(denied.events().at(-1)).toEqual({ type: 'answer', status: 'answered', text: 'I may not write files here.' });
    expect(existsSync(path.join(root, 'note.txt'))).toBe(false);
    const allowed = startChat({ json: true, root, approveAll: true });
    allowed.send('save a note');
    allowed.end();
    expect(await allowed.done).toBe(0);
    expect(readFileSync(path.join(root, 'note.txt'), 'utf8')).toBe('hello');
    expect(allowed.events().at(-1)).toEqual({ type: 'answer', status: 'answered', text: 'Wrote 5 bytes to note.txt' });
  });

  it('TTY approvals: yes runs the call, no denies it with a reason, always skips the question for the identical call', async () => {
    server = await startLlmServer((req) => {
      const prompt = req.messages.at(-1)!.content;
      if (req.messages[0]!.content.includes('Denied before execution')) return '@lastAnswer final_answer "ok, not writing"';
      return `@w write_file ${prompt.includes('second') ? 'b.txt' : 'a.txt'} "${prompt}"\n@lastAnswer final_answer $w`;
    });
    const root = tempDir({});
    const chat = startChat({ root }, { interactive: true });
    await waitFor(() => chat.out().includes('›'));
    chat.send('first');
    await waitFor(() => chat.out().includes('allow it?'), 15000, 'the approval question');
    expect(chat.out()).toContain('write_file wants to run (plan step @w)\n  with 2 arguments:\n    1. "a.txt"\n    2. "first"\n');
    chat.send('y');
    const answers = () => chat.out().split('\nWrote 5 bytes to a.txt\n').length - 1;
    const questions = () => chat.out().split('allow it?').length - 1;
    await waitFor(() => answers() === 1, 15000, 'the first answer');
    chat.send('second');
    await waitFor(() => questions() === 2, 15000, 'the second question');
    chat.send('no, not today');
    await waitFor(() => chat.out().includes('\nok, not writing\n'), 15000, 'the denial answer');
    expect(existsSync(path.join(root, 'b.txt'))).toBe(false);
    expect(JSON.stringify(server.requests.at(-1)!.messages[0])).toContain('Reason: not today');
    chat.send('first');
    await waitFor(() => questions() === 3, 15000, 'the third question');
    chat.send('always');
    await waitFor(() => answers() === 2, 15000, 'the third answer');
    chat.send('first');
    await waitFor(() => answers() === 3, 15000, 'the fourth answer');
    expect(questions()).toBe(3);
    chat.end();
    expect(await chat.done).toBe(0);
  });

  it('--json on a terminal asks approvals on stderr, so standard output stays one JSON object per line', async () => {
    server = await startLlmServer(() => '@w write_file j.txt "json"\n@lastAnswer final_answer $w');
    const root = tempDir({});
    const chat = startChat({ json: true, root }, { interactive: true });
    chat.send('write it');
    await waitFor(() => chat.err().includes('allow it?'), 15000, 'the approval question');
    chat.send('yes');
    chat.end();
    expect(await chat.done).toBe(0);
    expect(chat.events().at(-1)).toEqual({ type: 'answer', status: 'answered', text: 'Wrote 4 bytes to j.txt' });
    expect(chat.out()).not.toContain('allow it?');
  });

  it('Ctrl-C interrupts the current turn and keeps the session; Ctrl-C at the prompt quits', async () => {
    server = await startLlmServer((_req, i) => (i === 0 ? { hold: true } : '@lastAnswer final_answer "still here"'));
    const chat = startChat({ stdlib: false }, { interactive: true });
    chat.send('think hard');
    await waitFor(() => server!.requests.length === 1, 15000, 'the first request');
    chat.ctrlC();
    await waitFor(() => chat.out().includes('Interrupted by user'), 15000, 'the interruption');
    expect(chat.err()).toContain('interrupting the current turn');
    chat.send('are you there?');
    await waitFor(() => chat.out().includes('still here'), 15000, 'the next answer');
    const second = server.requests[1]!;
    expect(second.messages[0]!.content).toContain('interrupted by user: user');
    chat.ctrlC();
    expect(await chat.done).toBe(0);
  });

  it('a failed execution ends with status failed, its reason and failures, and exit code 1', async () => {
    server = await startLlmServer(() => '@n read_file missing.txt\n@lastAnswer final_answer $n');
    const chat = startChat({ json: true, root: tempDir({}), maxPlanAttempts: 1 });
    chat.send('read the missing file');
    chat.end();
    expect(await chat.done).toBe(1);
    expect(chat.events().at(-1)).toMatchObject({ type: 'answer', status: 'failed', reason: 'execution_failed', failures: [{ variable: 'n' }] });
  });

  it('provider errors end the turn with status error and never print the key', async () => {
    server = await startLlmServer(() => ({ status: 401, text: 'bad key' }));
    const chat = startChat({ json: true, stdlib: false });
    chat.send('hello');
    chat.end();
    expect(await chat.done).toBe(1);
    expect(chat.events().at(-1)).toMatchObject({ type: 'answer', status: 'error' });
    expect(chat.out() + chat.err()).not.toContain(SECRET);
  });

  it('usage errors exit 3 with one line', async () => {
    const noLlm = await cli(['chat'], { cwd: tempDir({}) });
    expect(noLlm.code).toBe(3);
    expect(noLlm.stderr).toMatch(/^lightsop: chat needs a language model/);
    expect((await cli(['chat', '--mode', 'maybe'])).code).toBe(3);
    const dir = tempDir({ 'skills.json': '{"x":"y"}' });
    const json = await cli(['chat', '--skills', 'skills.json', '--llm-base-url', 'http://127.0.0.1:9/v1', '--llm-model', 'm'], { cwd: dir });
    expect(json.code).toBe(3);
    expect(json.stderr).toContain('chat needs a skills module');
    const missing = await cli(['chat', '--skills', 'nope.mjs', '--llm-base-url', 'http://127.0.0.1:9/v1', '--llm-model', 'm'], { cwd: dir });
    expect(missing.code).toBe(3);
  });
});

describe('lightsop chat, the built binary', () => {
  beforeAll(() => ensureBuilt());

  const greet = () => startLlmServer((req) => (req.messages[0]!.content.includes('Denied before execution')
    ? '@greeting assign "Hello, Ada!"\n@lastAnswer final_answer $greeting'
    : '# Greet Ada by name\n@greeting greet Ada\n@lastAnswer final_answer $greeting'));

  it('echo "..." | lightsop chat --skills examples/skills.mjs --json prints the plan, the variable events and the answer', async () => {
    server = await greet();
    const env = { LIGHTSOP_LLM_BASE_URL: server.url, LIGHTSOP_LLM_MODEL: 'scripted', LIGHTSOP_LLM_API_KEY: SECRET };
    const res = await lightsopAsync(['chat', '--skills', 'examples/skills.mjs', '--json'], { input: 'Greet Ada\n', env });
    expect(res.code).toBe(0);
    const events = res.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(events[0]).toEqual({ type: 'turn', regime: 'sop' });
    expect(events[1]).toEqual({ type: 'plan', attempt: 1, plan: '# Greet Ada by name\n@greeting greet Ada\n@lastAnswer final_answer $greeting' });
    // The example skills declare sideEffects: false, so no approval is needed without a terminal.
    expect(events.some((e) => e.type === 'approval' && e.verdict === 'deny')).toBe(false);
    expect(events).toContainEqual({ type: 'variable', variable: 'greeting', command: 'greet', state: 'success', value: 'Hello, Ada!' });
    expect(events).toContainEqual({ type: 'variable', variable: 'lastAnswer', command: 'final_answer', state: 'success', value: 'Hello, Ada!' });
    expect(events.at(-1)).toEqual({ type: 'answer', status: 'answered', text: 'Hello, Ada!' });
    expect(res.stderr).toContain('the session provides final_answer');
    expect(res.stdout + res.stderr).not.toContain(SECRET);
  });

  it('without a terminal, a command whose side effects are unknown is denied and the model replans', async () => {
    server = await greet();
    const dir = tempDir({ 'skills.mjs': 'export default { greet: { description: "Greets", run: ([n]) => `Hello, ${n}!` } };' });
    const env = { LIGHTSOP_LLM_BASE_URL: server.url, LIGHTSOP_LLM_MODEL: 'scripted' };
    const res = await lightsopAsync(['chat', '--skills', 'skills.mjs', '--json'], { input: 'Greet Ada\n', env, cwd: dir });
    expect(res.code).toBe(0);
    const events = res.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(events).toContainEqual({ type: 'approval', tool: 'greet', input: 'greet Ada', verdict: 'deny' });
    expect(events).toContainEqual(expect.objectContaining({ type: 'variable', variable: 'greeting', command: 'greet', state: 'fail' }));
    expect(events.at(-1)).toEqual({ type: 'answer', status: 'answered', text: 'Hello, Ada!' });
  });

  it('with --approve-all the module\'s commands run', async () => {
    server = await greet();
    const env = { LIGHTSOP_LLM_BASE_URL: server.url, LIGHTSOP_LLM_MODEL: 'scripted' };
    const res = await lightsopAsync(['chat', '--skills', 'examples/skills.mjs', '--json', '--approve-all'], { input: 'Greet Ada\n', env });
    expect(res.code).toBe(0);
    const events = res.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(events.map((e) => e.type)).toEqual(['turn', 'plan', 'variable', 'tool_reason', 'approval', 'tool', 'tool', 'variable', 'variable', 'variable', 'usage', 'answer']);
    expect(events).toContainEqual({ type: 'variable', variable: 'greeting', command: 'greet', state: 'success', value: 'Hello, Ada!' });
    expect(events.at(-1)).toEqual({ type: 'answer', status: 'answered', text: 'Hello, Ada!' });
    expect(server.requests[0]!.model).toBe('scripted');
  });
});
