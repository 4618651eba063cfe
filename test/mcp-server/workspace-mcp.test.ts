/**
 * `lightsop mcp` knows the tools of the workspace's own MCP servers (docs/mcp-server.md): with
 * server-everything and a server that cannot start configured in lightsop.config.json, the SDK's
 * Client sees their tools in list_commands, lint_plan and the plan_for_task prompt, runs one with
 * run_plan, and reads why the broken one is missing (`mcpProblems`), never a crash.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CallToolResult, GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli';
import { EVERYTHING_SERVER } from '../helpers/mcp';
import { connectStdio, json, text, useLightsopMcp, waitFor } from './fixture';

interface Listed {
  skills: string | null;
  mcpServers: string[];
  commands: { name: string; description: string; parameters?: { name: string; required?: boolean }[]; sideEffects?: boolean; source?: { kind: string; name?: string } }[];
  mcpProblems?: { server: string; message: string }[];
}

const MARKER_SERVER = path.join(repoRoot, 'test/mcp/fixtures/marker-server.mjs');

describe('lightsop mcp with the workspace\'s MCP servers', { timeout: 120_000 }, () => {
  let marker = '';
  const mcp = useLightsopMcp(connectStdio, (ws) => {
    // server-everything writes its pid here when it starts: a restart changes it.
    marker = path.join(ws.root, 'everything.pid');
    writeFileSync(path.join(ws.root, 'lightsop.config.json'), JSON.stringify({
      skills: './skills.mjs',
      plans: ['plans/**/*.sop'],
      mcpServers: {
        everything: { command: process.execPath, args: [MARKER_SERVER, marker, EVERYTHING_SERVER, 'stdio'] },
        broken: { command: process.execPath, args: ['-e', 'console.error("cannot open the database"); process.exit(2)'] },
      },
    }));
  });
  const call = mcp.call;

  it('list_commands: the skills, the tools with descriptions and parameters, assign; the broken server in mcpProblems', async () => {
    const listed = json(await call('list_commands')) as unknown as Listed;
    expect(listed.mcpServers).toEqual(['everything']);
    const names = listed.commands.map((c) => c.name);
    expect(names).toContain('greet');
    expect(names).toContain('assign');
    const echo = listed.commands.find((c) => c.name === 'everything.echo')!;
    expect(echo).toMatchObject({ description: 'Echoes back the input string', sideEffects: false, source: { kind: 'mcp', name: 'everything' } });
    expect(echo.parameters).toEqual([expect.objectContaining({ name: 'message', required: true })]);
    expect(listed.mcpProblems).toEqual([{ server: 'broken', message: expect.stringMatching(/lightsop\.config\.json: field "mcpServers\.broken": .*cannot open the database/) }]);
  });

  it('lint_plan checks tool names and argument counts; a broken server\'s names are not called unknown', async () => {
    const result = json(await call('lint_plan', { text: '@a everything.echo hi\n@b everything.ech x\n@c everything.get-sum 1 2 3\n@d broken.tool\n@lastAnswer assign $a $b $c $d\n' })) as {
      diagnostics: { code: string; line: number; message: string }[]; mcpProblems?: unknown[];
    };
    expect(result.diagnostics.map((d) => [d.code, d.line])).toEqual([['unknown-command', 2], ['argument-count', 3]]);
    expect(result.diagnostics[0]!.message).toContain("Did you mean 'everything.echo'");
    expect(result.mcpProblems).toHaveLength(1);
  });

  it('run_plan calls a tool; a plan that needs the broken server is a tool error naming it', async () => {
    const ran = json(await call('run_plan', { text: '@said everything.echo "hello agent"\n@g greet $said\n' })) as { variables: Record<string, { status: string; value: string }> };
    expect(ran.variables.said).toEqual({ status: 'success', value: 'Echo: hello agent' });
    expect(ran.variables.g).toEqual({ status: 'success', value: 'hello Echo: hello agent' });
    const refused = (await call('run_plan', { text: '@x broken.tool\n' })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/mcpServers\.broken.*cannot open the database/);
  });

  it("run_plan with a progress token: the plan's steps and the progress of the tools it calls reach the client", async () => {
    const progress: { progress: number; total?: number; message?: string }[] = [];
    // @after waits for the test (the skill `gate`): the notifications up to @slow's are all in
    // before the result, which could otherwise overtake the last ones in the client.
    const pending = mcp.server.client.callTool(
      { name: 'run_plan', arguments: { text: '@slow everything.trigger-long-running-operation 3 3\n@after gate $slow\n' } },
      undefined,
      { onprogress: (p) => void progress.push(p) },
    );
    await waitFor('the progress of @slow settling', () => progress.some((p) => p.message === '@slow success'));
    const received = progress.slice(0, progress.findIndex((p) => p.message === '@slow success') + 1);
    writeFileSync(path.join(mcp.ws.root, 'open.txt'), 'yes');
    const ran = json(await pending) as { variables: Record<string, { status: string; value: string }> };
    expect(ran.variables.slow).toEqual({ status: 'success', value: expect.stringContaining('Long running operation completed') });
    expect(ran.variables.after).toEqual({ status: 'success', value: 'opened' });

    // The inner tool's own notifications, forwarded with the variable and the tool (steps 1 and 2
    // of 3 come a second apart, well before its result; the third may come with the result, and
    // the inner client then drops it), then the plan's step that settles the variable.
    const tool = received.filter((p) => p.message?.startsWith('@slow everything.trigger-long-running-operation: '));
    expect(tool.map((p) => p.message).slice(0, 2)).toEqual([
      '@slow everything.trigger-long-running-operation: 1/3 (33%)',
      '@slow everything.trigger-long-running-operation: 2/3 (67%)',
    ]);
    expect(received.at(-1)).toEqual({ progress: 1, total: 2, message: '@slow success' });
    expect(received).toHaveLength(tool.length + 1);
    // The value always increases (MCP requires it); a tool's progress stays inside its step.
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
    for (const p of tool) {
      expect(p.progress).toBeGreaterThan(0);
      expect(p.progress).toBeLessThan(1);
      expect(p.total).toBe(2);
    }
  });

  it('the working server is started once: requests (and retries of the broken one) reuse it', async () => {
    const pid = readFileSync(marker, 'utf8');
    json(await call('list_commands'));
    json(await call('lint_plan', { text: '@a everything.echo hi\n' }));
    expect(readFileSync(marker, 'utf8')).toBe(pid);
  });

  it('the plan_for_task prompt lists the tools and says which server is missing', async () => {
    const prompt: GetPromptResult = await mcp.server.client.getPrompt({ name: 'plan_for_task', arguments: { task: 'echo a greeting' } });
    const body = prompt.messages.map((m) => (m.content.type === 'text' ? m.content.text : '')).join('\n');
    expect(body).toMatch(/- everything\.echo message: Echoes back the input string/);
    expect(body).toContain('the tools of the MCP server "broken" are not available');
  });
});
