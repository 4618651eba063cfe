// The file skills where /proc/self/fd does not exist (macOS, BSDs): the same static attacks must
// fail, with the opened file checked against the path it was opened at (device and inode) instead
// of being read back from the descriptor. /proc is hidden from the workspace module by a mock.
// Without openat a racing link swapper can still win now and then there (docs/sessions.md, "File
// skills"), so the race test runs only where /proc exists (file-race.test.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, readFileSync, readdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { approveAllSupervisor, createStandardSkills } from '@lightsop/runtime';
import { tempDir } from '../sessions/helpers';
import { call } from './helpers';

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const existsSync = (p: import('node:fs').PathLike) => (String(p).startsWith('/proc') ? false : fs.existsSync(p));
  return { ...fs, existsSync, default: { ...fs, existsSync } };
});

describe('file skills without /proc/self/fd', () => {
  it('the module sees no /proc', () => {
    expect(existsSync('/proc/self/fd')).toBe(false);
  });

  it('dangling links, hard links and FIFOs are refused; links inside still work', async () => {
    const outside = tempDir({ 'secret.txt': 'TOP SECRET' });
    const root = tempDir({ 'docs/a.txt': 'alpha' });
    symlinkSync(path.join(outside, 'x.txt'), path.join(root, 'dangling'));
    symlinkSync(outside, path.join(root, 'out'));
    symlinkSync('docs', path.join(root, 'd'));
    linkSync(path.join(outside, 'secret.txt'), path.join(root, 'hard.txt'));
    execFileSync('mkfifo', [path.join(root, 'pipe')]);
    const skills = createStandardSkills({ root, supervisor: approveAllSupervisor });
    expect((await call(skills, 'write_file', ['dangling', 'pwned'])).status).toBe('error');
    expect((await call(skills, 'write_file', ['out/new.txt', 'pwned'])).status).toBe('error');
    expect((await call(skills, 'read_file', ['hard.txt'])).status).toBe('error');
    expect((await call(skills, 'write_file', ['hard.txt', 'pwned'])).status).toBe('error');
    expect(String((await call(skills, 'read_file', ['pipe'])).data)).toMatch(/not a regular file/);
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET');
    expect(await call(skills, 'read_file', ['d/a.txt'])).toEqual({ status: 'success', data: 'alpha' });
    expect((await call(skills, 'write_file', ['d/sub/b.txt', 'beta'])).data).toBe('Wrote 4 bytes to docs/sub/b.txt');
    expect((await call(skills, 'edit_file', ['d/sub/b.txt', 'beta', 'gamma'])).status).toBe('success');
    expect(readFileSync(path.join(root, 'docs/sub/b.txt'), 'utf8')).toBe('gamma');
    expect(String((await call(skills, 'list_files', ['.', 'recursive'])).data).split('\n')).toContain('docs/sub/b.txt');
  });

});
