// Attacks on the workspace boundary of the file skills (issue 11, items 1 and 3): a dangling
// symbolic link, hard links to files outside the workspace, a FIFO, device files and files whose
// reported size lies. Every attack uses real links and special files in temporary folders.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, linkSync, mkdirSync, openSync, readFileSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { approveAllSupervisor, createStandardSkills } from '@lightsop/runtime';
import { tempDir } from '../sessions/helpers';
import { call, settleWithin } from './helpers';

describe('file skills: links out of the workspace', () => {
  it('write_file through a dangling link does not create the missing target outside (item 1)', async () => {
    const outside = tempDir({});
    const root = tempDir({});
    symlinkSync(path.join(outside, 'x.txt'), path.join(root, 'dangling'));
    symlinkSync(path.join(outside, 'missing-dir'), path.join(root, 'dangling-dir'));
    const skills = createStandardSkills({ root, supervisor: approveAllSupervisor });
    const written = await call(skills, 'write_file', ['dangling', 'pwned']);
    expect(written.status).toBe('error');
    expect(String(written.data)).toMatch(/symbolic link/);
    expect(existsSync(path.join(outside, 'x.txt'))).toBe(false);
    const nested = await call(skills, 'write_file', ['dangling-dir/x.txt', 'pwned']);
    expect(nested.status).toBe('error');
    expect(existsSync(path.join(outside, 'missing-dir'))).toBe(false);
    expect((await call(skills, 'edit_file', ['dangling', 'a', 'b'])).status).toBe('error');
    expect((await call(skills, 'read_file', ['dangling'])).status).toBe('error');
    expect(readdirSync(outside)).toEqual([]);
  });

  it('links that stay inside the workspace still work for reads and writes', async () => {
    const root = tempDir({ 'docs/a.txt': 'alpha' });
    symlinkSync(path.join(root, 'docs/a.txt'), path.join(root, 'alias.txt'));
    symlinkSync('docs', path.join(root, 'd'));
    const skills = createStandardSkills({ root, supervisor: approveAllSupervisor });
    expect(await call(skills, 'read_file', ['alias.txt'])).toEqual({ status: 'success', data: 'alpha' });
    expect(await call(skills, 'read_file', ['d/a.txt'])).toEqual({ status: 'success', data: 'alpha' });
    expect((await call(skills, 'write_file', ['alias.txt', 'beta'])).status).toBe('success');
    expect(readFileSync(path.join(root, 'docs/a.txt'), 'utf8')).toBe('beta');
    expect((await call(skills, 'edit_file', ['d/a.txt', 'beta', 'gamma'])).status).toBe('success');
    expect(readFileSync(path.join(root, 'docs/a.txt'), 'utf8')).toBe('gamma');
    expect((await call(skills, 'write_file', ['d/new/b.txt', 'new'])).data).toBe('Wrote 3 bytes to docs/new/b.txt');
    expect(readFileSync(path.join(root, 'docs/new/b.txt'), 'utf8')).toBe('new');
    expect(String((await call(skills, 'list_files', ['d', 'recursive'])).data).split('\n')).toEqual(['docs/a.txt', 'docs/new/', 'docs/new/b.txt']);
  });

  it('a hard link inside the workspace to an outside file is neither read nor written nor edited (item 3)', async () => {
    const outside = tempDir({ 'secret.txt': 'TOP SECRET' });
    const root = tempDir({ 'own.txt': 'mine' });
    linkSync(path.join(outside, 'secret.txt'), path.join(root, 'hard.txt'));
    const skills = createStandardSkills({ root, supervisor: approveAllSupervisor });
    const read = await call(skills, 'read_file', ['hard.txt']);
    expect(read.status).toBe('error');
    expect(String(read.data)).toMatch(/hard link/);
    expect(String(read.data)).not.toContain('TOP SECRET');
    const written = await call(skills, 'write_file', ['hard.txt', 'overwritten']);
    expect(written.status).toBe('error');
    expect(String(written.data)).toMatch(/hard link/);
    const edited = await call(skills, 'edit_file', ['hard.txt', 'TOP', 'NOT']);
    expect(edited.status).toBe('error');
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET');
    // Two names inside the workspace look the same as one inside and one outside: also refused.
    linkSync(path.join(root, 'own.txt'), path.join(root, 'own-too.txt'));
    expect((await call(skills, 'read_file', ['own.txt'])).status).toBe('error');
  });
});

