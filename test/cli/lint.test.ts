// `lightsop lint`: formats, exit codes, config discovery and clear errors (contract.md).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DIAGNOSTIC_CODES } from '@lightsop/core';
import { cli, ensureBuilt, lightsop, tempTree } from '../helpers/cli';

const bad = '@a emit $zz\n@b emit "abc\n@c assign text\n';

describe('lightsop lint', () => {
  it('prints the contract JSON with 1-based exclusive-end positions, in check order', async () => {
    const dir = tempTree({ 'bad.sop': bad, 'good.sop': '@a emit x\n@lastAnswer final_answer $a\n' });
    const res = await cli(['lint', 'bad.sop', 'good.sop', '--format', 'json'], { cwd: dir });
    expect(res.code).toBe(1);
    const out = JSON.parse(res.stdout);
    expect(out.map((f: { file: string }) => f.file)).toEqual(['bad.sop', 'good.sop']);
    expect(out[0].diagnostics.map((d: { code: string; line: number }) => `${d.code}@${d.line}`)).toEqual([
      'unterminated-string@2', 'undefined-variable@1', 'unused-variable@1', 'unused-variable@2', 'unused-variable@3',
    ]);
    expect(out[0].diagnostics[0]).toMatchObject({ severity: 'error', line: 2, column: 9, endLine: 2, endColumn: 13 });
    expect(out[1].diagnostics).toEqual([]);
  });

  it('text output: one grep-friendly line per diagnostic off a terminal, code frames on one', async () => {
    const dir = tempTree({ 'bad.sop': bad });
    const plain = await cli(['lint', 'bad.sop'], { cwd: dir });
    expect(plain.stdout).toContain("bad.sop:1:9: error: Variable 'zz' is not declared (used by 'a') [undefined-variable]");
    expect(plain.stdout).toMatch(/1 file checked: 2 errors, 1 warning, 2 infos/);
    const tty = await cli(['lint', 'bad.sop'], { cwd: dir, isTTY: true });
    expect(tty.stdout).toContain('error[undefined-variable]');
    expect(tty.stdout).toContain(' --> bad.sop:1:9');
    expect(tty.stdout).toContain('1 | @a emit $zz');
    expect(tty.stdout).toContain('        ^^^');
  });

  it('SARIF 2.1.0 with one rule per code and located results', async () => {
    const dir = tempTree({ 'plans/bad plan.sop': bad });
    const res = await cli(['lint', 'plans', '--format', 'sarif'], { cwd: dir });
    const log = JSON.parse(res.stdout);
    expect(log.version).toBe('2.1.0');
    const run = log.runs[0];
    expect(run.tool.driver.rules.map((r: { id: string }) => r.id)).toEqual(DIAGNOSTIC_CODES.map((c) => c.code));
    const result = run.results.find((r: { ruleId: string }) => r.ruleId === 'undefined-variable');
    expect(result.level).toBe('error');
    expect(run.tool.driver.rules[result.ruleIndex].id).toBe('undefined-variable');
    expect(result.locations[0].physicalLocation).toEqual({
      artifactLocation: { uri: 'plans/bad%20plan.sop', uriBaseId: '%SRCROOT%' },
      region: { startLine: 1, startColumn: 9, endLine: 1, endColumn: 12 },
    });
    expect(run.results.find((r: { ruleId: string; level: string }) => r.ruleId === 'unused-variable' && r.level === 'note')).toBeTruthy();
  });

  it('GitHub workflow annotations', async () => {
    const dir = tempTree({ 'bad.sop': bad });
    const res = await cli(['lint', 'bad.sop', '--format', 'github'], { cwd: dir });
    expect(res.stdout).toContain("::error file=bad.sop,line=1,endLine=1,col=9,endColumn=12,title=lightsop(undefined-variable)::Variable 'zz' is not declared (used by 'a')");
    expect(res.stdout).toContain('::notice file=bad.sop,line=1');
    expect(res.stdout).toContain('::warning file=bad.sop,line=3');
  });

  it('--max-warnings and --quiet', async () => {
    const dir = tempTree({ 'w.sop': '@a assign x\n@b emit y\n' });
    expect((await cli(['lint', 'w.sop'], { cwd: dir })).code).toBe(0);
    expect((await cli(['lint', 'w.sop', '--max-warnings', '1'], { cwd: dir })).code).toBe(0);
    expect((await cli(['lint', 'w.sop', '--max-warnings', '0'], { cwd: dir })).code).toBe(1);
    const quiet = await cli(['lint', 'w.sop', '--quiet', '--format', 'json', '--max-warnings', '0'], { cwd: dir });
    expect(JSON.parse(quiet.stdout)[0].diagnostics).toEqual([]);
    expect(quiet.code).toBe(0);
  });

  it('folders, globs and the config: skills from lightsop.config.json, "plans" when no paths are given', async () => {
    const dir = tempTree({
      'lightsop.config.json': '{ "skills": "./skills.json", "plans": ["plans/**/*.sop"] }',
      'skills.json': '{ "fetch": "Downloads a page" }',
      'plans/a.sop': '@a fetch x\n',
      'plans/sub/b.sop': '@b fecth x\n',
      'other.sop': '@c nothing x\n',
    });
    const res = await cli(['lint', '--format', 'json'], { cwd: dir });
    const out = JSON.parse(res.stdout);
    expect(out.map((f: { file: string }) => f.file)).toEqual(['plans/a.sop', 'plans/sub/b.sop']);
    expect(out[1].diagnostics[0]).toMatchObject({ code: 'unknown-command', line: 1, column: 4 });
    expect(res.code).toBe(1);
    const glob = await cli(['lint', '**/b.sop', '--format', 'json', '--skills', 'skills.json'], { cwd: dir });
    expect(JSON.parse(glob.stdout).map((f: { file: string }) => f.file)).toEqual(['plans/sub/b.sop']);
  });

  it('a skills module works as --skills', async () => {
    const dir = tempTree({
      'skills.mjs': 'export default { emit: { description: "Echo", run: (args) => args.join(" ") } };',
      'p.sop': '@a emit x\n@b emot y\n',
    });
    const res = await cli(['lint', 'p.sop', '--skills', 'skills.mjs', '--format', 'json'], { cwd: dir });
    expect(JSON.parse(res.stdout)[0].diagnostics.filter((d: { code: string }) => d.code === 'unknown-command')).toHaveLength(1);
  });

  it('bad input: clear one-line errors and the contract exit codes', async () => {
    const dir = tempTree({
      'p.sop': '@a emit x\n',
      'bad/lightsop.config.json': '{ "skils": "./x.json" }',
      'bad/q.sop': '@a emit x\n',
      'badjson.json': '{ "emit": 3 }',
    });
    const missing = await cli(['lint', 'nope.sop'], { cwd: dir });
    expect([missing.code, missing.stderr]).toEqual([2, 'lightsop: nope.sop: no such file or directory\n']);
    const glob = await cli(['lint', 'none/*.sop'], { cwd: dir });
    expect(glob.code).toBe(2);
    const flag = await cli(['lint', 'p.sop', '--format', 'xml'], { cwd: dir });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("argument 'xml' is invalid");
    const config = await cli(['lint', 'bad/q.sop'], { cwd: dir });
    expect(config.code).toBe(3);
    expect(config.stderr).toContain('lightsop.config.json: unknown field "skils" (did you mean "skills"?)');
    const skills = await cli(['lint', 'p.sop', '--skills', 'badjson.json'], { cwd: dir });
    expect(skills.code).toBe(2);
    expect(skills.stderr).toContain('badjson.json: field "emit" must be a string');
    for (const r of [missing, glob, flag, config, skills]) expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('the built binary', () => {
  beforeAll(() => ensureBuilt());

  it('lints standard input and strips a leading BOM', () => {
    const res = lightsop(['lint', '-', '--format', 'json'], { input: '\uFEFF@a emit $b\n' });
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout)).toEqual([{ file: '<stdin>', diagnostics: expect.any(Array) }]);
    expect(JSON.parse(res.stdout)[0].diagnostics[0]).toMatchObject({ code: 'undefined-variable', line: 1, column: 9 });
  });

  it('lints the examples cleanly', () => {
    const res = lightsop(['lint', 'examples']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(readFileSync(path.join(__dirname, '../../examples/lightsop.config.json'), 'utf8')).toContain('skills');
  });
});
