// Issue 10 items 1, 2, 3, 10 and 12 for `lightsop run` (and `lint --skills`): no silent success, no
// lost result. Commands that never settle or ignore their signal, skills modules that never finish
// loading, hostile values, long reasons and object values, through the built binary where the
// process itself matters. Tests wait for states (a line the skill prints when it started), never
// for a fixed time.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, ensureBuilt, lightsop, repoRoot, tempTree } from '../helpers/cli';

/** Skills: `quick` answers at once, `never` returns a promise nothing will ever settle, `stubborn`
 * prints STARTED on stderr and then ignores its signal for ten minutes. */
const skills = `
export default {
  quick: { description: 'answers', run: (args) => 'quick ' + args.join(' ') },
  never: { description: 'never settles', run: () => new Promise(() => {}) },
  stubborn: { description: 'ignores its signal', run: async (args, ctx) => {
    process.stderr.write('STARTED ' + ctx.variable + '\\n');
    await new Promise((resolve) => setTimeout(resolve, 600000));
    return 'too late';
  } },
  polite: { description: 'stops on its signal', run: (args, ctx) => new Promise((resolve, reject) => {
    process.stderr.write('STARTED ' + ctx.variable + '\\n');
    const timer = setTimeout(() => resolve('finished'), 600000);
    ctx.signal.addEventListener('abort', () => { clearTimeout(timer); reject(new Error('stopped by the signal')); });
  }) },
  nullproto: { description: 'throws a null-prototype object', run: () => { throw Object.create(null); } },
  object: { description: 'returns an object', run: () => ({ a: 1, b: [1, 2], big: 10n ** 20n }) },
  cyclic: { description: 'returns a cyclic object', run: () => { const o = { name: 'loop' }; o.self = o; return o; } },
  long: { description: 'fails with a long reason', run: () => { throw new Error('L'.repeat(300) + ' END'); } },
  multiline: { description: 'fails with lines', run: () => { throw new Error('first line\\n  second line\\nthird line'); } },
};`;

const hostileRegistry = `
export default {
  listCommands: () => [{ name: 'quick', description: 'q' }, { name: 'bad', description: 'b' }, { name: 'proxy', description: 'p' }],
  executeCommand(p, r) {
    if (p.command === 'quick') return r.success('ok');
    if (p.command === 'bad') return { raw: 'r', get status() { throw new Error('status getter'); } };
    const trap = () => { throw new Error('trapped'); };
    throw new Proxy({}, { get: trap, getPrototypeOf: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap });
  },
};`;

const bin = path.join(repoRoot, 'packages/cli/bin/lightsop.js');

interface Running {
  child: ChildProcessWithoutNullStreams;
  /** Resolves once stderr has matched `pattern` (it has printed that state). */
  stderrMatches(pattern: RegExp): Promise<void>;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

function start(args: string[], cwd: string, env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', ...env } });
  let stdout = '';
  let stderr = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
    for (const w of waiters.splice(0)) {
      if (w.pattern.test(stderr)) w.resolve();
      else waiters.push(w);
    }
  });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return {
    child,
    done,
    stderrMatches: (pattern) => new Promise<void>((resolve, reject) => {
      if (pattern.test(stderr)) return resolve();
      waiters.push({ pattern, resolve });
      void done.then(() => reject(new Error(`exited before stderr matched ${pattern}: ${stderr}`)));
    }),
  };
}

