// `lightsop run` (spec 6.13, checklist 118-120): JSON shape, exit codes, clear errors, english
// plans against a scripted LLM server, timeouts and Ctrl-C keeping what finished.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cli, ensureBuilt, lightsopAsync, repoRoot, tempTree } from '../helpers/cli';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';

const registryModule = `
export default {
  listCommands: () => [{ name: 'emit', description: 'first argument' }, { name: 'combine', description: 'joins with +' }, { name: 'failer', description: 'fails' }, { name: 'final_answer', description: 'the answer' }],
  async executeCommand(p, r) {
    if (p.command === 'emit' || p.command === 'final_answer') return r.success(p.args[0]);
    if (p.command === 'combine') return r.success(p.args.join('+'));
    if (p.command === 'failer') return r.fail('oops');
    throw new Error('unknown command ' + p.command);
  },
};`;
// \`slow\` and \`started\` honour ctx.signal, as skills should: an abort ends the wait at once.
// \`started\` says on stderr that it is running, so a test can wait for that before it signals.
// \`stubborn\` ignores the signal (its timer does not keep the process alive), for the grace.
const slowModule = `
const wait = (ms, signal) => new Promise((resolve, reject) => {
  const stop = () => { clearTimeout(timer); reject(new Error('stopped by the signal')); };
  const timer = setTimeout(resolve, ms);
  if (signal?.aborted) stop();
  else signal?.addEventListener('abort', stop, { once: true });
});
export default { slow: { description: 'waits', run: async (args, ctx) => { await wait(Number(args[0]), ctx.signal); return 'slept ' + args[0]; } },
                 started: { description: 'says it started, then waits until aborted', run: async (args, ctx) => { process.stderr.write('started ' + args.join(' ') + '\\n'); await wait(2 ** 31 - 1, ctx.signal); return 'never'; } },
                 stubborn: { description: 'ignores the signal', run: (args) => new Promise((r) => setTimeout(() => r('late ' + args[0]), Number(args[0])).unref()) },
                 quick: { description: 'returns', run: (args) => 'quick ' + args.join(' ') } };`;

describe('lightsop run', () => {
  it('118: --json prints declared variables, failures and commands in start order', async () => {
    const dir = tempTree({ 'skills.mjs': registryModule, 'p.sop': '@a emit x\n@b assign $a tail\n@c failer\n@d combine $c\n' });
    const res = await cli(['run', 'p.sop', '--skills', 'skills.mjs', '--json', '--input', 'in'], { cwd: dir });
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout)).toEqual({
      variables: {
        a: { status: 'success', value: 'x' },
        b: { status: 'success', value: 'x tail' },
        c: { status: 'fail', value: 'oops' },
        d: { status: 'undefined', value: 'waiting for c' },
      },
      failures: [{ variable: 'c', reason: 'oops' }],
      commands: ['emit x', 'failer', 'assign x tail'],
    });
  });

  it('119: exit 0 when everything succeeds, 2 for an invalid plan (nothing runs), 3 for usage errors', async () => {
    const dir = tempTree({ 'skills.mjs': registryModule, 'ok.sop': '@a emit x\n', 'bad.sop': '@a emit $input\n@b emit "x\n', 'skills.json': '{"emit":"e"}', 'bad.mjs': 'export default 42;', 'eng.sop': '#!english\ndo it' });
    expect((await cli(['run', 'ok.sop', '--skills', 'skills.mjs', '--json'], { cwd: dir })).code).toBe(0);
    const bad = await cli(['run', 'bad.sop', '--skills', 'skills.mjs', '--json'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).diagnostics.map((d: { code: string; line: number }) => `${d.code}@${d.line}`)).toEqual(['unterminated-string@2', 'undefined-variable@1']);
    const cases: [string[], string][] = [
      [['run', 'nope.sop'], 'nope.sop: no such file or directory'],
      [['run', 'ok.sop', '--skills', 'missing.mjs'], 'missing.mjs: no such file'],
      [['run', 'ok.sop', '--skills', 'skills.json'], 'run needs a skills module'],
      [['run', 'ok.sop', '--skills', 'bad.mjs'], 'the default export must be a commands registry'],
      [['run', 'eng.sop', '--skills', 'skills.mjs'], 'needs a language model'],
      [['run', 'ok.sop', '--timeout', 'soon'], "option '--timeout <duration>' argument 'soon' is invalid"],
    ];
    for (const [args, message] of cases) {
      const res = await cli(args, { cwd: dir });
      expect([res.code, res.stderr]).toEqual([3, expect.stringContaining(message)]);
      expect(res.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('120: a plan with more than 100 commands runs to completion', async () => {
    const plan = Array.from({ length: 150 }, (_, i) => (i === 0 ? '@v0 emit 0' : `@v${i} combine $v${i - 1}`)).join('\n');
    const dir = tempTree({ 'skills.mjs': registryModule, 'p.sop': plan });
    const res = await cli(['run', 'p.sop', '--skills', 'skills.mjs', '--json'], { cwd: dir });
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).commands).toHaveLength(150);
  });

  it('a plain skills map, the config\'s skills, and a warning for a declared @input', async () => {
    const dir = tempTree({ 'lightsop.config.json': '{ "skills": "./s.mjs" }', 's.mjs': slowModule, 'p.sop': '@input quick never\n@b quick $input\n' });
    const res = await cli(['run', 'p.sop', '--input', 'hello', '--json'], { cwd: dir });
    expect(JSON.parse(res.stdout).variables).toEqual({ input: { status: 'success', value: 'hello' }, b: { status: 'success', value: 'quick hello' } });
    expect(res.stderr).toContain('declares @input and --input is given');
  });

  it('prints a summary without --json', async () => {
    const dir = tempTree({ 'skills.mjs': registryModule, 'p.sop': '@a emit x\n@c failer\n' });
    const res = await cli(['run', 'p.sop', '--skills', 'skills.mjs'], { cwd: dir });
    expect(res.stdout).toContain('✓ @a  success   x');
    expect(res.stdout).toContain('✗ @c  fail      oops');
    expect(res.stdout).toMatch(/2 variables: 1 succeeded, 1 failed, 0 canceled, 0 not run/);
  });

  it('on a terminal, a live board of every declaration is redrawn in place, then the totals', async () => {
    const dir = tempTree({ 'skills.mjs': registryModule, 'p.sop': '@a emit x\n@b combine $a y\n@c failer\n' });
    const res = await cli(['run', 'p.sop', '--skills', 'skills.mjs'], { cwd: dir, isTTY: true });
    expect(res.stdout).toContain('@a  pending');
    expect(res.stdout).toContain('\x1b[3A');
    expect(res.stdout).toMatch(/@b  success   x\+y/);
    expect(res.stdout).toMatch(/@c  fail      oops/);
    expect(res.stdout).toMatch(/3 variables: 2 succeeded, 1 failed, 0 canceled, 0 not run/);
    // The rows are not printed a second time below the board.
    expect(res.stdout.split('@b  success').length).toBe(2);
  });

  it('--timeout aborts and still prints what finished', async () => {
    const dir = tempTree({ 's.mjs': slowModule, 'p.sop': '@a quick x\n@b stubborn 600000\n@c quick $b\n' });
    const res = await cli(['run', 'p.sop', '--skills', 's.mjs', '--json', '--timeout', '200ms'], { cwd: dir });
    const out = JSON.parse(res.stdout);
    expect(out.variables.a).toEqual({ status: 'success', value: 'quick x' });
    // `stubborn` ignores the signal: after the grace it is canceled, never a late success (issue 10).
    expect(out.variables.b).toEqual({ status: 'canceled', value: 'command stubborn canceled (did not stop within 2 s of the signal)' });
    expect(out.variables.c.status).toBe('canceled');
    expect(res.stderr).toContain('timed out after 200 ms');
    expect(res.code).toBe(1);
  });
});

