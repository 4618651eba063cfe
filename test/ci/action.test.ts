/**
 * The GitHub Action (action.yml) and the pre-commit hooks (.pre-commit-hooks.yaml) run as their
 * files declare them (issue 15 item 7): the test reads the YAML and runs every step's script with
 * GitHub's bash invocation, its env and working directory (expressions evaluated from the inputs,
 * the action path, the runner's temp folder and earlier steps' outputs), skipping only the SARIF
 * upload, which needs GitHub; and runs each hook's entry on the staged plans of a git repository,
 * as pre-commit does.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, repoRoot, tempTree } from '../helpers/cli';

interface Step { name: string; id?: string; if?: string; uses?: string; run?: string; shell?: string; env?: Record<string, string>; 'working-directory'?: string; with?: Record<string, string> }
interface Action { inputs: Record<string, { default?: string }>; runs: { using: string; steps: Step[] } }

const action = parse(readFileSync(path.join(repoRoot, 'action.yml'), 'utf8')) as Action;

/** Runs the action's steps as GitHub would; returns each step's exit code and output. */
function runAction(inputs: Record<string, string>, temp: string): { name: string; code: number; stdout: string; stderr: string }[] {
  const values: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.inputs)) values[name] = inputs[name] ?? spec.default ?? '';
  const outputs: Record<string, Record<string, string>> = {};
  const evaluate = (text: string) => text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_m, expr: string) => {
    if (expr === 'github.action_path') return repoRoot;
    if (expr === 'runner.temp') return temp;
    let m = /^inputs\.([\w-]+)$/.exec(expr);
    if (m) return values[m[1]!] ?? '';
    m = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr);
    if (m) return outputs[m[1]!]?.[m[2]!] ?? '';
    throw new Error(`action.yml uses an expression this test cannot evaluate: ${expr}`);
  });
  const results: { name: string; code: number; stdout: string; stderr: string }[] = [];
  for (const [i, step] of action.runs.steps.entries()) {
    if (step.uses !== undefined) {
      // The only step that needs GitHub itself.
      expect(step.uses).toMatch(/^github\/codeql-action\/upload-sarif@/);
      continue;
    }
    expect(step.if, `${step.name}: a run step runs unconditionally`).toBeUndefined();
    expect(step.shell).toBe('bash');
    const script = path.join(temp, `step-${i}.sh`);
    writeFileSync(script, step.run!);
    const outputFile = path.join(temp, `output-${i}`);
    writeFileSync(outputFile, '');
    const env: Record<string, string> = { ...process.env as Record<string, string>, NO_COLOR: '1', GITHUB_OUTPUT: outputFile, GITHUB_ACTION_PATH: repoRoot, RUNNER_TEMP: temp };
    for (const [k, v] of Object.entries(step.env ?? {})) env[k] = evaluate(String(v));
    const cwd = path.resolve(temp, evaluate(step['working-directory'] ?? '.'));
    // GitHub runs `shell: bash` as `bash --noprofile --norc -eo pipefail {0}`.
    const res = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], { cwd, env, encoding: 'utf8', timeout: 120_000 });
    if (step.id) {
      const stepOutputs: Record<string, string> = {};
      for (const line of readFileSync(outputFile, 'utf8').split('\n')) {
        const eq = line.indexOf('=');
        if (eq > 0) stepOutputs[line.slice(0, eq)] = line.slice(eq + 1);
      }
      outputs[step.id] = stepOutputs;
    }
    results.push({ name: step.name, code: res.status ?? -1, stdout: res.stdout, stderr: res.stderr });
    // A failing step ends the job (no later step has `if: always()` but the upload).
    if (res.status !== 0) break;
  }
  return results;
}

beforeAll(() => ensureBuilt());