describe('lightsop run: commands that never settle (item 1)', () => {
  beforeAll(() => ensureBuilt());

  it('reports a never-settling command as failed, prints what finished and exits 1 (text, --json, --timeout)', () => {
    const dir = tempTree({ 's.mjs': skills, 'p.sop': '@a quick x\n@b never\n@c quick $b\n@d quick y\n' });
    const text = lightsop(['run', 'p.sop', '--skills', 's.mjs'], { cwd: dir });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('✓ @a  success   quick x');
    expect(text.stdout).toContain('✓ @d  success   quick y');
    expect(text.stdout).toMatch(/✗ @b {2}fail {6}never finished: its promise was still pending with nothing left that could settle it/);
    expect(text.stdout).toMatch(/4 variables: 2 succeeded, 1 failed, 0 canceled, 1 not run/);
    expect(text.stderr).toContain('lightsop: @b never finished');
    for (const extra of [[], ['--timeout', '5m']]) {
      const json = lightsop(['run', 'p.sop', '--skills', 's.mjs', '--json', ...extra], { cwd: dir });
      expect(json.code).toBe(1);
      const out = JSON.parse(json.stdout);
      expect(out.variables.a).toEqual({ status: 'success', value: 'quick x' });
      expect(out.variables.b.status).toBe('fail');
      expect(out.variables.b.value).toMatch(/^never finished/);
      expect(out.variables.c).toEqual({ status: 'undefined', value: 'waiting for b' });
      expect(out.failures).toEqual([{ variable: 'b', reason: out.variables.b.value }]);
      expect(out.commands).toEqual(expect.arrayContaining(['quick x', 'never', 'quick y']));
    }
  }, 120000);

  it('a skills module whose top-level await never settles: one line naming it, exit 3 for run and 2 for lint', () => {
    const dir = tempTree({ 'hang.mjs': 'await new Promise(() => {});\nexport default { quick: { description: "q", run: () => "ok" } };\n', 'p.sop': '@a quick x\n' });
    const run = lightsop(['run', 'p.sop', '--skills', 'hang.mjs'], { cwd: dir });
    expect([run.code, run.stdout]).toEqual([3, '']);
    expect(run.stderr).toBe('lightsop: hang.mjs: the skills module never finished loading: its top-level await was still pending with nothing left that could settle it\n');
    const lint = lightsop(['lint', 'p.sop', '--skills', 'hang.mjs'], { cwd: dir });
    expect(lint.code).toBe(2);
    expect(lint.stderr).toContain('hang.mjs: the skills module never finished loading');
  }, 120000);

  it('a skills module still loading after LIGHTSOP_SKILLS_TIMEOUT is an error naming it and the variable, and nothing hangs', () => {
    // The module keeps the process busy (an interval) and never finishes its top-level await.
    const dir = tempTree({ 'busy.mjs': 'setInterval(() => {}, 1000);\nawait new Promise(() => {});\nexport default {};\n', 'p.sop': '@a quick x\n' });
    for (const [command, code] of [['run', 3], ['lint', 2]] as const) {
      const res = lightsop([command, 'p.sop', '--skills', 'busy.mjs'], { cwd: dir, env: { LIGHTSOP_SKILLS_TIMEOUT: '1s' } });
      expect(res.code).toBe(code);
      expect(res.stderr).toBe('lightsop: busy.mjs: the skills module did not finish loading within 1 s (LIGHTSOP_SKILLS_TIMEOUT sets the limit)\n');
    }
    const bad = lightsop(['run', 'p.sop', '--skills', 'busy.mjs'], { cwd: dir, env: { LIGHTSOP_SKILLS_TIMEOUT: 'soon' } });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('LIGHTSOP_SKILLS_TIMEOUT: expected a positive duration');
  }, 120000);
});