describe('file skills: special files', () => {
  it('read_file on a FIFO is refused at once instead of hanging; write_file and edit_file too', async () => {
    const root = tempDir({});
    const fifo = path.join(root, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const skills = createStandardSkills({ root, supervisor: approveAllSupervisor });
    try {
      const read = await settleWithin(call(skills, 'read_file', ['pipe']), 15_000, 'read_file on a FIFO');
      expect(read.status).toBe('error');
      expect(String(read.data)).toMatch(/not a regular file/);
      const written = await settleWithin(call(skills, 'write_file', ['pipe', 'x']), 15_000, 'write_file on a FIFO');
      expect(written.status).toBe('error');
      expect(String(written.data)).toMatch(/not a regular file/);
      const edited = await settleWithin(call(skills, 'edit_file', ['pipe', 'a', 'b']), 15_000, 'edit_file on a FIFO');
      expect(edited.status).toBe('error');
      expect(String(edited.data)).toMatch(/not a regular file/);
    } finally {
      // Should a regression leave a read or write blocked on the FIFO, give it a peer so the
      // blocked thread-pool call returns and the worker can exit.
      for (const flags of [constants.O_WRONLY | constants.O_NONBLOCK, constants.O_RDONLY | constants.O_NONBLOCK]) {
        try {
          closeSync(openSync(fifo, flags));
        } catch {
          // No blocked peer: nothing to release.
        }
      }
    }
  });

  it('device files are refused: /dev/zero is not read until memory runs out, /dev/null is not written', async () => {
    const skills = createStandardSkills({ root: '/dev', supervisor: approveAllSupervisor });
    const read = await settleWithin(call(skills, 'read_file', ['zero']), 15_000, 'read_file on /dev/zero');
    expect(read.status).toBe('error');
    expect(String(read.data)).toMatch(/not a regular file/);
    const written = await call(skills, 'write_file', ['null', 'x']);
    expect(written.status).toBe('error');
    expect(String(written.data)).toMatch(/not a regular file/);
  });

  it('the size cap is applied while reading, not taken from the reported size (a /proc file reports 0 bytes)', async () => {
    const procRoot = realpathSync('/proc/self');
    const skills = createStandardSkills({ root: procRoot, maxReadBytes: 64 });
    const read = await call(skills, 'read_file', ['status']);
    expect(read.status).toBe('error');
    expect(String(read.data)).toMatch(/more than the 64 bytes read_file returns/);
    // A regular file over the cap is refused the same way; one at the cap is returned whole.
    const root = tempDir({ 'big.txt': 'x'.repeat(65), 'fits.txt': 'y'.repeat(64) });
    const small = createStandardSkills({ root, maxReadBytes: 64, supervisor: approveAllSupervisor });
    expect(String((await call(small, 'read_file', ['big.txt'])).data)).toMatch(/more than the 64 bytes/);
    expect((await call(small, 'read_file', ['fits.txt'])).data).toBe('y'.repeat(64));
    expect(String((await call(small, 'edit_file', ['big.txt', 'x', 'z'])).data)).toMatch(/more than the 64 bytes/);
  });

  it('list_files does not follow a link to an outside folder and names special files plainly', async () => {
    const outside = tempDir({ 'outside-only.txt': 'x' });
    const root = tempDir({ 'a.txt': 'a' });
    mkdirSync(path.join(root, 'sub'));
    writeFileSync(path.join(root, 'sub/b.txt'), 'b');
    symlinkSync(outside, path.join(root, 'sub/out'));
    execFileSync('mkfifo', [path.join(root, 'pipe')]);
    const skills = createStandardSkills({ root });
    const listing = String((await call(skills, 'list_files', ['.', 'recursive'])).data);
    expect(listing).not.toContain('outside-only.txt');
    expect(listing.split('\n')).toEqual(['a.txt', 'pipe', 'sub/', 'sub/b.txt', 'sub/out']);
    expect((await call(skills, 'list_files', ['sub/out'])).status).toBe('error');
  });
});
