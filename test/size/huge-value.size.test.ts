// A skill that returns 300 million characters: its dependents still get the whole value, and
// `lightsop run` prints every result instead of dying with "Invalid string length" (issue 10,
// item 4). The value is all double quotes, so its JSON form (600 million characters) is longer
// than V8's longest string and must be cut; `commands` holds one text of 600 million characters.
import { beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { closeSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { ensureBuilt, repoRoot, tempTree } from '../helpers/cli';
import { runBuilt } from './plans';

/** `length` bytes of a file from `start`, as UTF-8 text. */
function readPart(file: string, start: number, length: number): string {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const n = readSync(fd, buffer, 0, length, Math.max(0, start));
    return buffer.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

const LENGTH = 300_000_000;
const TIMEOUT = 120_000;

const SKILLS = `export default {
  huge: { description: 'a very long text', run: () => '"'.repeat(${LENGTH}) },
  total: { description: 'the total length of the arguments', run: (args) => String(args.reduce((n, a) => n + a.length, 0)) },
  echo: { description: 'its arguments', run: (args) => args.join(' ') },
};
`;

const PLAN = '@big huge\n@both total $big $big\n@small echo ok\n';

let dir = '';
beforeAll(() => {
  ensureBuilt();
  dir = tempTree({ 'skills.mjs': SKILLS, 'plan.sop': PLAN });
});

interface RunJson {
  variables: Record<string, { status: string; value: string }>;
  failures: unknown[];
  commands: string[];
  truncated?: { field: string; variable?: string; index?: number; length: number }[];
}

describe('a value longer than JSON can print', () => {
  it('--json prints every variable, cuts the huge texts with a marker and lists them', async () => {
    const res = await runBuilt(['run', '--json', '--skills', 'skills.mjs', 'plan.sop'], { cwd: dir });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as RunJson;
    expect(Object.keys(out.variables)).toEqual(['big', 'both', 'small']);
    expect(out.variables.both).toEqual({ status: 'success', value: String(2 * LENGTH) });
    expect(out.variables.small).toEqual({ status: 'success', value: 'ok' });
    expect(out.variables.big!.status).toBe('success');
    expect(out.variables.big!.value).toMatch(/^"{1000,}… \[cut by lightsop: \d+ of 300000000 characters shown; the whole text is too long for JSON output\]$/);
    expect(out.failures).toEqual([]);
    expect(out.commands).toHaveLength(3);
    expect(out.commands).toContain('huge');
    expect(out.commands).toContain('echo ok');
    const total = out.commands.find((c) => c.startsWith('total '))!;
    expect(total).toMatch(/^total "{1000,}… \[cut by lightsop: /);
    expect(out.truncated).toEqual([
      { field: 'value', variable: 'big', length: LENGTH },
      { field: 'command', index: out.commands.indexOf(total), length: expect.any(Number) },
    ]);
  }, TIMEOUT);

  it('text output prints every row whole (no terminal: rows are never cut) and the totals', async () => {
    // 300 million characters of output: written to a file and read in parts, not held by the test.
    const outFile = path.join(dir, 'text-output.txt');
    const fd = openSync(outFile, 'w');
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(repoRoot, 'packages/cli/bin/lightsop.js'), 'run', '--skills', 'skills.mjs', 'plan.sop'], {
        cwd: dir, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', fd, 'ignore'],
      });
      child.on('error', reject);
      child.on('close', (c) => resolve(c));
    });
    closeSync(fd);
    expect(code).toBe(0);
    const size = statSync(outFile).size;
    const head = readPart(outFile, 0, 40);
    const tail = readPart(outFile, size - 4096, 4096).split('\n');
    expect(head).toMatch(/^✓ @big +success +"+$/);
    expect(size).toBeGreaterThan(LENGTH);
    rmSync(outFile);
    const rows = tail.slice(-5);
    expect(rows[1]).toMatch(/^✓ @both +success +600000000$/);
    expect(rows[2]).toMatch(/^✓ @small +success +ok$/);
    expect(rows[3]).toMatch(/^3 variables: 3 succeeded, 0 failed, 0 canceled, 0 not run/);
    expect(rows[0]!.endsWith('"')).toBe(true);
  }, TIMEOUT);
});