describe('lightsop run: commands that ignore the abort signal (item 2)', () => {
  beforeAll(() => ensureBuilt());

  it('--timeout stops waiting after the grace: the stubborn command is canceled, never a success, exit 1', () => {
    const dir = tempTree({ 's.mjs': skills, 'p.sop': '@a quick x\n@s stubborn\n@t quick $s\n' });
    // The skill sleeps ten minutes; the spawn's own 60 s limit turns any wait for it into a failure.
    const res = lightsop(['run', 'p.sop', '--skills', 's.mjs', '--json', '--timeout', '1s'], { cwd: dir });
    expect(res.code).toBe(1);
    const out = JSON.parse(res.stdout);
    expect(out.variables.a).toEqual({ status: 'success', value: 'quick x' });
    expect(out.variables.s).toEqual({ status: 'canceled', value: 'command stubborn canceled (did not stop within 2 s of the signal)' });
    expect(out.variables.t).toEqual({ status: 'canceled', value: 'because command stubborn canceled (did not stop within 2 s of the signal) via s' });
    expect(res.stderr).toContain('timed out after 1000 ms');
    expect(res.stderr).toContain('@s did not stop within 2 s of the signal');
  }, 120000);

  it('--grace sets how long; a command that honours its signal is not reported as left running', () => {
    const dir = tempTree({ 's.mjs': skills, 'p.sop': '@p polite\n@s stubborn\n' });
    const res = lightsop(['run', 'p.sop', '--skills', 's.mjs', '--json', '--timeout', '500ms', '--grace', '1500ms'], { cwd: dir });
    expect(res.code).toBe(1);
    const out = JSON.parse(res.stdout);
    expect(out.variables.p).toEqual({ status: 'fail', value: 'stopped by the signal' });
    expect(out.variables.s).toEqual({ status: 'canceled', value: 'command stubborn canceled (did not stop within 1.5 s of the signal)' });
  }, 120000);

  it('Ctrl-C: after the grace the run prints what finished and exits 1', async () => {
    const dir = tempTree({ 's.mjs': skills, 'p.sop': '@a quick x\n@s stubborn\n' });
    const run = start(['run', 'p.sop', '--skills', 's.mjs', '--json', '--grace', '500ms'], dir);
    await run.stderrMatches(/STARTED s/);
    run.child.kill('SIGINT');
    const res = await run.done;
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('interrupted');
    const out = JSON.parse(res.stdout);
    expect(out.variables.a).toEqual({ status: 'success', value: 'quick x' });
    expect(out.variables.s).toEqual({ status: 'canceled', value: 'command stubborn canceled (did not stop within 0.5 s of the signal)' });
  }, 120000);

  it('a second Ctrl-C prints what finished, then exits 130', async () => {
    const dir = tempTree({ 's.mjs': skills, 'p.sop': '@a quick x\n@s stubborn\n' });
    const run = start(['run', 'p.sop', '--skills', 's.mjs', '--json', '--grace', '10m'], dir);
    await run.stderrMatches(/STARTED s/);
    run.child.kill('SIGINT');
    await run.stderrMatches(/interrupted; waiting up to 600 s/);
    run.child.kill('SIGINT');
    const res = await run.done;
    expect(res.code).toBe(130);
    const out = JSON.parse(res.stdout);
    expect(out.variables.a).toEqual({ status: 'success', value: 'quick x' });
    expect(out.variables.s).toEqual({ status: 'canceled', value: 'command stubborn canceled (interrupted twice)' });
    expect(out.commands).toEqual(expect.arrayContaining(['quick x', 'stubborn']));
  }, 120000);

  it('a second Ctrl-C in text mode prints the summary too', async () => {
    const dir = tempTree({ 's.mjs': skills, 'p.sop': '@a quick x\n@s stubborn\n' });
    const run = start(['run', 'p.sop', '--skills', 's.mjs', '--grace', '10m'], dir);
    await run.stderrMatches(/STARTED s/);
    run.child.kill('SIGINT');
    await run.stderrMatches(/interrupted; waiting/);
    run.child.kill('SIGINT');
    const res = await run.done;
    expect(res.code).toBe(130);
    expect(res.stdout).toContain('✓ @a  success   quick x');
    expect(res.stdout).toContain('⊘ @s  canceled  command stubborn canceled (interrupted twice)');
  }, 120000);
});

describe('lightsop run: hostile values (item 3)', () => {
  beforeAll(() => ensureBuilt());

  it('a thrown null-prototype object, a throwing status getter and a thrown hostile Proxy each fail their own command', () => {
    const dir = tempTree({ 's.mjs': skills, 'r.mjs': hostileRegistry, 'p.sop': '@a quick x\n@b nullproto\n', 'q.sop': '@a quick\n@b bad\n@c proxy\n' });
    const map = lightsop(['run', 'p.sop', '--skills', 's.mjs', '--json'], { cwd: dir });
    expect(map.code).toBe(1);
    expect(JSON.parse(map.stdout).variables).toEqual({ a: { status: 'success', value: 'quick x' }, b: { status: 'fail', value: '[object Object]' } });
    const reg = lightsop(['run', 'q.sop', '--skills', 'r.mjs'], { cwd: dir });
    expect(reg.code).toBe(1);
    expect(reg.stdout).toContain('✓ @a  success   ok');
    expect(reg.stdout).toContain('✗ @b  fail      invalid result from executeCommand (reading it threw: status getter)');
    expect(reg.stdout).toContain('✗ @c  fail      [value that cannot be converted to text]');
    expect(reg.stderr).toBe('');
  }, 120000);
});

