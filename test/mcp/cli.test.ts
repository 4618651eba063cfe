/**
 * MCP tools as plan commands in the CLI, against real servers from npm started from
 * node_modules: server-filesystem over stdio on a temporary folder, server-everything over stdio
 * and in its Streamable HTTP mode.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, repoRoot, tempTree } from '../helpers/cli';
import { EVERYTHING_SERVER, FILESYSTEM_SERVER, nodeServer, startEverythingHttp } from '../helpers/mcp';
import { waitFor } from '../helpers/sync';

const TEE = path.join(repoRoot, 'test/mcp/fixtures/tee-server.mjs');

function variables(stdout: string): Record<string, { status: string; value: string }> {
  return (JSON.parse(stdout) as { variables: Record<string, { status: string; value: string }> }).variables;
}

describe('MCP tools in lightsop run and lint', { timeout: 120_000 }, () => {
  it('server-filesystem over stdio: a plan lists a temporary folder and reads a file', async () => {
    const dir = tempTree({
      'data/notes.txt': 'first line\nsecond line\n',
      'data/other.md': '# other\n',
      'lightsop.config.json': JSON.stringify({ mcpServers: { fs: nodeServer(FILESYSTEM_SERVER, ['${workspaceFolder}/data']) } }),
      'plan.sop': '@root assign ${DATA}\n@listing fs.list_directory $root\n@file assign ${DATA}/notes.txt\n@text fs.read_file $file\n@head fs.read_text_file \'{"path": "${DATA}/notes.txt", "head": 1}\'\n',
    });
    const plan = readFileSync(path.join(dir, 'plan.sop'), 'utf8').replaceAll('${DATA}', path.join(dir, 'data'));
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path.join(dir, 'plan.sop'), plan);
    const res = await cli(['run', 'plan.sop', '--json'], { cwd: dir });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const v = variables(res.stdout);
    expect(JSON.parse(v.listing!.value)).toEqual({ content: '[FILE] notes.txt\n[FILE] other.md' });
    expect(JSON.parse(v.text!.value)).toEqual({ content: 'first line\nsecond line\n' });
    expect(JSON.parse(v.head!.value)).toEqual({ content: 'first line' });

    // lint: the tools are known, did-you-mean names them, and a missing argument is argument-count.
    writeFileSync(path.join(dir, 'bad.sop'), '@a fs.red_file x\n@b fs.read_file\n@c fs.list_directory a b\n@lastAnswer final_answer $a $b $c\n');
    const lint = await cli(['lint', 'bad.sop', '--format', 'json'], { cwd: dir });
    expect(lint.code).toBe(1);
    const diagnostics = (JSON.parse(lint.stdout) as { diagnostics: { code: string; message: string; line: number; column: number }[] }[])[0]!.diagnostics;
    const errors = diagnostics.filter((d) => d.code !== 'unused-variable');
    expect(errors.map((d) => [d.code, d.line, d.column])).toEqual([['unknown-command', 1, 4], ['argument-count', 2, 4], ['argument-count', 3, 24]]);
    expect(errors[0]!.message).toContain("Did you mean 'fs.read_file'");
    expect(errors[1]!.message).toContain('missing path');
  });

  it('server-everything over stdio: echo and add, a failing call, a JSON-object argument, coercion errors', async () => {
    const dir = tempTree({
      'lightsop.config.json': JSON.stringify({ mcpServers: { everything: nodeServer(EVERYTHING_SERVER, ['stdio']) } }),
      'plan.sop': [
        '@said everything.echo "hello there"',
        '@sum everything.get-sum 2 40',
        '@sum2 everything.get-sum \'{"a": 1, "b": 2}\'',
        '@bad everything.get-sum \'{"a": "one", "b": 2}\'',
        '@nan everything.get-sum two 2',
        '@structured everything.get-structured-content "New York"',
        '',
      ].join('\n'),
    });
    const res = await cli(['run', 'plan.sop', '--json'], { cwd: dir });
    expect(res.code).toBe(1);
    const v = variables(res.stdout);
    expect(v.said).toEqual({ status: 'success', value: 'Echo: hello there' });
    expect(v.sum).toEqual({ status: 'success', value: 'The sum of 2 and 40 is 42.' });
    expect(v.sum2!.value).toBe('The sum of 1 and 2 is 3.');
    // The server rejected the arguments: isError becomes a failure with the tool's text.
    expect(v.bad!.status).toBe('fail');
    expect(v.bad!.value).toMatch(/Input validation error|expected number/i);
    expect(v.nan).toEqual({ status: 'fail', value: expect.stringContaining('argument 1 (a) must be a number; got "two"') });
    expect(v.structured!.status).toBe('success');
    expect(JSON.parse(v.structured!.value)).toMatchObject({ temperature: expect.any(Number) });
  });

  it('--timeout cancels a long-running tool on the server (notifications/cancelled reaches it)', async () => {
    const dir = tempTree({ 'plan.sop': '@slow everything.trigger-long-running-operation 600 600\n@quick everything.echo hi\n' });
    const log = path.join(dir, 'client-messages.jsonl');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path.join(dir, 'lightsop.config.json'), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [TEE, log, EVERYTHING_SERVER, 'stdio'] } } }));
    const res = await cli(['run', 'plan.sop', '--json', '--timeout', '3s'], { cwd: dir });
    expect(res.code).toBe(1);
    const v = variables(res.stdout);
    expect(v.quick!.status).toBe('success');
    expect(v.slow!.status).toBe('canceled');
    expect(res.stderr).toContain('timed out');
    await waitFor('notifications/cancelled in the server log', () => existsSync(log) && readFileSync(log, 'utf8').includes('notifications/cancelled'));
    const messages = readFileSync(log, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { id?: number; method?: string; params?: { requestId?: number; name?: string } });
    const call = messages.find((m) => m.method === 'tools/call' && m.params?.name === 'trigger-long-running-operation')!;
    const echo = messages.find((m) => m.method === 'tools/call' && m.params?.name === 'echo')!;
    const cancelled = messages.filter((m) => m.method === 'notifications/cancelled').map((m) => m.params!.requestId);
    // Only the call in flight is cancelled; the one that had finished is not.
    expect(cancelled).toEqual([call.id]);
    expect(cancelled).not.toContain(echo.id);
  });

  describe('server-everything over Streamable HTTP', () => {
    let server: Awaited<ReturnType<typeof startEverythingHttp>>;
    beforeAll(async () => {
      server = await startEverythingHttp();
    }, 90_000);
    afterAll(async () => {
      await server?.stop();
    });

    it('calls its tools at the configured url, headers from ${env:NAME}', async () => {
      process.env.LIGHTSOP_TEST_MCP_TOKEN = 'test-token-value';
      const dir = tempTree({
        'lightsop.config.json': JSON.stringify({ mcpServers: { web: { type: 'http', url: server.url, headers: { Authorization: 'Bearer ${env:LIGHTSOP_TEST_MCP_TOKEN}' } } } }),
        'plan.sop': '@said web.echo over-http\n@sum web.get-sum 1.5 2\n',
      });
      const res = await cli(['run', 'plan.sop', '--json'], { cwd: dir });
      expect(res.stderr).toBe('');
      const v = variables(res.stdout);
      expect(v.said).toEqual({ status: 'success', value: 'Echo: over-http' });
      expect(v.sum!.value).toBe('The sum of 1.5 and 2 is 3.5.');
      expect(res.code).toBe(0);
    });
  });

  it('a server that cannot start is an error naming the config field and the server', async () => {
    const dir = tempTree({
      'lightsop.config.json': JSON.stringify({ mcpServers: { broken: { command: process.execPath, args: ['-e', 'console.error("boom: no such database"); process.exit(4)'] } } }),
      'plan.sop': '@a broken.tool x\n',
    });
    const res = await cli(['run', 'plan.sop'], { cwd: dir });
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/lightsop\.config\.json: field "mcpServers\.broken": MCP server "broken": cannot start .*boom: no such database/);
    const lint = await cli(['lint', 'plan.sop'], { cwd: dir });
    expect(lint.code).toBe(2);
  });
});
