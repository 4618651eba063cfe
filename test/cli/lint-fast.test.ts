/**
 * The plain-lint fast path (bin/lightsop.js → dist/lint.cjs, packages/cli/src/lint-fast.ts) says
 * exactly what the full CLI (dist/main.js, commander) says: the same standard output, standard
 * error and exit code, for every kind of plain invocation and for those it leaves to commander.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parsePlainLint } from '../../packages/cli/src/lint-fast';
import { ensureBuilt, repoRoot, tempTree } from '../helpers/cli';

const BIN = path.join(repoRoot, 'packages/cli/bin/lightsop.js');
const MAIN = path.join(repoRoot, 'packages/cli/dist/main.js');

function run(entry: string, args: string[], cwd: string, input = '') {
  const res = spawnSync(process.execPath, [entry, ...args], { cwd, input, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

describe('parsePlainLint', () => {
  it('reads the options as commander does and leaves everything else to it', () => {
    expect(parsePlainLint(['lint', 'a.sop', '-q', '--format', 'json', '--max-warnings=3', '--skills', 's.json'])).toEqual({
      paths: ['a.sop'], options: { format: 'json', quiet: true, maxWarnings: 3, skills: 's.json' },
    });
    expect(parsePlainLint(['lint'])).toEqual({ paths: [], options: { format: 'text' } });
    expect(parsePlainLint(['lint', '-', '-f', 'sarif'])).toEqual({ paths: ['-'], options: { format: 'sarif' } });
    for (const argv of [['fmt', 'a.sop'], ['lint', '--help'], ['lint', '-h'], ['lint', '--format', 'xml'], ['lint', '--max-warnings', '-1'],
      ['lint', '--max-warnings', 'x'], ['lint', '--skills'], ['lint', '--', 'a.sop'], ['lint', '-qf', 'json'], ['lint', '--version'], ['lint', '--format=']]) {
      expect(parsePlainLint(argv), argv.join(' ')).toBeNull();
    }
  });
});

describe('the fast path and the full CLI agree', () => {
  let dir: string;
  beforeAll(() => {
    ensureBuilt();
    dir = tempTree({
      'ok.sop': '@a assign hello\n@lastAnswer echo $a\n',
      'bad.sop': '# a comment\n@a echo $b\n@a assign "x\n@c assign \'y\\\n@d missing\n',
      'warn.sop': '@a assign hello\n@b assign world\n',
      'skills.json': JSON.stringify({ commands: [{ name: 'echo', description: 'says it' }] }),
      'mod.mjs': 'await Promise.resolve();\nexport default { echo: { description: "says it", run: (args) => args.join(" ") } };\n',
      'throws.mjs': 'throw new Error("no skills today");\n',
      'sub/one.sop': '@x assign 1\n',
      'sub/two.sop': '@y nothing $x\n',
      'cfg/lightsop.config.json': JSON.stringify({ skills: 'skills.json' }),
      'cfg/skills.json': JSON.stringify({ commands: [{ name: 'echo', description: 'says it' }] }),
      'cfg/p.sop': '@a echo hi\n@b other\n',
      'badcfg/lightsop.config.json': '{ "skills": 3 ',
      'badcfg/p.sop': '@a assign 1\n',
    });
    mkdirSync(path.join(dir, 'empty'));
    writeFileSync(path.join(dir, 'notutf8.sop'), Buffer.from([0x40, 0x61, 0x20, 0xff, 0xfe, 0x0a]));
  });

  const cases: [string[], string?][] = [
    [['lint', 'ok.sop']],
    [['lint', 'bad.sop']],
    [['lint', 'bad.sop', 'ok.sop', '--format', 'json']],
    [['lint', 'bad.sop', '-f', 'sarif']],
    [['lint', 'bad.sop', '--format=github']],
    [['lint', 'warn.sop', '--max-warnings', '0']],
    [['lint', 'warn.sop', '--max-warnings=5']],
    [['lint', '-q', 'warn.sop', 'bad.sop']],
    [['lint', 'bad.sop', '--skills', 'skills.json']],
    [['lint', 'bad.sop', 'ok.sop', '--skills', 'mod.mjs']],
    [['lint', 'ok.sop', '--skills', 'throws.mjs']],
    [['lint', 'sub']],
    [['lint', 'sub/*.sop']],
    [['lint', 'missing.sop']],
    [['lint', 'nomatch*.sop']],
    [['lint', 'empty']],
    [['lint', 'notutf8.sop', 'ok.sop']],
    [['lint', 'cfg/p.sop']],
    [['lint', 'badcfg/p.sop']],
    [['lint', 'ok.sop', '--skills', 'nothere.json']],
    [['lint', '-'], '@a assign 1\n@b echo $zz\n'],
    [['lint', '--format', 'xml', 'ok.sop']],
    [['lint', '--bogus', 'ok.sop']],
    [['lint', '--max-warnings', 'x', 'ok.sop']],
    [['lint', '--help']],
  ];

  it.each(cases.map(([args, input]) => ({ args, input: input ?? '' })))('lightsop $args', ({ args, input }) => {
    const fast = run(BIN, args, dir, input);
    const full = run(MAIN, args, dir, input);
    expect(fast).toEqual(full);
  }, 60_000);
});
