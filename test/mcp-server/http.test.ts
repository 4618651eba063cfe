/**
 * `lightsop mcp --http`: loopback only. It listens on 127.0.0.1, and answers only requests whose
 * Host is a loopback name and whose Origin (when a browser sends one) is a loopback origin, so a
 * web page cannot reach it through DNS rebinding. `--no-run` leaves run_plan out; SIGTERM ends it.
 */
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/cli';
import { BIN, makeWorkspace, startHttp } from './fixture';

const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } });

/** A raw POST with chosen headers; resolves with the status, or the connection error's code. */
function post(url: string, headers: Record<string, string>, host = '127.0.0.1'): Promise<{ status: number | string; body: string }> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const req = request({ host, port: target.port, path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ status: error.code ?? 'error', body: '' }));
    req.end(INITIALIZE);
  });
}

describe('lightsop mcp --http', () => {
  let ws: ReturnType<typeof makeWorkspace>;
  let server: Awaited<ReturnType<typeof startHttp>>;
  beforeAll(async () => {
    ensureBuilt();
    ws = makeWorkspace();
    server = await startHttp(ws.root, ['--no-run']);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    ws?.cleanup();
  });

  it('refuses a foreign Host or Origin (DNS rebinding) and accepts loopback ones', async () => {
    const port = new URL(server.url).port;
    expect((await post(server.url, { host: `evil.example:${port}` })).status).toBe(403);
    expect((await post(server.url, { host: `127.0.0.1:${port}`, origin: 'http://evil.example' })).status).toBe(403);
    expect((await post(server.url, { host: `127.0.0.1:${port}`, origin: 'null' })).status).toBe(403);
    const local = await post(server.url, { host: `localhost:${port}`, origin: `http://localhost:${port}` });
    expect(local.status, local.body).toBe(200);
    expect(local.body).toMatch(/"name":"lightsop"/);
    expect((await post(server.url.replace('/mcp', '/other'), { host: `127.0.0.1:${port}` })).status).toBe(404);
  });

  it('listens on the loopback address only', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const external = Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal);
    if (!external) return;
    const res = await post(server.url, {}, external.address);
    expect(res.status).toBe('ECONNREFUSED');
  });

  it('--no-run offers only the read-only tools', async () => {
    const client = new Client({ name: 'probe', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['format_plan', 'lint_plan', 'list_commands', 'plan_graph']);
    const refused = await client.callTool({ name: 'run_plan', arguments: { text: '@a assign x\n' } });
    expect(refused.isError).toBe(true);
    await client.close();
  });

  it('a port already in use is a one-line error, exit 3', () => {
    const res = spawnSync(process.execPath, [BIN, 'mcp', '--http', new URL(server.url).port], { cwd: ws.root, encoding: 'utf8', timeout: 60_000 });
    expect(res.status).toBe(3);
    expect(res.stderr).toMatch(/^lightsop: cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\)\n$/);
  });

  it('ends on SIGTERM with exit 0', async () => {
    expect(await server.stop()).toBe(0);
  });
});
