/**
 * `lightsop batch` under faults, with a real redis-server and real worker processes: a worker
 * killed with SIGKILL half way, Redis restarted without persistence half way, and Redis gone for
 * good (a clear error, no hang) followed by a rerun that resumes. Each ends with exactly one
 * result line per input.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { jsonLines, lineCount, spawnCli, startWorkerProcess, tempDir, useRedisServer, waitUntil } from './procs';
import { existsSync, readdirSync } from 'node:fs';

const SKILLS = path.join(__dirname, 'fixtures/skills.mjs');

interface Workspace {
  readonly dir: string;
  readonly plan: string;
  readonly inputs: string;
  readonly out: string;
}

function workspace(count: number): Workspace {
  const dir = tempDir('lightsop-batch-');
  const plan = path.join(dir, 'plan.sop');
  writeFileSync(plan, '@r tag $input\n');
  const inputs = path.join(dir, 'inputs.jsonl');
  let text = '';
  for (let i = 0; i < count; i++) text += JSON.stringify(`input ${i}`) + '\n';
  writeFileSync(inputs, text);
  return { dir, plan, inputs, out: path.join(dir, 'results.jsonl') };
}

/** Checks the results file: one line per input, no id twice, every run a success. */
function checkResults(ws: Workspace, count: number): { id: string; value: { input: string; pid: number; id: string; attempt: number } }[] {
  const records = jsonLines(ws.out) as { line: number; id: string; input: string; status: string; variables: { r: { value: string } } }[];
  expect(records.length).toBe(count);
  expect(new Set(records.map((r) => r.id)).size).toBe(count);
  expect(new Set(records.map((r) => r.line)).size).toBe(count);
  const lines = records.map((r) => r.line).sort((a, b) => a - b);
  expect(lines[0]).toBe(1);
  expect(lines[count - 1]).toBe(count);
  const values = records.map((r) => {
    expect(r.status).toBe('success');
    const value = JSON.parse(r.variables.r.value) as { input: string; pid: number; id: string; attempt: number };
    expect(value.input).toBe(r.input);
    expect(r.input).toBe(`input ${r.line - 1}`);
    // The idempotency key the skill saw is the input's job id and the variable.
    expect(value.id).toBe(`${r.id}/r`);
    return { id: r.id, value };
  });
  return values;
}

describe('lightsop batch: faults', () => {
  const redis = useRedisServer();

  const worker = (ws: Workspace, queue: string, extra: string[] = [], env: Record<string, string> = {}) =>
    startWorkerProcess(redis.url, ['--skills', SKILLS, '--queue', queue, '--concurrency', '4', '--stall-timeout', '2s', ...extra], {
      cwd: ws.dir,
      env: { LIGHTSOP_TEST_DIR: ws.dir, LIGHTSOP_TEST_DELAY_MS: '2', ...env },
    });
  const batch = (ws: Workspace, queue: string, extra: string[] = []) =>
    spawnCli(['batch', ws.plan, '--inputs', ws.inputs, '--redis', redis.url, '--out', ws.out, '--queue', queue, '--progress-interval', '1s', ...extra], { cwd: ws.dir });

  it('a worker killed with SIGKILL half way: its jobs go to the other worker; 1,000 results, no duplicates', async () => {
    const ws = workspace(1000);
    // Worker A gets stuck in all its jobs after 150 of them; B does the rest and takes over A's.
    const a = await worker(ws, 'kill', [], { LIGHTSOP_TEST_HANG_AFTER: '150' });
    const b = await worker(ws, 'kill');
    const run = batch(ws, 'kill');
    await waitUntil('worker A is stuck and half of the results are written', () => existsSync(path.join(ws.dir, `hanging-${a.pid}`)) && lineCount(ws.out) >= 500, 120_000);
    a.signal('SIGKILL');
    expect(await run.exited).toBe(0);
    const values = checkResults(ws, 1000);
    // The jobs A held when it died were run again by B, as their second delivery.
    const again = values.filter((v) => v.value.attempt >= 2);
    expect(again.length).toBeGreaterThan(0);
    for (const v of again) expect(v.value.pid).toBe(b.pid);
    expect(values.some((v) => v.value.pid === a.pid)).toBe(true);
    expect(b.stderr()).toMatch(/stalled/);
    expect(run.stderr()).toMatch(/1000 of 1000 inputs have a result/);
    // Without a terminal, progress comes as plain lines with throughput and ETA.
    expect(run.stderr()).toMatch(/lightsop batch: \d+\/1000 +\d+% [\d.]+\/s ETA /);
  }, 180_000);

  it('Redis restarted (without persistence) half way: the coordinator resubmits what Redis lost; every input once', async () => {
    const ws = workspace(600);
    // Each worker pauses after 150 inputs, so Redis restarts with at least 300 inputs left.
    await worker(ws, 'restart', [], { LIGHTSOP_TEST_PAUSE_AFTER: '150' });
    await worker(ws, 'restart', [], { LIGHTSOP_TEST_PAUSE_AFTER: '150' });
    const run = batch(ws, 'restart');
    await waitUntil('a third of the results are written', () => lineCount(ws.out) >= 200, 120_000);
    await redis.restart();
    writeFileSync(path.join(ws.dir, 'release'), '');
    expect(await run.exited).toBe(0);
    checkResults(ws, 600);
    expect(run.stderr()).toMatch(/reconnected to Redis/);
  }, 180_000);

  it('Redis gone for good: a clear error within the reconnect timeout, then a rerun resumes where it stopped', async () => {
    const ws = workspace(300);
    // The worker pauses after 60 inputs, so Redis goes away with at least 240 inputs left.
    await worker(ws, 'gone', [], { LIGHTSOP_TEST_PAUSE_AFTER: '60' });
    const first = batch(ws, 'gone', ['--reconnect-timeout', '2s']);
    await waitUntil('some results are written', () => lineCount(ws.out) >= 50, 120_000);
    await redis.stop();
    const code = await first.exited;
    expect(code).toBe(3);
    expect(first.stderr()).toMatch(/lost the connection to Redis at redis:\/\/127\.0\.0\.1:\d+ and could not reconnect within 2 s/);
    expect(first.stderr()).toMatch(/rerun the same command to go on/);
    const partial = jsonLines(ws.out);
    expect(partial.length).toBeGreaterThanOrEqual(50);
    expect(partial.length).toBeLessThanOrEqual(60);
    expect(new Set(partial.map((r) => r.id)).size).toBe(partial.length);

    await redis.restart();
    writeFileSync(path.join(ws.dir, 'release'), '');
    // The worker reconnects by itself and announces itself again; the rerun, started once it
    // has (a rerun before that finds no worker), writes only what is missing.
    const control = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      await waitUntil('the worker to announce itself to the restarted Redis', async () => (await control.smembers('lightsop:gone:workers')).length > 0, 60_000);
    } finally {
      control.disconnect();
    }
    const second = batch(ws, 'gone');
    expect(await second.exited).toBe(0);
    expect(second.stderr()).toContain(`${partial.length} of 300 inputs already have a result`);
    checkResults(ws, 300);
    expect(readdirSync(ws.dir).filter((f) => f.endsWith('.lock'))).toEqual([]);
  }, 180_000);
});
