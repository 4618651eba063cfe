// The workspace boundary through the public surface: the built `lightsop chat` binary, driven by a
// scripted model that asks for write_file on a dangling link and read_file on a hard link to an
// outside file. Even with every call approved, nothing outside the workspace is written or read.
import { existsSync, linkSync, readFileSync, readdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, lightsopAsync } from '../helpers/cli';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { tempDir } from '../sessions/helpers';

let server: LlmServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe('lightsop chat and the workspace boundary', () => {
  beforeAll(() => ensureBuilt());

  it('--approve-all: write_file on a dangling link to an outside file is refused and creates nothing outside', async () => {
    const outside = tempDir({});
    const root = tempDir({});
    symlinkSync(path.join(outside, 'x.txt'), path.join(root, 'dangling'));
    server = await startLlmServer((req) => (req.messages.some((m) => m.content.includes('symbolic link'))
      ? '@lastAnswer final_answer "The write was refused."'
      : '# Save it\n@w write_file dangling "pwned"\n@lastAnswer final_answer $w'));
    const env = { LIGHTSOP_LLM_BASE_URL: server.url, LIGHTSOP_LLM_MODEL: 'scripted', LIGHTSOP_LLM_API_KEY: 'sk-test' };
    const res = await lightsopAsync(['chat', '--json', '--approve-all', '--root', root], { input: 'save pwned to dangling\n', env });
    const events = res.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events).toContainEqual({ type: 'approval', tool: 'write_file', input: 'write_file dangling pwned', verdict: 'approve' });
    const failed = events.find((e) => e.type === 'variable' && e.variable === 'w' && e.state === 'fail');
    expect(JSON.stringify(failed)).toMatch(/symbolic link/);
    expect(events.at(-1)).toEqual({ type: 'answer', status: 'answered', text: 'The write was refused.' });
    expect(existsSync(path.join(outside, 'x.txt'))).toBe(false);
    expect(readdirSync(outside)).toEqual([]);
  }, 60_000);

  it('--approve-all: read_file on a hard link to an outside file does not return its content', async () => {
    const outside = tempDir({ 'secret.txt': 'TOP SECRET' });
    const root = tempDir({});
    linkSync(path.join(outside, 'secret.txt'), path.join(root, 'notes.txt'));
    server = await startLlmServer((req) => (req.messages.some((m) => m.content.includes('hard link'))
      ? '@lastAnswer final_answer "The read was refused."'
      : '@r read_file notes.txt\n@lastAnswer final_answer $r'));
    const env = { LIGHTSOP_LLM_BASE_URL: server.url, LIGHTSOP_LLM_MODEL: 'scripted', LIGHTSOP_LLM_API_KEY: 'sk-test' };
    const res = await lightsopAsync(['chat', '--json', '--approve-all', '--root', root], { input: 'read my notes\n', env });
    expect(res.stdout).not.toContain('TOP SECRET');
    expect(res.stdout.trim().split('\n').map((l) => JSON.parse(l) as unknown).at(-1)).toEqual({ type: 'answer', status: 'answered', text: 'The read was refused.' });
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET');
  }, 60_000);
});
