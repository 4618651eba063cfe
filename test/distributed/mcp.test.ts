/**
 * Workers host MCP servers: `lightsop worker --config FILE` starts the config's servers (real
 * @modelcontextprotocol/server-everything from node_modules) and runs their tools as commands for
 * `run --redis` and `batch`; it publishes the tools' full descriptions (the coordinator checks a
 * batch's plan with them); a --timeout reaches the server as notifications/cancelled; SIGTERM
 * closes the servers. A real redis-server on a free port, worker processes of the built CLI.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli';
import { EVERYTHING_SERVER, nodeServer } from '../helpers/mcp';
import { jsonLines, spawnCli, startWorkerProcess, stopWorker as stopped, tempDir, useRedisServer, waitUntil } from './procs';

const TEE = path.join(repoRoot, 'test/mcp/fixtures/tee-server.mjs');

interface RunJson {
  variables: Record<string, { status: string; value: string }>;
  failures: { variable: string; reason: string }[];
  commands: string[];
}

/** A folder with a plan, and a config (elsewhere, so that only --config can find it) naming the server. */
function workspace(plan: string, server: { command: string; args: string[] }): { dir: string; config: string } {
  const dir = tempDir('lightsop-mcp-workers-');
  writeFileSync(path.join(dir, 'plan.sop'), plan);
  mkdirSync(path.join(dir, 'conf'));
  const config = path.join(dir, 'conf', 'lightsop.config.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { everything: server } }));
  return { dir, config };
}

describe('workers host MCP servers (lightsop worker --config)', () => {
  const redis = useRedisServer();

  const worker = (config: string, queue: string, cwd: string) => startWorkerProcess(redis.url, ['--config', config, '--queue', queue, '--concurrency', '1'], { cwd });

  it('a plan calling everything.echo through two workers equals the local run; full descriptions reach the coordinator', async () => {
    const plan = [
      '@a everything.echo alpha',
      '@b everything.echo "beta gamma"',
      '@c everything.echo $a',
      '@d everything.get-sum 2 40',
      '@e everything.get-sum two 2',
      '@f everything.echo $b',
      '@g assign $c $d $f',
      '',
    ].join('\n');
    const ws = workspace(plan, nodeServer(EVERYTHING_SERVER, ['stdio']));
    // The local run, with the config beside the plan as usual.
    writeFileSync(path.join(ws.dir, 'lightsop.config.json'), readFileSync(ws.config));
    const local = spawnCli(['run', 'plan.sop', '--json'], { cwd: ws.dir });
    expect(await local.exited).toBe(1);
    const localJson = JSON.parse(local.stdout()) as RunJson;
    expect(localJson.variables.a).toEqual({ status: 'success', value: 'Echo: alpha' });
    expect(localJson.variables.e!.status).toBe('fail');

    // Two workers started elsewhere, each with the config named by --config.
    const elsewhere = tempDir('lightsop-mcp-worker-cwd-');
    const queue = 'mcp-echo';
    const ws1 = await worker(ws.config, queue, elsewhere);
    const ws2 = await worker(ws.config, queue, elsewhere);
    expect(ws1.stderr()).toContain('MCP server(s) started: everything');

    // What the workers publish: the tools' full descriptions, as core's command surface reads them.
    const client = new Redis({ host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null });
    try {
      const ids = await client.smembers(`lightsop:${queue}:workers`);
      expect(ids.length).toBe(2);
      const info = JSON.parse((await client.get(`lightsop:${queue}:worker:${ids[0]}`))!) as { commands: { name: string; arguments?: unknown; parameters?: { name: string }[]; source?: unknown }[] };
      const echo = info.commands.find((c) => c.name === 'everything.echo')!;
      expect(echo.source).toEqual({ kind: 'mcp', name: 'everything' });
      expect(echo.arguments).toEqual({ minimum: 1, maximum: 1, object: true });
      expect(echo.parameters?.map((p) => p.name)).toEqual(['message']);
    } finally {
      client.disconnect();
    }

    const remote = spawnCli(['run', 'plan.sop', '--json', '--redis', redis.url, '--queue', queue], { cwd: ws.dir });
    expect(await remote.exited).toBe(1);
    const remoteJson = JSON.parse(remote.stdout()) as RunJson;
    expect(remoteJson.variables).toEqual(localJson.variables);
    expect(remoteJson.failures).toEqual(localJson.failures);
    expect([...remoteJson.commands].sort()).toEqual([...localJson.commands].sort());

    // A batch over the same tools; its plan is checked against the workers' tools first.
    writeFileSync(path.join(ws.dir, 'bad.sop'), '@r everything.echo $input extra\n');
    writeFileSync(path.join(ws.dir, 'inputs.jsonl'), Array.from({ length: 12 }, (_, i) => JSON.stringify(`input ${i}`)).join('\n') + '\n');
    const refused = spawnCli(['batch', 'bad.sop', '--inputs', 'inputs.jsonl', '--out', 'bad.jsonl', '--redis', redis.url, '--queue', queue], { cwd: ws.dir });
    expect(await refused.exited).toBe(2);
    expect(refused.stderr()).toMatch(/bad\.sop:1:\d+: error: .*\[argument-count\]/);
    expect(refused.stderr()).toContain('nothing was submitted');
    writeFileSync(path.join(ws.dir, 'echo.sop'), '@r everything.echo $input\n');
    const batch = spawnCli(['batch', 'echo.sop', '--inputs', 'inputs.jsonl', '--out', 'out.jsonl', '--redis', redis.url, '--queue', queue], { cwd: ws.dir });
    expect(await batch.exited).toBe(0);
    const lines = jsonLines(path.join(ws.dir, 'out.jsonl'));
    expect(lines.length).toBe(12);
    for (const l of lines) {
      expect(l.status).toBe('success');
      expect((l.variables as Record<string, { value: string }>).r!.value).toBe(`Echo: ${String(l.input)}`);
    }

    // Every command and every input ran on these two workers; SIGTERM closes their servers.
    const done = (await stopped(ws1)) + (await stopped(ws2));
    expect(done).toBe(6 + 12);
    for (const w of [ws1, ws2]) expect(w.stderr()).toContain('closed MCP server(s): everything');
  }, 180_000);

  it('--config is read like every command\'s config: a missing or invalid file is one line naming it (exit 3)', async () => {
    const dir = tempDir('lightsop-mcp-config-');
    const missing = spawnCli(['worker', '--redis', redis.url, '--config', 'nope.json'], { cwd: dir });
    expect(await missing.exited).toBe(3);
    expect(missing.stderr()).toMatch(/^lightsop: .*nope\.json: cannot read \(ENOENT\)\n$/);
    writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ mcpServers: { everything: { args: ['x'] } } }));
    const invalid = spawnCli(['worker', '--redis', redis.url, '--config', 'bad.json'], { cwd: dir });
    expect(await invalid.exited).toBe(3);
    expect(invalid.stderr()).toMatch(/bad\.json: .*mcpServers\.everything/);
    expect(invalid.stderr()).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('--timeout and Ctrl-C cancel a long-running tool on the worker\'s server (notifications/cancelled): run --redis and batch', async () => {
    const dir = tempDir('lightsop-mcp-cancel-');
    const log = path.join(dir, 'client-messages.jsonl');
    const ws = workspace('@slow everything.trigger-long-running-operation 600 600\n@quick everything.echo hi\n', { command: process.execPath, args: [TEE, log, EVERYTHING_SERVER, 'stdio'] });
    const queue = 'mcp-cancel';
    // Two slots: the quick command never waits behind the slow one.
    const w = await startWorkerProcess(redis.url, ['--config', ws.config, '--queue', queue, '--concurrency', '2'], { cwd: ws.dir });
    const messages = () => (existsSync(log) ? readFileSync(log, 'utf8') : '').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { id?: number; method?: string; params?: { requestId?: number; name?: string } });
    const longCalls = () => messages().filter((m) => m.method === 'tools/call' && m.params?.name === 'trigger-long-running-operation').map((m) => m.id);
    const cancelled = () => messages().filter((m) => m.method === 'notifications/cancelled').map((m) => m.params!.requestId);

    const run = spawnCli(['run', 'plan.sop', '--json', '--timeout', '5s', '--redis', redis.url, '--queue', queue], { cwd: ws.dir });
    expect(await run.exited).toBe(1);
    const json = JSON.parse(run.stdout()) as RunJson;
    expect(json.variables.quick).toEqual({ status: 'success', value: 'Echo: hi' });
    expect(['canceled', 'fail']).toContain(json.variables.slow!.status);
    expect(run.stderr()).toContain('timed out');
    await waitUntil('notifications/cancelled reached the server for the run\'s call', () => longCalls().length === 1 && cancelled().includes(longCalls()[0]));
    expect(cancelled()).toEqual(longCalls());

    // batch: the per-input --timeout stops the run on the worker, and the tool call with it.
    writeFileSync(path.join(ws.dir, 'inputs.jsonl'), '"one"\n');
    const batch = spawnCli(['batch', 'plan.sop', '--inputs', 'inputs.jsonl', '--out', 'out.jsonl', '--timeout', '5s', '--redis', redis.url, '--queue', queue], { cwd: ws.dir });
    expect(await batch.exited).toBe(1);
    const [line] = jsonLines(path.join(ws.dir, 'out.jsonl'));
    expect(line).toMatchObject({ status: 'fail', aborted: 'timed out after 5000 ms' });
    await waitUntil('notifications/cancelled reached the server for the batch\'s call', () => longCalls().length === 2 && cancelled().includes(longCalls()[1]));
    expect(cancelled()).toEqual(longCalls());

    // Ctrl-C of the coordinator, once the call has reached the server.
    const interrupted = spawnCli(['run', 'plan.sop', '--json', '--redis', redis.url, '--queue', queue], { cwd: ws.dir });
    await waitUntil('the third long-running call reached the server', () => longCalls().length === 3);
    interrupted.signal('SIGINT');
    expect(await interrupted.exited).toBe(1);
    expect(interrupted.stderr()).toContain('interrupted');
    await waitUntil('notifications/cancelled reached the server for the interrupted call', () => cancelled().includes(longCalls()[2]));
    expect(cancelled()).toEqual(longCalls());

    w.signal('SIGTERM');
    expect(await w.exited).toBe(0);
    expect(w.stderr()).toContain('closed MCP server(s): everything');
  }, 180_000);
});
