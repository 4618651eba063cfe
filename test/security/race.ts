/**
 * The symbolic-link swapping attack on the file skills, shared by the race tests: a child process
 * (symlink-swapper.mjs) swaps a file and a folder of a fresh workspace between inside targets and
 * links to outside ones while every file skill is called over and over for `seconds`.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { approveAllSupervisor, createStandardSkills } from '@lightsop/runtime';
import { tempDir, waitFor } from '../sessions/helpers';
import { call } from './helpers';

const OUTSIDE_FILES: Record<string, string> = { 'secret.txt': 'SECRET', 'file.txt': 'SECRET', 'outside-only.txt': 'SECRET' };

export interface RaceResult {
  calls: number;
  refused: number;
  /** One line per call that read, listed, wrote or edited something outside. */
  escapes: string[];
  /** Whether the outside folder differs from how it started, after the attack. */
  outsideChanged: boolean;
}

export async function runSwapRace(seconds: number): Promise<RaceResult> {
  const outside = tempDir(OUTSIDE_FILES);
  const root = tempDir({ f: 'inside', 'd/file.txt': 'inside' });
  const skills = createStandardSkills({ root, supervisor: approveAllSupervisor });
  const swapper = spawn(process.execPath, [path.join(__dirname, 'symlink-swapper.mjs'), root, outside], { stdio: ['ignore', 'pipe', 'inherit'] });
  let said = '';
  swapper.stdout.setEncoding('utf8').on('data', (d: string) => (said += d));
  const exited = new Promise<void>((resolve) => swapper.on('exit', () => resolve()));
  const escapes: string[] = [];
  let calls = 0;
  let refused = 0;
  /** True (and the outside folder restored) when a write reached the outside folder. */
  const outsideChanged = (): boolean => {
    const names = readdirSync(outside).sort();
    const changed = names.join(',') !== Object.keys(OUTSIDE_FILES).sort().join(',') || names.some((n) => readFileSync(path.join(outside, n), 'utf8') !== OUTSIDE_FILES[n]);
    if (changed) {
      for (const n of names) if (!(n in OUTSIDE_FILES)) unlinkSync(path.join(outside, n));
      for (const [n, text] of Object.entries(OUTSIDE_FILES)) writeFileSync(path.join(outside, n), text);
    }
    return changed;
  };
  const attempt = async (command: string, args: string[]) => {
    const r = await call(skills, command, args);
    calls += 1;
    if (r.status !== 'success') refused += 1;
    const leaked = r.status === 'success' && /SECRET|outside-only/.test(String(r.data));
    const wrote = command !== 'read_file' && command !== 'list_files' && outsideChanged();
    if (leaked || wrote) escapes.push(`${command} ${args.join(' ')} -> ${r.status}: ${String(r.data).slice(0, 80)}`);
  };
  try {
    await waitFor(() => said.includes('ready'), 20_000, 'the swapper to start');
    const deadline = Date.now() + seconds * 1000;
    for (let i = 0; Date.now() < deadline; i++) {
      await attempt('read_file', ['f']);
      await attempt('read_file', ['d/file.txt']);
      await attempt('list_files', ['d']);
      await attempt('write_file', ['f', 'inside']);
      await attempt('write_file', ['d/file.txt', 'inside']);
      await attempt('write_file', [`d/new-${i}.txt`, 'inside']);
      await attempt('edit_file', ['d/file.txt', 'SECRET', 'PWNED']);
      await attempt('edit_file', ['f', 'SECRET', 'PWNED']);
    }
  } finally {
    swapper.kill('SIGKILL');
    await exited;
  }
  return { calls, refused, escapes, outsideChanged: outsideChanged() };
}
