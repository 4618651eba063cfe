/**
 * MCP progress notifications where people watch a run (docs/mcp.md): the CLI's run board and the
 * registry Run Plan gets in VS Code, both through `progressText` of `@lightsop/runtime/mcp`, with
 * server-everything's long-running tool (it notifies at each of its steps).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Interpreter, UnlimitedExecutionMonitor, type CommandRegistry } from '@lightsop/runtime';
import { progressText, type McpProgress } from '@lightsop/runtime/mcp';
import { joinMcpTools, stopAllMcpServers } from '../../extension/src/run/plan-mcp';
import { cli, tempTree } from '../helpers/cli';
import { EVERYTHING_SERVER, nodeServer } from '../helpers/mcp';

const EMPTY_REGISTRY: CommandRegistry = {
  listCommands: () => [],
  executeCommand(payload) {
    throw new Error(`Unknown command ${payload.command}`);
  },
};

describe('progressText', () => {
  it('shows steps of a total with a percentage, a bare count, and the message', () => {
    expect(progressText({ progress: 3, total: 5 })).toBe('3/5 (60%)');
    expect(progressText({ progress: 42 })).toBe('42');
    expect(progressText({ progress: 1, total: 4, message: '  reading\nfiles ' })).toBe('1/4 (25%) – reading files');
    expect(progressText({ progress: 7, total: 0 })).toBe('7');
    expect(progressText({ progress: 1, total: 2, message: 'x'.repeat(200) }).length).toBeLessThan(100);
  });
});

describe('MCP progress in a run', { timeout: 120_000 }, () => {
  afterAll(async () => {
    await stopAllMcpServers();
  });

  it('lightsop run on a terminal shows the long-running tool\'s progress on its board row', async () => {
    const dir = tempTree({
      'lightsop.config.json': JSON.stringify({ mcpServers: { everything: nodeServer(EVERYTHING_SERVER, ['stdio']) } }),
      'plan.sop': '@slow everything.trigger-long-running-operation 2 4\n@said everything.echo done\n',
    });
    const res = await cli(['run', 'plan.sop'], { cwd: dir, isTTY: true });
    expect(res.code).toBe(0);
    // Each step's notification redraws the running row with its progress before the tool's text.
    expect(res.stdout).toMatch(/@slow\s+running\s+\[\d\/4 \(\d+%\)\] everything\.trigger-long-running-operation 2 4/);
    expect(res.stdout).toContain('Long running operation completed');
  });

  it('the registry Run Plan joins reports each step with the command and the variable', async () => {
    const dir = tempTree({});
    const configFile = path.join(dir, 'lightsop.config.json');
    writeFileSync(configFile, JSON.stringify({ mcpServers: { everything: nodeServer(EVERYTHING_SERVER, ['stdio']) } }));
    const seen: McpProgress[] = [];
    const joined = await joinMcpTools(EMPTY_REGISTRY, configFile, true, (p) => seen.push(p));
    if (!joined.ok) throw new Error(joined.message);
    const interpreter = new Interpreter({ registry: joined.registry, executionMonitor: new UnlimitedExecutionMonitor() });
    await interpreter.updateCode('@slow everything.trigger-long-running-operation 1 3\n');
    expect(interpreter.getValue('slow')?.status).toBe('success');
    // In order, with the command and the variable. The last step's notification may be dropped by the
    // SDK's client when it arrives in the same read as the result, so only the first steps are sure.
    const shown = seen.map((p) => [p.variable, p.command, progressText(p)]);
    expect(shown.length).toBeGreaterThanOrEqual(2);
    expect(shown).toEqual([
      ['slow', 'everything.trigger-long-running-operation', '1/3 (33%)'],
      ['slow', 'everything.trigger-long-running-operation', '2/3 (67%)'],
      ['slow', 'everything.trigger-long-running-operation', '3/3 (100%)'],
    ].slice(0, shown.length));
  });
});