describe('lightsop run and lint: hostile skills modules (item 3)', () => {
  beforeAll(() => ensureBuilt());

  it('a listCommands whose list throws on every access, or a description that cannot be converted, is an empty or a usable list', () => {
    const dir = tempTree({
      'list.mjs': `const trap = () => { throw Object.create(null); };
export default { listCommands: () => new Proxy([], { get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap }), executeCommand: (p, r) => r.success('ok') };`,
      'desc.mjs': 'export default { quick: { description: Object.create(null), run: () => "ok" } };',
      'p.sop': '@a quick\n',
    });
    const run = lightsop(['run', 'p.sop', '--skills', 'list.mjs', '--json'], { cwd: dir });
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(JSON.parse(run.stdout).variables.a).toEqual({ status: 'success', value: 'ok' });
    const lint = lightsop(['lint', 'p.sop', '--skills', 'list.mjs', '--format', 'json'], { cwd: dir });
    expect(lint.code).toBe(1);
    expect(JSON.parse(lint.stdout)[0].diagnostics.map((d: { code: string }) => d.code)).toContain('unknown-command');
    const desc = lightsop(['lint', 'p.sop', '--skills', 'desc.mjs'], { cwd: dir });
    expect([desc.code, desc.stderr]).toEqual([0, '']);
  }, 120000);

  it('a module whose top-level code throws a null-prototype object or undefined: one line naming it, exit 3', () => {
    const dir = tempTree({ 'np.mjs': 'throw Object.create(null);\n', 'un.mjs': 'throw undefined;\n', 'p.sop': '@a quick\n' });
    expect(lightsop(['run', 'p.sop', '--skills', 'np.mjs'], { cwd: dir })).toEqual({ code: 3, stdout: '', stderr: 'lightsop: np.mjs: cannot load the skills module: [object Object]\n' });
    expect(lightsop(['run', 'p.sop', '--skills', 'un.mjs'], { cwd: dir })).toEqual({ code: 3, stdout: '', stderr: 'lightsop: un.mjs: cannot load the skills module: undefined\n' });
  }, 120000);
});

describe('lightsop run: text output (items 10 and 12)', () => {
  it('without a terminal, reasons are never cut and multi-line reasons are printed in full', async () => {
    const dir = tempTree({ 's.mjs': skills, 'p.sop': '@l long\n@m multiline\n@q quick x\n' });
    const res = await cli(['run', 'p.sop', '--skills', 's.mjs'], { cwd: dir });
    expect(res.code).toBe(1);
    expect(res.stdout).toContain(`✗ @l  fail      ${'L'.repeat(300)} END\n`);
    expect(res.stdout).toContain('✗ @m  fail      first line second line third line\n');
    expect(res.stdout).toContain('\nFailures in full:\n@m: first line\n      second line\n    third line\n');
    // A reason its row shows verbatim is not repeated.
    expect(res.stdout).not.toContain('@l: L');
  });

  it('on a terminal, the board cuts rows to the width and the full reasons follow it', async () => {
    const dir = tempTree({ 's.mjs': skills, 'p.sop': '@l long\n@q quick x\n' });
    const res = await cli(['run', 'p.sop', '--skills', 's.mjs'], { cwd: dir, isTTY: true });
    expect(res.stdout).toMatch(/@l {2}fail {6}L+…\n/);
    const after = res.stdout.slice(res.stdout.lastIndexOf('Failures in full:'));
    expect(after).toContain(`@l: ${'L'.repeat(300)} END\n`);
  });

  it('object values print as JSON in text output (cycles and BigInt included) and keep String() in --json', async () => {
    const dir = tempTree({ 's.mjs': skills, 'p.sop': '@o object\n@c cyclic\n' });
    const text = await cli(['run', 'p.sop', '--skills', 's.mjs'], { cwd: dir });
    expect(text.stdout).toContain('✓ @o  success   {"a":1,"b":[1,2],"big":100000000000000000000}');
    expect(text.stdout).toContain('✓ @c  success   {"name":"loop","self":"[Circular]"}');
    const json = await cli(['run', 'p.sop', '--skills', 's.mjs', '--json'], { cwd: dir });
    expect(JSON.parse(json.stdout).variables.o).toEqual({ status: 'success', value: '[object Object]' });
  });

  it('--timeout must be a positive duration, and --grace a duration', async () => {
    const dir = tempTree({ 'p.sop': '@a assign x\n' });
    for (const value of ['0', '0s', '0ms', '0.0', '-1', 'NaN', '-5s', '99999999999']) {
      const res = await cli(['run', 'p.sop', '--timeout', value], { cwd: dir });
      expect([res.code, res.stdout]).toEqual([3, '']);
      expect(res.stderr).toMatch(/^lightsop: option '--timeout <duration>' argument '.*' is invalid\. expected a positive duration/);
    }
    expect((await cli(['run', 'p.sop', '--grace', 'later'], { cwd: dir })).code).toBe(3);
    expect((await cli(['run', 'p.sop', '--grace', '0', '--timeout', '1m', '--json'], { cwd: dir })).code).toBe(0);
  });
});
