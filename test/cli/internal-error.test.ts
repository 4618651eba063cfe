// ARCHITECTURE.md: the CLI prints one-line errors with the contract's exit codes, never stack
// traces. Known problems are CliErrors; this checks the last resort, an exception nobody
// foresaw (simulated by an Io whose working directory cannot be read), for each command.
import { describe, expect, it } from 'vitest';
import { runCli } from '../../packages/cli/src/main';

function brokenIo() {
  let stderr = '';
  let stdout = '';
  const io = {
    get cwd(): string {
      throw new TypeError('simulated bug: the working directory is unreadable');
    },
    isTTY: false,
    color: false,
    version: '0.0.0-test',
    stdout: (t: string) => void (stdout += t),
    stderr: (t: string) => void (stderr += t),
  };
  return { io, out: () => stdout, err: () => stderr };
}

describe('an unexpected exception inside a command', () => {
  for (const [args, code] of [[['lint', 'p.sop'], 2], [['fmt', 'p.sop'], 2], [['graph', 'p.sop'], 2], [['run', 'p.sop'], 3]] as const) {
    it(`${args[0]}: one line "lightsop: internal error: …", exit ${code}, no stack trace`, async () => {
      const b = brokenIo();
      const previous = process.env.LIGHTSOP_DEBUG;
      delete process.env.LIGHTSOP_DEBUG;
      try {
        expect(await runCli([...args], b.io)).toBe(code);
      } finally {
        if (previous !== undefined) process.env.LIGHTSOP_DEBUG = previous;
      }
      expect(b.err()).toBe('lightsop: internal error: simulated bug: the working directory is unreadable (set LIGHTSOP_DEBUG=1 for details)\n');
      expect(b.out()).toBe('');
    });
  }
});
