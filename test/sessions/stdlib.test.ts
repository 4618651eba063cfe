// The standard skills: file skills confined to the workspace root (symbolic links resolved),
// writes, edits, shell and fetch behind approval, and their use from sessions.
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createResponder, type CommandRegistry } from '@lightsop/runtime';
import {
  LoopSession, SopSession, approveAllSupervisor, combineRegistries, createStandardSkills, sessionCommands, toolsFromRegistry, type Supervisor,
} from '@lightsop/sessions';
import { testRegistry } from '../helpers/registry';
import { alive, decision, recordingSupervisor, stubAgent, tempDir, waitFor } from './helpers';

async function call(registry: CommandRegistry, command: string, args: string[], signal?: AbortSignal): Promise<{ status: string; data: unknown }> {
  const responder = createResponder('v', command, false, null);
  try {
    const value = (await registry.executeCommand({ command, args, raw: `${command} ${args.join(' ')}`, variable: 'v', lineNumber: 1, comment: '', commentLines: [], ...(signal ? { signal } : {}) }, responder.api)) as { status: string; data: unknown };
    return { status: value.status, data: value.data };
  } catch (error) {
    return { status: 'error', data: (error as Error).message };
  }
}

const approving: Supervisor = approveAllSupervisor;

describe('standard skills', () => {
  it('read_file and list_files stay inside the root; .., absolute paths and symbolic links out are refused', async () => {
    const outside = tempDir({ 'secret.txt': 'top secret' });
    const root = tempDir({ 'a.txt': 'alpha', 'docs/b.md': 'beta' });
    symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'link.txt'));
    symlinkSync(outside, path.join(root, 'outdir'));
    const skills = createStandardSkills({ root });
    expect(await call(skills, 'read_file', ['a.txt'])).toEqual({ status: 'success', data: 'alpha' });
    expect(await call(skills, 'read_file', ['docs/../a.txt'])).toEqual({ status: 'success', data: 'alpha' });
    for (const bad of ['../' + path.basename(outside) + '/secret.txt', path.join(outside, 'secret.txt'), 'link.txt', 'outdir/secret.txt']) {
      const r = await call(skills, 'read_file', [bad]);
      expect(r.status).toBe('error');
      expect(String(r.data)).toMatch(/outside the workspace root/);
    }
    const listing = await call(skills, 'list_files', ['.', 'recursive']);
    expect(String(listing.data).split('\n')).toEqual(expect.arrayContaining(['a.txt', 'docs/', 'docs/b.md']));
    expect((await call(skills, 'list_files', ['outdir'])).status).toBe('error');
    expect(sessionCommands(skills).describe().read_file).toContain('## Input Format');
  });

  it('write_file and edit_file need approval; they never write outside the root, even through a link', async () => {
    const outside = tempDir({});
    const root = tempDir({ 'notes.txt': 'one two one' });
    symlinkSync(outside, path.join(root, 'escape'));
    const refused = createStandardSkills({ root });
    const denied = await call(refused, 'write_file', ['new.txt', 'hello']);
    expect(denied.status).toBe('error');
    expect(denied.data).toContain('was not run');
    expect(existsSync(path.join(root, 'new.txt'))).toBe(false);

    const supervisor = recordingSupervisor();
    const skills = createStandardSkills({ root, supervisor });
    expect((await call(skills, 'write_file', ['sub/dir/new.txt', 'hello'])).data).toBe('Wrote 5 bytes to sub/dir/new.txt');
    expect(readFileSync(path.join(root, 'sub/dir/new.txt'), 'utf8')).toBe('hello');
    expect(supervisor.choices[0]).toMatchObject({ toolName: 'write_file', sideEffects: true });
    const escape = await call(skills, 'write_file', ['escape/evil.txt', 'x']);
    expect(escape.status).toBe('error');
    expect(existsSync(path.join(outside, 'evil.txt'))).toBe(false);
    expect((await call(skills, 'edit_file', ['notes.txt', 'one', 'uno'])).data).toMatch(/occurs more than once/);
    expect((await call(skills, 'edit_file', ['notes.txt', 'two', 'dos'])).status).toBe('success');
    expect(readFileSync(path.join(root, 'notes.txt'), 'utf8')).toBe('one dos one');
    expect((await call(skills, 'edit_file', ['notes.txt', 'three', 'x'])).data).toMatch(/does not occur/);
    const no = createStandardSkills({ root, supervisor: recordingSupervisor(() => ({ decision: 'deny', reason: 'read-only day' })) });
    expect((await call(no, 'write_file', ['x.txt', 'y'])).data).toContain('Reason: read-only day');
  });

  it('single-input forms (loop tools): JSON objects and "path on the first line"', async () => {
    const root = tempDir({});
    const skills = createStandardSkills({ root, supervisor: approving });
    await call(skills, 'write_file', ['a.txt\nline 1\nline 2']);
    expect(readFileSync(path.join(root, 'a.txt'), 'utf8')).toBe('line 1\nline 2');
    await call(skills, 'edit_file', [JSON.stringify({ path: 'a.txt', old: 'line 2', new: 'second line' })]);
    expect(readFileSync(path.join(root, 'a.txt'), 'utf8')).toBe('line 1\nsecond line');
    expect((await call(skills, 'list_files', ['. recursive'])).data).toBe('a.txt');
  });

  it('run_shell runs in the root, fails on a non-zero exit, times out and stops when aborted', async () => {
    const root = tempDir({ 'here.txt': '' });
    const skills = createStandardSkills({ root, supervisor: approving, shell: { timeoutMs: 2000 } });
    expect(await call(skills, 'run_shell', [process.platform === 'win32' ? 'dir /b' : 'ls'])).toEqual({ status: 'success', data: 'here.txt' });
    const failed = await call(skills, 'run_shell', ['echo broken >&2; exit 3']);
    expect(failed).toEqual({ status: 'error', data: 'exit code 3: broken' });
    expect((await call(skills, 'run_shell', ['sleep 10'])).data).toMatch(/timed out after 2000 ms/);
    // Interrupted once the command runs (it wrote its pid; exec keeps it): the process is killed.
    const controller = new AbortController();
    const pending = call(skills, 'run_shell', ['echo $$ > shell.pid; exec sleep 10'], controller.signal);
    const pidFile = path.join(root, 'shell.pid');
    await waitFor(() => existsSync(pidFile) && /^\d+\n$/.test(readFileSync(pidFile, 'utf8')), 15000, 'the command to start');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    controller.abort('esc');
    expect((await pending).data).toMatch(/interrupted/);
    await waitFor(() => !alive(pid), 15000, 'the command to be killed');
    expect((await call(createStandardSkills({ root }), 'run_shell', ['touch made.txt'])).status).toBe('error');
    expect(existsSync(path.join(root, 'made.txt'))).toBe(false);
  });

  it('fetch_url fetches http(s) only, with approval, and reports HTTP errors', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/ok') res.writeHead(200, { 'content-type': 'text/plain' }).end('fetched body');
      else res.writeHead(404).end('missing');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const skills = createStandardSkills({ root: tempDir({}), supervisor: approving });
      expect(await call(skills, 'fetch_url', [`${base}/ok`])).toEqual({ status: 'success', data: 'fetched body' });
      expect((await call(skills, 'fetch_url', [`${base}/nope`])).data).toBe('HTTP 404 Not Found');
      expect((await call(skills, 'fetch_url', ['file:///etc/passwd'])).data).toMatch(/only fetches http and https/);
      expect((await call(createStandardSkills({ root: tempDir({}) }), 'fetch_url', [`${base}/ok`])).status).toBe('error');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('inside a session, the session supervisor approves once and the skill does not ask again; read-only commands are flagged', async () => {
    const root = tempDir({});
    const own = recordingSupervisor();
    const skills = createStandardSkills({ root, supervisor: own });
    const sessionSupervisor = recordingSupervisor();
    const sop = new SopSession({
      agent: stubAgent({ plans: ['# Save the note\n@w write_file note.txt "hi there"\n@lastAnswer final_answer $w'] }),
      skillsDescription: sessionCommands(skills).describe(), commandsRegistry: skills, options: { supervisor: sessionSupervisor },
    });
    expect(await sop.newPrompt('save a note')).toMatchObject({ kind: 'answered', answer: 'Wrote 8 bytes to note.txt' });
    expect(sessionSupervisor.choices.map((c) => [c.toolName, c.sideEffects])).toEqual([['write_file', true]]);
    expect(own.choices).toEqual([]);
    const loop = new LoopSession({
      agent: stubAgent({ decide: [decision('read_file', 'note.txt'), decision('final_answer', '$$read_file-res-1')] }),
      tools: toolsFromRegistry(skills), options: { supervisor: sessionSupervisor, projectRoot: root, historyCompressionEnabled: false },
    });
    expect((await loop.newPrompt('read it')).answer).toBe('hi there');
    expect(sessionSupervisor.choices.at(-1)).toMatchObject({ toolName: 'read_file', sideEffects: false });
    // A session without a supervisor does not approve anything: the skill's own supervisor is asked.
    const unsupervised = new SopSession({ agent: stubAgent({ plans: ['@w write_file b.txt x\n@lastAnswer final_answer $w'] }), skillsDescription: sessionCommands(skills).describe(), commandsRegistry: skills });
    await unsupervised.newPrompt('write');
    expect(own.choices.map((c) => c.toolName)).toEqual(['write_file']);
  });

  it('combineRegistries: the first registry listing a command runs it', async () => {
    const root = tempDir({ 'x.txt': 'from stdlib' });
    const mine = testRegistry({ read_file: (_p, r) => r.success('from mine') });
    const combined = combineRegistries(mine, createStandardSkills({ root }));
    expect((await call(combined, 'read_file', ['x.txt'])).data).toBe('from mine');
    expect((await call(combined, 'list_files', ['.'])).data).toBe('x.txt');
    const names = (combined.listCommands() as { name: string }[]).map((c) => c.name);
    expect(names.filter((n) => n === 'read_file')).toHaveLength(1);
  });
});
