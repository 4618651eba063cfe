// ARCHITECTURE.md: the CLI prints one-line errors with the contract's exit codes, never stack
// traces. Known problems are CliErrors; this checks the last resort, an exception nobody
// foresaw (simulated by an Io whose standard output throws when written), for each command.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../packages/cli/src/main';
import { ensureBuilt, repoRoot, tempTree } from '../helpers/cli';

function brokenStdout(cwd: string) {
  let stderr = '';
  const io = {
    cwd,
    isTTY: false,
    color: false,
    version: '0.0.0-test',
    stdout: (): void => {
      throw new TypeError('simulated bug: standard output cannot be written');
    },
    stderr: (t: string) => void (stderr += t),
  };
  return { io, err: () => stderr };
}

describe('an unexpected exception inside a command', () => {
  // Each command writes to standard output here: lint a diagnostic, fmt the text, graph DOT, run the JSON.
  const cases = [[['lint', 'p.sop'], 2], [['fmt', 'p.sop'], 2], [['graph', 'p.sop'], 2], [['run', 'p.sop', '--json'], 3]] as const;
  for (const [args, code] of cases) {
    it(`${args[0]}: one line "lightsop: internal error: …", exit ${code}, no stack trace`, async () => {
      const dir = tempTree({ 'p.sop': '@a   assign x\n@b assign $a\n' });
      const b = brokenStdout(dir);
      const previous = process.env.LIGHTSOP_DEBUG;
      delete process.env.LIGHTSOP_DEBUG;
      try {
        expect(await runCli([...args], b.io)).toBe(code);
      } finally {
        if (previous !== undefined) process.env.LIGHTSOP_DEBUG = previous;
      }
      expect(b.err()).toBe('lightsop: internal error: simulated bug: standard output cannot be written (set LIGHTSOP_DEBUG=1 for details)\n');
    });
  }
});

describe('a failure before the CLI set up its output', () => {
  // The binary's entry caught nothing: a rejection of runCli before its own try (here
  // process.cwd() throwing because the shell's directory was deleted) was an unhandled rejection
  // with a Node stack and exit 1.
  const cases = [['fmt', 2], ['run', 3]] as const;
  for (const [command, code] of cases) {
    it(`${command} in a deleted directory: one line, exit ${code}, no stack`, () => {
      ensureBuilt();
      const dir = mkdtempSync(path.join(tmpdir(), 'lightsop-gone-'));
      const bin = path.join(repoRoot, 'packages/cli/bin/lightsop.js');
      const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
      delete env.LIGHTSOP_DEBUG;
      const res = spawnSync('sh', ['-c', 'cd "$1" && rmdir "$1" && exec "$2" "$3" "$4" p.sop', 'sh', dir, process.execPath, bin, command], {
        encoding: 'utf8',
        env,
        timeout: 60000,
      });
      expect(res.stderr).toBe('lightsop: the current directory cannot be read (ENOENT: no such file or directory, uv_cwd): was it deleted or moved? Change to an existing directory.\n');
      expect(res.status).toBe(code);
      expect(res.stdout).toBe('');
    });
  }
});
