// ARCHITECTURE.md: the CLI prints one-line errors with the contract's exit codes, never stack
// traces. Known problems are CliErrors; this checks the last resort, an exception nobody
// foresaw (simulated by an Io whose standard output throws when written), for each command.
import { describe, expect, it } from 'vitest';
import { runCli } from '../../packages/cli/src/main';
import { tempTree } from '../helpers/cli';

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
