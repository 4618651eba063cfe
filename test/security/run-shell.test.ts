// run_shell against a command that hides a child from it (issue 11, item 5): `setsid` puts a
// grandchild in its own session, out of the command's process group, and that grandchild keeps
// the output pipes open. The call must still settle when the command exits, on its timeout and on
// abort. The grandchildren are killed by the test afterwards (run_shell does not track them).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { approveAllSupervisor, createStandardSkills } from '@lightsop/runtime';
import { tempDir, waitFor } from '../sessions/helpers';
import { call, settleWithin } from './helpers';

const strays: number[] = [];
afterEach(() => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

// The grandchild writes its pid itself, after setsid, so the file's existence means it escaped.
const DETACH = "setsid sh -c 'echo $$ > bg.pid.tmp && mv bg.pid.tmp bg.pid; exec sleep 600' &";
const WAIT = 'while [ ! -s bg.pid ]; do sleep 0.05; done;';

/** Remembers the pid a command wrote to `file`, so the test can kill the detached grandchild. */
function strayFrom(root: string, file: string): void {
  const full = path.join(root, file);
  if (existsSync(full)) strays.push(Number(readFileSync(full, 'utf8').trim()));
}

/** True while the process runs (a zombie waiting to be reaped counts as ended). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

describe('run_shell and detached grandchildren', () => {
  it('settles when the command exits although a setsid grandchild holds its output pipes', async () => {
    const root = tempDir({});
    const skills = createStandardSkills({ root, supervisor: approveAllSupervisor });
    try {
      const r = await settleWithin(call(skills, 'run_shell', [`${DETACH} ${WAIT} echo started`]), 15_000, 'run_shell');
      expect(r).toEqual({ status: 'success', data: 'started' });
    } finally {
      strayFrom(root, 'bg.pid');
    }
  }, 30_000);

  it('its timeout fires and the call settles although the grandchild holds the pipes', async () => {
    const root = tempDir({});
    const skills = createStandardSkills({ root, supervisor: approveAllSupervisor, shell: { timeoutMs: 1000 } });
    try {
      const r = await settleWithin(call(skills, 'run_shell', [`${DETACH} ${WAIT} sleep 600`]), 15_000, 'run_shell with a timeout');
      expect(r.status).toBe('error');
      expect(String(r.data)).toMatch(/timed out after 1000 ms/);
    } finally {
      strayFrom(root, 'bg.pid');
    }
  }, 30_000);

  it('an abort ends the call although the grandchild holds the pipes', async () => {
    const root = tempDir({});
    const skills = createStandardSkills({ root, supervisor: approveAllSupervisor, shell: { timeoutMs: 600_000 } });
    const controller = new AbortController();
    try {
      const pending = call(skills, 'run_shell', [`${DETACH} ${WAIT} sleep 600`], controller.signal);
      await waitFor(() => existsSync(path.join(root, 'bg.pid')), 10_000, 'the grandchild to start');
      controller.abort('stop');
      const r = await settleWithin(pending, 15_000, 'the aborted run_shell');
      expect(r.status).toBe('error');
      expect(String(r.data)).toMatch(/interrupted/);
    } finally {
      strayFrom(root, 'bg.pid');
    }
  }, 30_000);

  it('the command\'s own process group is killed on timeout, background jobs included', async () => {
    const root = tempDir({});
    const skills = createStandardSkills({ root, supervisor: approveAllSupervisor, shell: { timeoutMs: 1000 } });
    const r = await settleWithin(call(skills, 'run_shell', ['sleep 600 & echo $! > job.pid; wait']), 15_000, 'run_shell');
    expect(String(r.data)).toMatch(/timed out/);
    const pid = Number(readFileSync(path.join(root, 'job.pid'), 'utf8').trim());
    // The background job was in the command's process group, so the group kill ended it.
    await waitFor(() => !alive(pid), 10_000, 'the background job to be gone');
  }, 30_000);
});
