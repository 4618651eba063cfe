/**
 * A destructive MCP tool (destructiveHint) is never offered "always" (docs/mcp.md): not on the
 * terminal of `lightsop chat`, not on the chat panel's approval card, and an "always" sent anyway
 * is no answer. With server-filesystem's real `write_file` (destructive) and `create_directory`
 * (side effects, not destructive) and the scripted OpenAI-compatible server.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { McpToolSet, withMcpTools } from '@lightsop/runtime/mcp';
import { chatCommand } from '../../packages/cli/src/commands/chat';
import type { ChatController } from '../../extension/src/chat/controller';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { FILESYSTEM_SERVER, nodeServer } from '../helpers/mcp';
import { startChat, testEnvironment, waitFor as waitForValue } from '../chat/helpers';
import { tempDir, waitFor } from '../sessions/helpers';

let server: LlmServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe('approvals of a destructive MCP tool', { timeout: 120_000 }, () => {
  it('lightsop chat on a terminal: no [a]lways for it; "always" is refused and asked again; other tools keep it', async () => {
    const root = tempDir({ 'data/keep.txt': 'x\n' });
    const target = path.join(root, 'data', 'out.txt');
    writeFileSync(path.join(root, 'lightsop.config.json'), JSON.stringify({ mcpServers: { fs: nodeServer(FILESYSTEM_SERVER, [path.join(root, 'data')]) } }));
    server = await startLlmServer(() => `@d fs.create_directory "${path.join(root, 'data', 'sub')}"\n@w fs.write_file "${target}" "written"\n@lastAnswer final_answer "done"`);
    const input = new PassThrough();
    let out = '';
    const io = { cwd: root, isTTY: true, color: false, version: 'test', stdout: (t: string) => void (out += t), stderr: (t: string) => void (out += t) };
    const done = chatCommand({ root, stdlib: false }, io, {
      input,
      interactive: true,
      env: { LIGHTSOP_LLM_BASE_URL: server.url, LIGHTSOP_LLM_MODEL: 'chat-model', LIGHTSOP_LLM_API_KEY: 'sk-approvals-test' },
      onInterrupt: () => () => undefined,
    });
    /** The last question: from its "? TOOL wants to run" to the end. */
    const lastQuestion = () => {
      const at = out.lastIndexOf(' wants to run');
      return out.slice(out.lastIndexOf('? ', at));
    };
    const questions = () => out.split('allow it?').length - 1;
    input.write('write the file\n');
    // Both steps are ready at once; the questions come one at a time, in either order.
    let writeAsked = 0;
    for (let n = 1; n <= 3; n++) {
      await waitFor(() => questions() === n, 60_000, `question ${n}`);
      const asked = lastQuestion();
      if (asked.includes('fs.create_directory')) {
        // Side effects, not destructive: "always" is offered and taken.
        expect(asked).toContain('allow it? [y]es / [n]o / [a]lways for this exact call: ');
        input.write('a\n');
      } else {
        expect(asked).toContain('fs.write_file');
        expect(asked).toContain('destructive: this tool is asked about every time');
        expect(asked).not.toContain('[a]lways');
        expect(existsSync(target)).toBe(false);
        // The first time "always": refused, and the same question is asked again.
        input.write(writeAsked === 0 ? 'always\n' : 'y\n');
        writeAsked++;
        if (writeAsked === 2) break;
      }
    }
    expect(out).toContain('(not "always": a destructive tool is asked about every time)');
    await waitFor(() => existsSync(target) && readFileSync(target, 'utf8') === 'written', 30_000, 'the file');
    await waitFor(() => out.includes('\ndone\n'), 30_000, 'the answer');
    input.end();
    expect(await done).toBe(0);
  });

  describe('the chat panel', () => {
    let tools: McpToolSet;
    let dir: string;
    const controllers: ChatController[] = [];
    beforeAll(async () => {
      dir = tempDir({ 'data/keep.txt': 'x\n' });
      tools = await McpToolSet.open([{ name: 'fs', transport: 'stdio', command: process.execPath, args: [FILESYSTEM_SERVER, path.join(dir, 'data')], bareNames: false }]);
      expect(tools.problems).toEqual([]);
    }, 90_000);
    afterAll(async () => {
      for (const c of controllers.splice(0)) await c.shutdown();
      await tools?.close();
    });

    it('its card says destructive and has no "always"; an "always" from the page is no answer', async () => {
      const target = path.join(dir, 'data', 'panel.txt');
      server = await startLlmServer(() => `@w fs.write_file "${target}" "from the panel"\n@lastAnswer final_answer $w`);
      const env = testEnvironment({ server });
      env.skills = { registry: withMcpTools(null, tools), note: null, stamp: 'mcp' };
      const { controller, page } = await startChat(env, controllers);
      await controller.handleMessage({ type: 'send', loopId: page.state.activeLoopId, text: 'write it' });
      const card = await waitForValue('the approval card', () => page.lastTurn().approvals.find((a) => a.state === 'open'), 60_000);
      expect(card).toMatchObject({ tool: 'fs.write_file', sideEffects: true, destructive: true });
      await controller.handleMessage({ type: 'approval', id: card.id, decision: 'alwaysApprove' });
      expect(page.lastTurn().approvals.find((a) => a.id === card.id)?.state).toBe('open');
      expect(existsSync(target)).toBe(false);
      await controller.handleMessage({ type: 'approval', id: card.id, decision: 'approve' });
      await waitForValue('the approved write', () => existsSync(target) && readFileSync(target, 'utf8') === 'from the panel', 30_000);
      expect(page.lastTurn().approvals.find((a) => a.id === card.id)?.state).toBe('approved');
    });
  });
});
