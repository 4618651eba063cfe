// A model that answers with a plan of 200,000 declarations: `lightsop chat` (the SOP session
// behind it) validates the plan and rejects or runs it, and answers, instead of freezing for
// minutes in work quadratic in the declarations (issue 10, item 5): finding each diagnostic's
// declaration, and each never-started variable's command, by a linear search. No timing is
// asserted; the process is killed after a time the quadratic version (over 200 s) could not meet.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, tempTree } from '../helpers/cli';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { runBuilt, SIZE } from './plans';

const KILL_AFTER = 100_000;
const TIMEOUT = 120_000;

let server: LlmServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

let dir = '';
beforeAll(() => {
  ensureBuilt();
  // A registry (the AchillesAgentLib protocol) whose one command cancels: the cancellation
  // propagates to every dependent, one settled event each.
  dir = tempTree({
    'skills.mjs': "export default { listCommands: () => [{ name: 'stop', description: 'cancels' }], executeCommand: (payload, responder) => responder.cancel('stopped on purpose') };\n",
  });
});

/** Runs the built `lightsop chat --json` on one prompt against the scripted model. */
async function chatOnce(args: string[], prompt: string) {
  const res = await runBuilt(['chat', '--json', '--no-stdlib', '--approve-all', '--skills', 'skills.mjs', ...args], {
    cwd: dir,
    input: prompt + '\n',
    timeoutMs: KILL_AFTER,
    env: { LIGHTSOP_LLM_BASE_URL: server!.url, LIGHTSOP_LLM_MODEL: 'size-model' },
  });
  expect(res.signal).toBeNull();
  return { ...res, events: res.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('a 200k-declaration plan from the model', () => {
  it('is rejected (200k unknown commands), and the next plan answers', async () => {
    const huge = Array.from({ length: SIZE }, (_, i) => `@v${i} no_such_command ${i}`).join('\n') + '\n@lastAnswer final_answer $v0\n';
    server = await startLlmServer((_r, i) => (i === 0 ? huge : '@lastAnswer final_answer "small plan"'));
    const { code, events, stderr } = await chatOnce(['--max-plan-attempts', '2'], 'do it');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const rejected = events.filter((e) => e.type === 'plan_rejected');
    expect(rejected).toHaveLength(1);
    const failures = rejected[0]!.failures as { variable: string; reason: string }[];
    expect(failures).toHaveLength(SIZE);
    expect(failures[SIZE - 1]).toMatchObject({ variable: `v${SIZE - 1}`, reason: 'command-not-allowed:no_such_command' });
    expect(events.at(-1)).toEqual({ type: 'answer', status: 'answered', text: 'small plan' });
  }, TIMEOUT);

  it('is validated and run: the first command cancels and its 200k dependents are reported canceled', async () => {
    const lines = ['@v0 stop'];
    for (let i = 1; i < SIZE; i++) lines.push(`@v${i} assign $v${i - 1}`);
    lines.push(`@lastAnswer final_answer $v${SIZE - 1}`);
    server = await startLlmServer(() => lines.join('\n'));
    const { code, events, stderr } = await chatOnce(['--max-plan-attempts', '1'], 'do it');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(events.filter((e) => e.type === 'plan_rejected')).toEqual([]);
    expect(events).toContainEqual({ type: 'variable', variable: 'v0', command: 'stop', state: 'canceled', value: 'command stop canceled (stopped on purpose)' });
    // Each dependent's event names its command, which never started: looked up once, not per event.
    const dependents = events.filter((e) => e.type === 'variable' && e.state === 'canceled' && e.variable !== 'v0');
    expect(dependents).toHaveLength(SIZE);
    expect(dependents).toContainEqual({ type: 'variable', variable: `v${SIZE - 1}`, command: 'assign', state: 'canceled', value: `because command stop canceled (stopped on purpose) via v${SIZE - 2}` });
    expect(dependents.at(-1)).toMatchObject({ variable: 'lastAnswer', command: 'final_answer' });
    expect(events.at(-1)).toEqual({ type: 'answer', status: 'answered', text: `because command stop canceled (stopped on purpose) via v${SIZE - 1}` });
  }, TIMEOUT);
});
