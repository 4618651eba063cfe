/**
 * `lightsop run --redis` and `lightsop worker` under control: Ctrl-C and --timeout cancel the
 * dispatched jobs (the running one sees its signal abort, the waiting one is removed), SIGTERM
 * lets a worker finish its job and take no other, a worker that cannot finish in time returns
 * its job to the queue, and a Redis that goes away for good ends the run with a clear error.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnCli, startWorkerProcess, tempDir, useRedisServer, waitUntil } from './procs';

const SKILLS = path.join(__dirname, 'fixtures/skills.mjs');

function workspace(plan: string): { dir: string; plan: string } {
  const dir = tempDir('lightsop-run-redis-');
  writeFileSync(path.join(dir, 'plan.sop'), plan);
  return { dir, plan: path.join(dir, 'plan.sop') };
}

const marker = (dir: string, name: string) => path.join(dir, name);
const started = (dir: string, names: string[]) => names.filter((n) => existsSync(marker(dir, `started-${n}`)));

describe('lightsop run --redis: cancellation, graceful shutdown, lost Redis', () => {
  const redis = useRedisServer();
  const queues: Queue[] = [];
  // Registered after useRedisServer's hooks, so it runs before Redis stops.
  afterAll(async () => {
    for (const q of queues) await q.close();
  });

  const queueOf = (name: string) => {
    const q = new Queue(name, { connection: { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null }, prefix: 'bull' });
    queues.push(q);
    return q;
  };
  const worker = (dir: string, queue: string, extra: string[] = []) =>
    startWorkerProcess(redis.url, ['--skills', SKILLS, '--queue', queue, '--concurrency', '1', ...extra], { cwd: dir, env: { LIGHTSOP_TEST_DIR: dir } });

  for (const how of ['Ctrl-C', '--timeout'] as const) {
    it(`${how} aborts the running job on its worker and removes the waiting one`, async () => {
      const queue = how === 'Ctrl-C' ? 'cancel-int' : 'cancel-timeout';
      const ws = workspace('@a hold a\n@b hold b\n');
      await worker(ws.dir, queue);
      const run = spawnCli(['run', ws.plan, '--redis', redis.url, '--queue', queue, '--json', ...(how === '--timeout' ? ['--timeout', '1s'] : [])], { cwd: ws.dir });
      // One worker with one slot: one command runs, the other waits in the queue.
      await waitUntil('a command started on the worker', () => started(ws.dir, ['a', 'b']).length === 1);
      if (how === 'Ctrl-C') run.signal('SIGINT');
      expect(await run.exited).toBe(1);
      const [running] = started(ws.dir, ['a', 'b']);
      const waiting = running === 'a' ? 'b' : 'a';
      // The running command's skill saw its signal abort; the waiting one never started.
      expect(existsSync(marker(ws.dir, `aborted-${running}`))).toBe(true);
      expect(existsSync(marker(ws.dir, `started-${waiting}`))).toBe(false);
      const result = JSON.parse(run.stdout()) as { variables: Record<string, { status: string; value: string }> };
      expect(result.variables[running!]).toEqual({ status: 'fail', value: `aborted ${running}` });
      expect(result.variables[waiting]!.status).toBe('fail');
      expect(result.variables[waiting]!.value).toMatch(/interrupted before a worker started the command/);
      expect(run.stderr()).toMatch(how === 'Ctrl-C' ? /interrupted/ : /timed out after 1000 ms/);
      const counts = await queueOf(queue).getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      expect(counts).toMatchObject({ waiting: 0, active: 0, delayed: 0, prioritized: 0 });
    }, 60_000);
  }

  it('SIGTERM: the worker finishes its job, takes no new one and exits 0; the next worker runs the rest', async () => {
    const queue = 'sigterm';
    const ws = workspace('@a gate a\n@b gate b\n');
    const w1 = await worker(ws.dir, queue);
    const run = spawnCli(['run', ws.plan, '--redis', redis.url, '--queue', queue, '--json'], { cwd: ws.dir });
    await waitUntil('a command started on worker 1', () => started(ws.dir, ['a', 'b']).length === 1);
    const [first] = started(ws.dir, ['a', 'b']);
    const second = first === 'a' ? 'b' : 'a';
    w1.signal('SIGTERM');
    await w1.waitFor(/shutting down \(SIGTERM\): finishing 1 running job/);
    writeFileSync(marker(ws.dir, `release-${first}`), '');
    expect(await w1.exited).toBe(0);
    expect(w1.stderr()).toMatch(/stopped: completed=1 failed=0 returned=0/);
    expect(started(ws.dir, ['a', 'b'])).toEqual([first]);
    const w2 = await worker(ws.dir, queue);
    await waitUntil('worker 2 started the other command', () => started(ws.dir, ['a', 'b']).length === 2);
    writeFileSync(marker(ws.dir, `release-${second}`), '');
    expect(await run.exited).toBe(0);
    const result = JSON.parse(run.stdout()) as { variables: Record<string, { status: string; value: string }> };
    expect(JSON.parse(result.variables[first!]!.value)).toMatchObject({ gate: first, pid: w1.pid, attempt: 1 });
    expect(JSON.parse(result.variables[second]!.value)).toMatchObject({ gate: second, pid: w2.pid, attempt: 1 });
  }, 60_000);

  it('SIGTERM with a job that does not finish in time: the job goes back to the queue and another worker runs it', async () => {
    const queue = 'sigterm-return';
    const ws = workspace('@a gate a\n');
    const w1 = await worker(ws.dir, queue, ['--shutdown-timeout', '500ms']);
    const run = spawnCli(['run', ws.plan, '--redis', redis.url, '--queue', queue, '--json'], { cwd: ws.dir });
    await waitUntil('the command started on worker 1', () => started(ws.dir, ['a']).length === 1);
    w1.signal('SIGTERM');
    expect(await w1.exited).toBe(0);
    expect(w1.stderr()).toMatch(/returning 1 unfinished job\(s\) to the queue/);
    expect(w1.stderr()).toMatch(/returned=1/);
    writeFileSync(marker(ws.dir, 'release-a'), '');
    const w2 = await worker(ws.dir, queue);
    expect(await run.exited).toBe(0);
    const result = JSON.parse(run.stdout()) as { variables: Record<string, { status: string; value: string }> };
    // The same job, delivered a second time, with the same idempotency key.
    const value = JSON.parse(result.variables.a!.value) as { pid: number; attempt: number; id: string };
    expect(value.pid).toBe(w2.pid);
    expect(value.attempt).toBe(2);
    expect(JSON.parse(readFileSync(marker(ws.dir, 'started-a'), 'utf8')).id).toBe(value.id);
  }, 60_000);

  it('Redis gone for good during a run: the run ends with a clear error (exit 3), the command is not a success', async () => {
    const queue = 'lost';
    const ws = workspace('@a gate a\n');
    await worker(ws.dir, queue);
    const run = spawnCli(['run', ws.plan, '--redis', redis.url, '--queue', queue, '--json', '--reconnect-timeout', '1s'], { cwd: ws.dir });
    await waitUntil('the command started', () => started(ws.dir, ['a']).length === 1);
    await redis.stop();
    try {
      expect(await run.exited).toBe(3);
      expect(run.stderr()).toMatch(/lightsop: lost the connection to Redis at redis:\/\/127\.0\.0\.1:\d+ and could not reconnect within 1 s/);
      const result = JSON.parse(run.stdout()) as { variables: Record<string, { status: string; value: string }> };
      expect(result.variables.a!.status).toBe('fail');
      expect(result.variables.a!.value).toMatch(/lost the connection to Redis/);
    } finally {
      await redis.restart();
    }
  }, 60_000);

  it('a clear error when no worker listens, or Redis is not there (exit 3, no stack)', async () => {
    const ws = workspace('@a tag x\n');
    const none = spawnCli(['run', ws.plan, '--redis', redis.url, '--queue', 'nobody', '--json'], { cwd: ws.dir });
    expect(await none.exited).toBe(3);
    expect(none.stderr()).toMatch(/^lightsop: no worker is listening on queue "nobody" at redis:\/\/127\.0\.0\.1:\d+; start one with: lightsop worker/);
    const closed = spawnCli(['run', ws.plan, '--redis', 'redis://127.0.0.1:1', '--json'], { cwd: ws.dir });
    expect(await closed.exited).toBe(3);
    expect(closed.stderr()).toMatch(/^lightsop: cannot reach Redis at redis:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/);
    expect(closed.stderr()).not.toMatch(/\n\s+at /);
    const bad = spawnCli(['run', ws.plan, '--redis', 'http://x', '--json'], { cwd: ws.dir });
    expect(await bad.exited).toBe(3);
    expect(bad.stderr()).toMatch(/--redis: expected a redis:\/\/ or rediss:\/\/ URL/);
  }, 60_000);
});
