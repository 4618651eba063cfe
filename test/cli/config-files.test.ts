// Hostile config and skills files for the built `lightsop` binary (issue 11, item 14): a FIFO, a
// device such as /dev/zero, or a file above 8 MiB named as the skills file or standing as
// lightsop.config.json is a one-line error with the contract's exit code (lint: 2 for an I/O
// error, 3 for a bad config), never a hang or a read of hundreds of megabytes.
import { execFileSync } from 'node:child_process';
import { rmSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, lightsop, tempTree } from '../helpers/cli';

let dir = '';
beforeAll(() => ensureBuilt(), 120_000);
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

const PLAN = '@a emit 1\n@lastAnswer final_answer $a\n';

function expectOneLineError(run: { code: number; stdout: string; stderr: string }, code: number, text: string): void {
  expect(run.code).toBe(code);
  const lines = run.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(text);
}

describe('lightsop and files that are not plain small files', () => {
  it('--skills /dev/zero', () => {
    dir = tempTree({ 'plan.sop': PLAN });
    expectOneLineError(lightsop(['lint', '--skills', '/dev/zero', 'plan.sop'], { cwd: dir }), 2, 'dev/zero: cannot read (not a regular file)');
  });

  it('a config whose skills is a FIFO', () => {
    dir = tempTree({ 'plan.sop': PLAN, 'lightsop.config.json': '{ "skills": "./skills.json" }' });
    execFileSync('mkfifo', [path.join(dir, 'skills.json')]);
    expectOneLineError(lightsop(['lint', 'plan.sop'], { cwd: dir }), 2, 'skills.json: cannot read (not a regular file)');
  }, 90_000);

  it('a skills file above 8 MiB', () => {
    dir = tempTree({ 'plan.sop': PLAN, 'skills.json': '' });
    truncateSync(path.join(dir, 'skills.json'), 8 * 1024 * 1024 + 1);
    expectOneLineError(lightsop(['lint', '--skills', 'skills.json', 'plan.sop'], { cwd: dir }), 2, 'skills.json: cannot read (larger than 8 MiB)');
  });

  it('a lightsop.config.json that is a FIFO', () => {
    dir = tempTree({ 'plan.sop': PLAN });
    execFileSync('mkfifo', [path.join(dir, 'lightsop.config.json')]);
    expectOneLineError(lightsop(['lint', 'plan.sop'], { cwd: dir }), 3, 'lightsop.config.json: cannot read (not a regular file)');
  }, 90_000);
});