describe('action.yml', () => {
  it('is a composite action whose steps lint (SARIF and annotations), upload, test and decide', () => {
    expect(action.runs.using).toBe('composite');
    expect(action.runs.steps.map((s) => s.name)).toEqual(['Build lightsop', 'Lint plans', 'Upload lint results to code scanning', 'Test plans', 'Result']);
  });

  it('on clean plans with passing tests: every step succeeds, the SARIF is written, the JUnit report too', () => {
    const dir = tempTree({
      'work/plans/hello.sop': '@name assign "Ada"\n@lastAnswer assign Hello $name\n',
      'work/plans/hello.sop.test.json': JSON.stringify({ tests: [{ name: 'greets', expect: { lastAnswer: 'Hello Ada' }, failures: [] }] }),
    });
    const steps = runAction({ 'working-directory': 'work', paths: 'plans', junit: 'junit.xml' }, dir);
    expect(steps.map((s) => [s.name, s.code])).toEqual([['Build lightsop', 0], ['Lint plans', 0], ['Test plans', 0], ['Result', 0]]);
    const sarif = JSON.parse(readFileSync(path.join(dir, 'lightsop.sarif'), 'utf8')) as { version: string; runs: { results: unknown[] }[] };
    expect(sarif.version).toBe('2.1.0');
    expect(sarif.runs[0]!.results).toEqual([]);
    expect(steps[2]!.stdout).toMatch(/1 test: 1 passed, 0 failed/);
    expect(readFileSync(path.join(dir, 'work/junit.xml'), 'utf8')).toMatch(/^<\?xml[^]*<testsuites name="lightsop test" tests="1" failures="0"/);
  });

  it('on a plan with an error and a failing test: annotations and SARIF name it, the tests still run, the job fails', () => {
    const dir = tempTree({
      'bad.sop': '@a assign x\n@b assign $missing\n',
      'ok.sop': '@c assign y\n',
      'ok.sop.test.json': JSON.stringify({ tests: [{ name: 'wrong on purpose', expect: { c: 'z' } }] }),
    });
    const steps = runAction({}, dir);
    expect(steps.map((s) => [s.name, s.code])).toEqual([['Build lightsop', 0], ['Lint plans', 0], ['Test plans', 0], ['Result', 1]]);
    expect(steps[1]!.stdout).toMatch(/^::error file=bad\.sop,line=2,.*undefined-variable/m);
    const sarif = JSON.parse(readFileSync(path.join(dir, 'lightsop.sarif'), 'utf8')) as { runs: { results: { ruleId: string }[] }[] };
    expect(sarif.runs[0]!.results.map((r) => r.ruleId)).toContain('undefined-variable');
    expect(steps[2]!.stdout).toMatch(/ok\.sop\.test\.json:1:\d+: @c: expected value "z", got "y"/);
    expect(steps[3]!.stdout).toMatch(/::error title=lightsop::lint exited 1, test exited 1/);
  });
});

describe('.pre-commit-hooks.yaml', () => {
  interface Hook { id: string; entry: string; language: string; files: string; pass_filenames?: boolean }
  const hooks = parse(readFileSync(path.join(repoRoot, '.pre-commit-hooks.yaml'), 'utf8')) as Hook[];

  /** A git repository with the project's lightsop installed (as npm would link it) and staged files. */
  function repo(files: Record<string, string>): string {
    const dir = tempTree({ 'package.json': '{ "name": "plans", "private": true }\n', ...files });
    mkdirSync(path.join(dir, 'node_modules/.bin'), { recursive: true });
    symlinkSync(path.join(repoRoot, 'packages/cli/bin/lightsop.js'), path.join(dir, 'node_modules/.bin/lightsop'));
    const git = (...args: string[]) => expect(spawnSync('git', args, { cwd: dir, encoding: 'utf8' }).status).toBe(0);
    git('init', '-q');
    git('add', ...Object.keys(files));
    return dir;
  }

  /** Runs a hook as pre-commit does: its entry, then the staged files its `files` pattern selects. */
  function runHook(id: string, dir: string): { code: number; out: string } {
    const hook = hooks.find((h) => h.id === id)!;
    const staged = spawnSync('git', ['diff', '--cached', '--name-only'], { cwd: dir, encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    const selected = staged.filter((f) => new RegExp(hook.files).test(f));
    const [command, ...args] = hook.entry.split(/\s+/);
    const res = spawnSync(command!, [...args, ...(hook.pass_filenames === false ? [] : selected)], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 });
    return { code: res.status ?? -1, out: res.stdout + res.stderr };
  }

  it('declares lint and fmt --check on .sop files', () => {
    expect(hooks.map((h) => [h.id, h.files])).toEqual([['lightsop-lint', '\\.sop$'], ['lightsop-fmt', '\\.sop$']]);
  });

  it('lint passes clean staged plans and fails a broken one, naming it', () => {
    expect(runHook('lightsop-lint', repo({ 'a.sop': '@a assign x\n', 'notes.txt': 'not a plan' })).code).toBe(0);
    const bad = runHook('lightsop-lint', repo({ 'a.sop': '@a assign $nope\n' }));
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/a\.sop:1:\d+: error: .*\[undefined-variable\]/);
  });

  it('fmt --check fails an unformatted staged plan, naming it, and passes once formatted', () => {
    const dir = repo({ 'messy.sop': '@a    assign x\n', 'tidy.sop': '@b assign y\n' });
    const messy = runHook('lightsop-fmt', dir);
    expect(messy.code).toBe(1);
    expect(messy.out).toMatch(/messy\.sop: not formatted/);
    expect(messy.out).not.toMatch(/tidy\.sop/);
    writeFileSync(path.join(dir, 'messy.sop'), '@a assign x\n');
    expect(runHook('lightsop-fmt', dir).code).toBe(0);
  });
});
