/**
 * One MCP connection's tool calls against server-everything (stdio, from node_modules): a run's
 * signal gets one `abort` listener per connection however many calls use it, aborting cancels
 * every call in flight on the server (notifications/cancelled for each, seen by a pass-through
 * that logs what reaches the server) and none that had finished; and a plan's arguments become a
 * tool's arguments object by the tool's listed input schema.
 */
import { existsSync, readFileSync } from 'node:fs';
import { getEventListeners } from 'node:events';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpConnection, toolArguments, type McpToolInfo } from '@lightsop/runtime/mcp';
import { repoRoot, tempTree } from '../helpers/cli';
import { EVERYTHING_SERVER } from '../helpers/mcp';

const TEE = path.join(repoRoot, 'test/mcp/fixtures/tee-server.mjs');

/** Polls until `check` holds (a state, never a fixed sleep). */
async function waitFor(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Logged {
  id?: number;
  method?: string;
  params?: { requestId?: number; name?: string; arguments?: Record<string, unknown>; _meta?: { progressToken?: unknown } };
}

describe('McpConnection against server-everything', { timeout: 120_000 }, () => {
  let connection: McpConnection;
  let log: string;
  const logged = (): Logged[] => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Logged) : []);

  beforeAll(async () => {
    const dir = tempTree({});
    log = path.join(dir, 'client-messages.jsonl');
    connection = await McpConnection.connect({ name: 'everything', transport: 'stdio', command: process.execPath, args: [TEE, log, EVERYTHING_SERVER, 'stdio'], bareNames: false });
  });
  afterAll(async () => {
    await connection?.close();
  });

  it('one abort listener per run signal; aborting cancels every call in flight on the server, none that finished', async () => {
    const run = new AbortController();
    for (let i = 0; i < 30; i++) {
      const result = await connection.callTool('echo', { message: `m${i}` }, { signal: run.signal });
      expect(result.content).toEqual([{ type: 'text', text: `Echo: m${i}` }]);
    }
    // 30 finished calls: the signal holds the connection's one listener, not one per call.
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);

    const slow1 = connection.callTool('trigger-long-running-operation', { duration: 600, steps: 600 }, { signal: run.signal });
    const slow2 = connection.callTool('trigger-long-running-operation', { duration: 600, steps: 600 }, { signal: run.signal });
    const settled = Promise.allSettled([slow1, slow2]);
    await waitFor(() => logged().filter((m) => m.params?.name === 'trigger-long-running-operation').length === 2, 'both long calls at the server');
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
    const reason = new Error('stopped by the test');
    run.abort(reason);
    const outcomes = await settled;
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);

    await waitFor(() => logged().filter((m) => m.method === 'notifications/cancelled').length >= 2, 'notifications/cancelled for both calls');
    const messages = logged();
    const slowIds = messages.filter((m) => m.params?.name === 'trigger-long-running-operation').map((m) => m.id);
    const echoIds = messages.filter((m) => m.params?.name === 'echo').map((m) => m.id);
    const cancelled = messages.filter((m) => m.method === 'notifications/cancelled').map((m) => m.params!.requestId);
    expect(cancelled.sort()).toEqual([...slowIds].sort());
    for (const id of echoIds) expect(cancelled).not.toContain(id);

    // The connection still serves, and a call on an aborted signal is refused before it is sent.
    expect((await connection.callTool('echo', { message: 'after' })).content).toEqual([{ type: 'text', text: 'Echo: after' }]);
    await expect(connection.callTool('echo', { message: 'never' }, { signal: run.signal })).rejects.toBe(reason);
    expect(logged().some((m) => m.params?.arguments?.message === 'never')).toBe(false);
  });

  it('progress notifications of a call reach its onProgress', async () => {
    const seen: { progress: number; total?: number }[] = [];
    const result = await connection.callTool('trigger-long-running-operation', { duration: 0.3, steps: 3 }, { signal: new AbortController().signal, onProgress: (p) => seen.push(p) });
    expect(result.content).toEqual([{ type: 'text', text: expect.stringContaining('Long running operation completed') }]);
    // The last step's notification may arrive after the result (the SDK then drops it).
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.slice(0, 2)).toEqual([expect.objectContaining({ progress: 1, total: 3 }), expect.objectContaining({ progress: 2, total: 3 })]);
  });

  it("a plan's arguments become the tool's arguments object by its listed input schema", () => {
    const tool = (name: string): McpToolInfo => connection.tools.find((t) => t.name === name)!;
    const sum = tool('get-sum');
    expect(toolArguments(sum, ['2', 40])).toEqual({ a: 2, b: 40 });
    expect(toolArguments(sum, ['{"a": 1, "b": 2}'])).toEqual({ a: 1, b: 2 });
    expect(toolArguments(sum, [{ b: 5, a: 4 }])).toEqual({ a: 4, b: 5 });
    // A JSON object with a key the schema does not have is a positional argument like any other.
    expect(() => toolArguments(sum, ['{"a": 1, "c": 2}'])).toThrow(/argument 1 \(a\) must be a number/);
    expect(() => toolArguments(sum, ['1'])).toThrow('missing required argument b (arguments in order: a, b)');
    expect(() => toolArguments(sum, [])).toThrow('missing required arguments a, b');
    expect(() => toolArguments(sum, [1, 2, 3])).toThrow('takes at most 2 arguments (a, b); got 3');
    expect(() => toolArguments(sum, ['one', 2])).toThrow('argument 1 (a) must be a number; got "one"');
    // Optional parameters (defaults in the schema) may be left out.
    expect(toolArguments(tool('trigger-long-running-operation'), ['5'])).toEqual({ duration: 5 });
    expect(toolArguments(tool('echo'), ['hello'])).toEqual({ message: 'hello' });
  });
});
