/**
 * The extension host's MCP servers for Run Plan, the debugger and the chat (extension/src/run/plan-mcp.ts),
 * with server-everything: none started in an untrusted workspace; trusted, started once per
 * configuration and reused, their tools joined to the plan's registry; all stopped on deactivation.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRegistryCommands } from '@lightsop/core';
import { createResponder, type CommandRegistry } from '@lightsop/runtime';
import { joinMcpTools, stopAllMcpServers } from '../../extension/src/run/plan-mcp';
import { repoRoot, tempTree } from '../helpers/cli';
import { EVERYTHING_SERVER } from '../helpers/mcp';

/** Like Run Plan's registry without a skills file (plan-skills.ts imports vscode). */
const EMPTY_REGISTRY: CommandRegistry = {
  listCommands: () => [],
  executeCommand(payload) {
    throw new Error(`Unknown command ${payload.command}`);
  },
};

const MARKER_SERVER = path.join(repoRoot, 'test/mcp/fixtures/marker-server.mjs');

describe('MCP servers in the extension host', { timeout: 120_000 }, () => {
  afterAll(async () => {
    await stopAllMcpServers();
  });

  it('untrusted: not started; trusted: started once per configuration, tools joined and callable', async () => {
    const dir = tempTree({});
    const marker = path.join(dir, 'started');
    const configFile = path.join(dir, 'lightsop.config.json');
    writeFileSync(configFile, JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [MARKER_SERVER, marker, EVERYTHING_SERVER, 'stdio'] } } }));

    const untrusted = await joinMcpTools(EMPTY_REGISTRY, configFile, false);
    expect(untrusted).toMatchObject({ ok: true, registry: EMPTY_REGISTRY, note: expect.stringContaining('not trusted') });
    expect(existsSync(marker)).toBe(false);

    const first = await joinMcpTools(EMPTY_REGISTRY, configFile, true);
    if (!first.ok) throw new Error(first.message);
    const pid = readFileSync(marker, 'utf8');
    expect(readRegistryCommands(first.registry).map((c) => c.name)).toContain('everything.echo');
    const responder = createResponder('x', 'everything.echo', false, null);
    const value = await first.registry.executeCommand({ command: 'everything.echo', args: ['hi'], raw: 'everything.echo hi', variable: 'x', lineNumber: 1, comment: '', commentLines: [] }, responder.api);
    expect(value).toMatchObject({ status: 'success', data: 'Echo: hi' });

    // The same configuration again: the running server is reused, not started again.
    const second = await joinMcpTools(EMPTY_REGISTRY, configFile, true);
    expect(second.ok && second.stamp).toBe(first.stamp);
    expect(readFileSync(marker, 'utf8')).toBe(pid);
    await stopAllMcpServers();
  });
});
