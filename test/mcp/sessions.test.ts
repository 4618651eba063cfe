/**
 * Tool annotations drive approvals (docs/mcp.md): a loop session over server-filesystem's real
 * tools. readOnlyHint -> no side effects; destructiveHint -> asked every time, even after
 * "always approve"; the session sees the tools through the one command surface.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoopSession, sessionCommands, toolsFromRegistry } from '@lightsop/sessions';
import { McpToolSet, withMcpTools } from '@lightsop/runtime/mcp';
import { tempTree } from '../helpers/cli';
import { FILESYSTEM_SERVER } from '../helpers/mcp';
import { decision, recordingSupervisor, stubAgent } from '../sessions/helpers';

describe('MCP tools in sessions', { timeout: 120_000 }, () => {
  let dir: string;
  let tools: McpToolSet;
  beforeAll(async () => {
    dir = tempTree({ 'data/a.txt': 'alpha\n' });
    tools = await McpToolSet.open([{ name: 'fs', transport: 'stdio', command: process.execPath, args: [FILESYSTEM_SERVER, path.join(dir, 'data')], bareNames: false }]);
    expect(tools.problems).toEqual([]);
  }, 90_000);
  afterAll(async () => {
    await tools?.close();
  });

  it('the session surface lists the tools with side effects from their annotations', () => {
    const surface = sessionCommands(withMcpTools(null, tools));
    expect(surface.get('fs.read_text_file')).toMatchObject({ sideEffects: false, source: { kind: 'mcp', name: 'fs' } });
    expect(surface.get('fs.create_directory')).toMatchObject({ sideEffects: true });
    expect(surface.get('fs.create_directory')!.destructive).toBeUndefined();
    expect(surface.get('fs.write_file')).toMatchObject({ sideEffects: true, destructive: true });
  });

  it('"always approve" is remembered for a tool with side effects but never for a destructive one', async () => {
    const file = path.join(dir, 'data', 'out.txt');
    const write = JSON.stringify({ path: file, content: 'written by the session' });
    const mkdir = JSON.stringify({ path: path.join(dir, 'data', 'sub') });
    const read = JSON.stringify({ path: path.join(dir, 'data', 'a.txt') });
    const supervisor = recordingSupervisor(() => 'alwaysApprove');
    const agent = stubAgent({
      decide: [
        decision('fs.read_text_file', read), decision('fs.create_directory', mkdir), decision('fs.create_directory', mkdir),
        decision('fs.write_file', write), decision('fs.write_file', write), decision('final_answer', 'done'),
      ],
    });
    const session = new LoopSession({ agent, tools: toolsFromRegistry(withMcpTools(null, tools)), options: { supervisor, historyCompressionEnabled: false, maxStepsPerTurn: 10 } });
    const result = await session.newPrompt('write the file');
    expect(result).toMatchObject({ kind: 'answer', answer: 'done' });
    expect(supervisor.choices.map((c) => [c.toolName, c.sideEffects, c.destructive ?? false])).toEqual([
      ['fs.read_text_file', false, false],
      ['fs.create_directory', true, false],
      ['fs.write_file', true, true],
      ['fs.write_file', true, true],
    ]);
    expect(existsSync(path.join(dir, 'data', 'sub'))).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('written by the session');
  });
});
