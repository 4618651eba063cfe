// Token budgets (issue 15 item 6): `--max-tokens` and "llm.maxTokens" bound the tokens an
// #!english plan or a chat session spends, counted from the usage the scripted server reports;
// once spent, no further model request is made and the CLI says why. Usage is in the summary,
// in `run --json` (an added "usage" key) and in chat's JSON lines.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, lightsopAsync, tempTree } from '../helpers/cli';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';

const registryModule = `
export default {
  listCommands: () => [{ name: 'emit', description: 'first argument' }, { name: 'failer', description: 'fails' }, { name: 'final_answer', description: 'the answer' }],
  async executeCommand(p, r) {
    if (p.command === 'emit' || p.command === 'final_answer') return r.success(p.args[0]);
    if (p.command === 'failer') return r.fail('oops');
    throw new Error('unknown command ' + p.command);
  },
};`;

const FAILING_PLAN = { text: '@a failer\n@lastAnswer final_answer $a', usage: { inputTokens: 100, outputTokens: 50 } };

let server: LlmServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe('token budgets of lightsop run', () => {
  beforeAll(() => ensureBuilt());

  it('--max-tokens stops revisions once the reported usage reaches it: the results stand, the reason is printed, exit 1', async () => {
    server = await startLlmServer(() => FAILING_PLAN);
    const dir = tempTree({ 'skills.mjs': registryModule, 'e.sop': '#!english\nDo it.\n' });
    const res = await lightsopAsync(['run', 'e.sop', '--skills', 'skills.mjs', '--json', '--llm-base-url', server.url, '--llm-model', 'm', '--max-tokens', '200'], { cwd: dir });
    expect(res.code).toBe(1);
    // 150 tokens after the first request (below 200): one revision; 300 after it: no third request.
    expect(server.requests).toHaveLength(2);
    const out = JSON.parse(res.stdout) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['variables', 'failures', 'commands', 'usage']);
    expect(out.usage).toEqual({ inputTokens: 200, outputTokens: 100, totalTokens: 300, maxTokens: 200, exhausted: true });
    expect(res.stderr).toBe('lightsop: token budget reached (300 of 200 tokens): no further plan generation or revision was requested\n');
  }, 60_000);

  it('without a budget the same plan gets every round (the control)', async () => {
    server = await startLlmServer(() => FAILING_PLAN);
    const dir = tempTree({ 'skills.mjs': registryModule, 'e.sop': '#!english\nDo it.\n' });
    const res = await lightsopAsync(['run', 'e.sop', '--skills', 'skills.mjs', '--json', '--llm-base-url', server.url, '--llm-model', 'm'], { cwd: dir });
    expect(res.code).toBe(1);
    expect(server.requests).toHaveLength(5);
    expect((JSON.parse(res.stdout) as { usage: unknown }).usage).toEqual({ inputTokens: 500, outputTokens: 250, totalTokens: 750, maxTokens: null, exhausted: false });
    expect(res.stderr).toBe('');
  }, 60_000);

  it('a budget spent before any valid plan ends generation at once with the reason (exit 1); the summary shows the usage', async () => {
    // The first plan calls an unlisted command (a failed round); the budget forbids a second request.
    server = await startLlmServer(() => ({ text: '@a nosuch\n@lastAnswer final_answer $a', usage: { inputTokens: 90, outputTokens: 30 } }));
    const dir = tempTree({ 'skills.mjs': registryModule, 'e.sop': '#!english\nDo it.\n' });
    const res = await lightsopAsync(['run', 'e.sop', '--skills', 'skills.mjs', '--llm-base-url', server.url, '--llm-model', 'm', '--max-tokens', '100'], { cwd: dir });
    expect(res.code).toBe(1);
    expect(server.requests).toHaveLength(1);
    expect(res.stderr).toContain('tokens: 90 input, 30 output (120 of 100 budgeted)');
    expect(res.stderr).toContain('e.sop: token budget reached: 120 of 100 tokens used (--max-tokens, llm.maxTokens); no further model request was made');
  }, 60_000);

  it('"llm.maxTokens" in lightsop.config.json sets the budget, the flag overrides it, and a bad value is exit 3 naming the field', async () => {
    server = await startLlmServer(() => FAILING_PLAN);
    const config = (maxTokens: unknown) => JSON.stringify({ skills: './skills.mjs', llm: { baseUrl: server!.url, model: 'm', maxTokens } });
    const dir = tempTree({ 'skills.mjs': registryModule, 'e.sop': '#!english\nDo it.\n', 'lightsop.config.json': config(150) });
    const fromConfig = await lightsopAsync(['run', 'e.sop'], { cwd: dir });
    expect(fromConfig.code).toBe(1);
    expect(server.requests).toHaveLength(1);
    expect(fromConfig.stdout).toContain('tokens: 100 input, 50 output (150 of 150 budgeted)');
    expect(fromConfig.stderr).toContain('token budget reached (150 of 150 tokens)');

    const overridden = await lightsopAsync(['run', 'e.sop', '--max-tokens', '400', '--json'], { cwd: dir });
    expect((JSON.parse(overridden.stdout) as { usage: { totalTokens: number; maxTokens: number } }).usage).toMatchObject({ totalTokens: 450, maxTokens: 400 });

    for (const bad of [0, -5, 1.5, '100', true]) {
      const badDir = tempTree({ 'skills.mjs': registryModule, 'e.sop': '#!english\nDo it.\n', 'lightsop.config.json': config(bad) });
      const res = await lightsopAsync(['run', 'e.sop'], { cwd: badDir });
      expect(res.code, String(bad)).toBe(3);
      expect(res.stderr).toMatch(/lightsop\.config\.json: .*field "llm\.maxTokens" must be a positive integer/);
    }
    const flag = await lightsopAsync(['run', 'e.sop', '--max-tokens', '0'], { cwd: dir });
    expect(flag.code).toBe(3);
    expect(flag.stderr).toContain("option '--max-tokens <n>' argument '0' is invalid");
  }, 120_000);
});

describe('token budgets of lightsop chat', () => {
  it('each turn reports the tokens so far; once the budget is spent the next turn makes no request and says why', async () => {
    server = await startLlmServer(() => ({ text: '@lastAnswer final_answer "hi"', usage: { inputTokens: 70, outputTokens: 40 } }));
    const res = await lightsopAsync(['chat', '--json', '--no-stdlib', '--max-tokens', '100'], {
      input: 'first\nsecond\n',
      env: { LIGHTSOP_LLM_BASE_URL: server.url, LIGHTSOP_LLM_MODEL: 'm' },
      cwd: tempTree({}),
    });
    const events = res.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const usage = events.filter((e) => e.type === 'usage');
    const answers = events.filter((e) => e.type === 'answer');
    expect(answers).toHaveLength(2);
    expect(answers[0]).toEqual({ type: 'answer', status: 'answered', text: 'hi' });
    expect(usage[0]).toEqual({ type: 'usage', inputTokens: 70, outputTokens: 40, totalTokens: 110, maxTokens: 100, exhausted: false });
    expect(answers[1]!.status).not.toBe('answered');
    expect(String(answers[1]!.text)).toContain('token budget reached: 110 of 100 tokens used');
    expect(usage[1]).toMatchObject({ totalTokens: 110, exhausted: true });
    expect(server.requests).toHaveLength(1);
    expect(res.stderr).toContain('lightsop: token budget reached (110 of 100 tokens): no further model request is made in this session');
    expect(res.code).toBe(1);
  }, 60_000);
});
