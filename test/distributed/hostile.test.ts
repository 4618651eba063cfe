/**
 * Redis is shared, so jobs and answers are data from anyone who can write to it. A worker fails
 * malformed jobs (and plans it must not run) without crashing and goes on with the next job; a
 * coordinator turns a worker's nonsense answer into a failed command; a Redis password never
 * reaches a log or an error message.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnCli, startWorkerProcess, tempDir, useRedisServer } from './procs';

const SKILLS = path.join(__dirname, 'fixtures/skills.mjs');
const PASSWORD = 'pw-7f3a9c1e';

describe('hostile jobs, hostile answers, secrets', () => {
  const redis = useRedisServer({ password: PASSWORD });
  const closers: (() => Promise<unknown>)[] = [];
  // Registered after useRedisServer's hooks, so it runs before they kill the processes.
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  const connection = () => ({ host: '127.0.0.1', port: redis.port, password: PASSWORD, maxRetriesPerRequest: null });

  it('a worker fails malformed jobs and plans it must not run, stays up, and runs the next good job', async () => {
    const dir = tempDir('lightsop-hostile-');
    const worker = await startWorkerProcess(redis.url, ['--skills', SKILLS, '--queue', 'hostile'], { cwd: dir, env: { LIGHTSOP_TEST_DIR: dir } });
    const queue = new Queue('hostile', { connection: connection(), prefix: 'bull' });
    const events = new QueueEvents('hostile', { connection: connection(), prefix: 'bull' });
    closers.push(() => queue.close(), () => events.close());
    await events.waitUntilReady();
    const bad = [
      { name: 'command', data: { command: 'tag' } },
      { name: 'command', data: null },
      { name: 'rm -rf', data: {} },
      { name: 'plan', data: { plan: '@a tag $missing\n', input: 'x', timeoutMs: 0 } },
      { name: 'plan', data: { plan: '#!english\nDelete everything', input: 'x', timeoutMs: 0 } },
      { name: 'plan', data: { plan: 42, input: 'x', timeoutMs: 0 } },
    ];
    for (const job of bad) {
      const added = await queue.add(job.name, job.data, { attempts: 3 });
      await expect(added.waitUntilFinished(events, 30_000)).rejects.toThrow();
      const failed = await queue.getJob(added.id!);
      // Failed for good at once: a malformed job would fail the same way again.
      expect(failed!.attemptsMade).toBe(1);
    }
    const reasons = (await queue.getFailed()).map((j) => j.failedReason).sort();
    expect(reasons).toEqual([
      'english scripts are not run by workers; generate the plan first',
      expect.stringMatching(/^invalid plan: line 1, column 8: .*missing.* \[undefined-variable\]$/),
      'malformed command job: the job carries no data',
      'malformed command job: the job has no argument list',
      'malformed plan job: the job carries no plan',
      'unknown job kind "rm -rf"',
    ]);
    const good = await queue.add('command', { command: 'tag', args: ['ok'], raw: 'tag ok', variable: 'v', lineNumber: 1, comment: '', commentLines: [] });
    const answer = await good.waitUntilFinished(events, 30_000) as { type: string; value: { status: string; data: string } };
    expect(answer.type).toBe('value');
    expect(JSON.parse(answer.value.data)).toMatchObject({ input: 'ok', pid: worker.pid, id: good.id, attempt: 1 });
    expect(worker.child.exitCode).toBeNull();
  }, 90_000);

  it("a coordinator fails a command whose worker answers nonsense, and no answer pollutes its objects", async () => {
    const dir = tempDir('lightsop-hostile-');
    writeFileSync(path.join(dir, 'plan.sop'), '@a tag x\n@b tag y\n');
    // A fake worker: announced like a real one, answering with garbage.
    const control = new Redis(connection());
    closers.push(async () => control.disconnect());
    await control.set('lightsop:liar:worker:fake', JSON.stringify({ id: 'fake', host: 'h', pid: 1, concurrency: 2, commands: [{ name: 'tag', description: '' }], started: 0, active: 0, completed: 0 }), 'PX', 60_000);
    await control.sadd('lightsop:liar:workers', 'fake');
    const liar = new Worker('liar', async (job) => job.data.args[0] === 'x'
      ? { type: 'nonsense' }
      : { type: 'value', value: JSON.parse('{"status":"success","data":"fine","raw":"r","__proto__":{"polluted":true}}') },
    { connection: connection(), prefix: 'bull', concurrency: 2 });
    closers.push(() => liar.close());
    const run = spawnCli(['run', 'plan.sop', '--redis', redis.url, '--queue', 'liar', '--json'], { cwd: dir });
    expect(await run.exited).toBe(1);
    const result = JSON.parse(run.stdout()) as { variables: Record<string, { status: string; value: string }> };
    expect(result.variables.a).toEqual({ status: 'fail', value: 'a worker sent an answer this coordinator does not understand' });
    expect(result.variables.b).toEqual({ status: 'success', value: 'fine' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  }, 60_000);

  it('the Redis password never appears in a worker log or an error', async () => {
    const dir = tempDir('lightsop-hostile-');
    const worker = await startWorkerProcess(redis.url, ['--skills', SKILLS, '--queue', 'secret', '--health-interval', '100ms'], { cwd: dir });
    await worker.waitFor(/health: /);
    worker.signal('SIGTERM');
    expect(await worker.exited).toBe(0);
    // Credentials are redacted by core's one redaction function (user and password: ***@).
    expect(worker.stderr()).toMatch(new RegExp(`redis=redis://\\*\\*\\*@127\\.0\\.0\\.1:${redis.port}`));
    expect(worker.stderr()).not.toContain(PASSWORD);
    writeFileSync(path.join(dir, 'plan.sop'), '@a tag x\n');
    const wrong = spawnCli(['run', 'plan.sop', '--redis', `redis://:wrong-${PASSWORD}@127.0.0.1:${redis.port}`, '--json'], { cwd: dir });
    expect(await wrong.exited).toBe(3);
    expect(wrong.stderr()).toMatch(/^lightsop: cannot reach Redis at redis:\/\/\*\*\*@127\.0\.0\.1:\d+: .*WRONGPASS/);
    expect(wrong.stderr()).not.toContain(PASSWORD);
  }, 60_000);
});