describe('the built binary', () => {
  let server: LlmServer | null = null;
  beforeAll(() => ensureBuilt());
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  it('Ctrl-C stops the run cleanly and prints what finished', async () => {
    // @c starts only once @a and @b have succeeded; it says so on stderr, and only then is the
    // signal sent, however long the CLI takes to start on a busy machine.
    const dir = tempTree({ 's.mjs': slowModule, 'p.sop': '@a quick x\n@b slow 10\n@c started $a $b\n@d quick $c\n' });
    const child = spawn(process.execPath, [path.join(repoRoot, 'packages/cli/bin/lightsop.js'), 'run', 'p.sop', '--skills', 's.mjs', '--json'], { cwd: dir });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', () => {
        if (stderr.includes('started quick x slept 10\n')) resolve();
      });
      void closed.then((code) => reject(new Error(`lightsop exited (${code}) before @c started: ${stderr}`)));
    });
    child.kill('SIGINT');
    const code = await closed;
    expect(stderr).toContain('interrupted');
    expect(code).toBe(1);
    const out = JSON.parse(stdout);
    expect(out.variables.a).toEqual({ status: 'success', value: 'quick x' });
    expect(out.variables.b).toEqual({ status: 'success', value: 'slept 10' });
    expect(out.variables.c.status).not.toBe('success');
    expect(out.variables.d.status).toBe('undefined');
    expect(out.commands).toEqual(['quick x', 'slow 10', 'started quick x slept 10']);
  }, 60000);

  it('runs an english plan against an OpenAI-compatible server configured by environment', async () => {
    server = await startLlmServer(() => '@a emit planned\n@lastAnswer final_answer $a');
    const dir = tempTree({ 'skills.mjs': registryModule, 'e.sop': '#!english\nSay planned.\n' });
    const res = await lightsopAsync(['run', 'e.sop', '--skills', 'skills.mjs', '--json'], { cwd: dir, env: { LIGHTSOP_LLM_BASE_URL: server.url, LIGHTSOP_LLM_MODEL: 'scripted', LIGHTSOP_LLM_API_KEY: 'sk-secret-test' } });
    expect(res.stderr).toBe('');
    expect(JSON.parse(res.stdout).variables.lastAnswer).toEqual({ status: 'success', value: 'planned' });
    expect(res.code).toBe(0);
    expect(server.requests[0]!.messages.at(-1)!.content).toContain('Instructions:\nSay planned.');
    expect(res.stdout + res.stderr).not.toContain('sk-secret-test');
  });
});
