/**
 * `lightsop run --redis` against a local `lightsop run`: every valid run case of the shared
 * conformance set, run once locally and once through a real redis-server with two worker
 * processes hosting the case's skills, must give the same exit code, variables, failures and
 * commands (the commands' order may differ only where the plan leaves it free).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli';
import type { RedisServer } from '../helpers/redis';
import { startWorkerProcess, stopWorker, useRedisServer, type CliProcess } from './procs';

const CASES = path.resolve(__dirname, '../../../shared/conformance/cases');

interface Case {
  readonly name: string;
  readonly dir: string;
}

function runCases(): Case[] {
  if (!existsSync(CASES)) throw new Error(`the conformance cases are missing at ${CASES}`);
  return readdirSync(CASES)
    .filter((name) => existsSync(path.join(CASES, name, 'expected.json')))
    .filter((name) => (JSON.parse(readFileSync(path.join(CASES, name, 'expected.json'), 'utf8')) as { kind: string }).kind === 'run')
    .sort()
    .map((name) => ({ name, dir: path.join(CASES, name) }));
}

interface Outcome {
  code: number;
  json: { variables: unknown; failures: { variable: string; reason: string }[]; commands: string[] };
}

async function runCase(c: Case, redis: RedisServer | null): Promise<Outcome & { workerJobs?: number[] }> {
  // The local run and the coordinator run in this process (runCli); the workers are real
  // processes of the built CLI, two per case, each running one job at a time.
  const args = ['run', 'plan.sop', '--json'];
  if (existsSync(path.join(c.dir, 'input.txt'))) args.push('--input', readFileSync(path.join(c.dir, 'input.txt'), 'utf8'));
  const skills = existsSync(path.join(c.dir, 'skills.mjs')) ? ['--skills', 'skills.mjs'] : [];
  if (!redis) {
    const local = await cli([...args, ...skills], { cwd: c.dir });
    return { code: local.code, json: JSON.parse(local.stdout) as Outcome['json'] };
  }
  const queue = `conf-${c.name}`;
  const workers = await Promise.all([0, 1].map(() => startWorkerProcess(redis.url, [...skills, '--queue', queue, '--concurrency', '1'], { cwd: c.dir })));
  try {
    const remote = await cli([...args, '--redis', redis.url, '--queue', queue], { cwd: c.dir });
    let json: Outcome['json'];
    try {
      json = JSON.parse(remote.stdout) as Outcome['json'];
    } catch {
      throw new Error(`${c.name}: run --redis printed no JSON (exit ${remote.code}): ${remote.stderr}`);
    }
    return { code: remote.code, json, workerJobs: await stopWorkers(workers) };
  } finally {
    for (const w of workers) w.signal('SIGKILL');
  }
}

/** Stops the workers gracefully (together) and returns how many jobs each completed. */
function stopWorkers(workers: CliProcess[]): Promise<number[]> {
  return Promise.all(workers.map(stopWorker));
}

describe('lightsop run --redis gives the results of a local run (conformance cases, two workers)', () => {
  const redis = useRedisServer();

  it('every valid run case', async () => {
    const cases = runCases();
    expect(cases.length).toBeGreaterThan(40);
    const mismatches: string[] = [];
    let sharedWork = 0;
    const PARALLEL = 4;
    let next = 0;
    const lane = async () => {
      while (next < cases.length) {
        const c = cases[next++]!;
        const local = await runCase(c, null);
        const remote = await runCase(c, redis);
        if (remote.workerJobs && remote.workerJobs.every((n) => n > 0)) sharedWork++;
        const sameCommands = JSON.stringify([...local.json.commands].sort()) === JSON.stringify([...remote.json.commands].sort());
        const same = local.code === remote.code
          && JSON.stringify(local.json.variables) === JSON.stringify(remote.json.variables)
          && JSON.stringify(local.json.failures) === JSON.stringify(remote.json.failures)
          && sameCommands;
        if (!same) mismatches.push(`${c.name}:\n  local  ${local.code} ${JSON.stringify(local.json)}\n  remote ${remote.code} ${JSON.stringify(remote.json)}`);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, lane));
    expect(mismatches).toEqual([]);
    // The plans with independent commands kept both workers busy: the work was really shared.
    expect(sharedWork).toBeGreaterThan(0);
  }, 300_000);
});
