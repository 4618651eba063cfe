// The plan debugger's adapter driven through Debug Adapter Protocol messages in-process, as VS Code
// drives an inline adapter: launch, breakpoints, stop on entry, next, continue, pause, variables,
// evaluate, disconnect, and the launches that must not start (invalid plan, refused skills).
import { afterEach, describe, expect, it } from 'vitest';
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { CommandPayload, Responder } from '@lightsop/runtime';
import { LaunchError, type PlanSkills } from '../../extension/src/debug/adapter';
import { testRegistry, type TestRegistry } from '../helpers/registry';
import { DapClient, FakeHost, PLAN_PATH, table } from './dap-client';

const text = (args: unknown[]) => args.map(String).join(' ');

/** A command that runs until the test releases it (or the run is aborted). */
function gate() {
  let release!: (value: string) => void;
  let started!: () => void;
  const startedP = new Promise<void>((r) => { started = r; });
  const handler = (p: CommandPayload, r: Responder) => new Promise<string>((resolve, reject) => {
    started();
    release = resolve;
    p.signal?.addEventListener('abort', () => reject(new Error('aborted')));
  }).then((value) => r.success(value));
  return { handler, started: startedP, release: (v: string) => release(v) };
}

function registry(extra: Record<string, (p: CommandPayload, r: Responder) => unknown> = {}): TestRegistry {
  const wrap = (f: (args: unknown[]) => unknown) => (p: CommandPayload, r: Responder) => r.success(f(p.args));
  return testRegistry({
    greet: wrap((a) => `Hello, ${text(a)}!`),
    upper: wrap((a) => text(a).toUpperCase()),
    word_count: wrap((a) => String(text(a).split(/\s+/).filter(Boolean).length)),
    final_answer: wrap((a) => text(a)),
    lines: wrap((a) => Array.from({ length: Number(a[0]) }, (_, i) => `line ${i + 1}`).join('\n')),
    repeat: wrap((a) => 'abcdefghij'.repeat(Number(a[0]) / 10)),
    ...extra,
  });
}

const HELLO = [
  '# Greet someone by name', //              1
  '@name     assign "Ada Lovelace"', //       2
  '@greeting greet $name', //                 3
  '', //                                      4
  '# Shout it', //                            5
  '@shout    upper $greeting', //             6
  '@count    word_count $greeting', //        7
  '@lastAnswer final_answer $shout', //       8
  '',
].join('\n');

let client: DapClient | null = null;
function session(plan: string, reg: TestRegistry = registry(), refuse: LaunchError | null = null): DapClient {
  client = new DapClient(new FakeHost(plan, reg, refuse));
  return client;
}

afterEach(async () => {
  // A test that failed half-way must not leave a run waiting at a pause.
  if (client) await client.request('disconnect', {}).catch(() => undefined);
  client = null;
});

describe('breakpoints', () => {
  const PLAN = [
    '# a letter', //                  1
    '@letter assign', //              2
    '--begin-L--', //                 3
    'Dear $name,', //                 4
    '# not a comment here', //        5
    '', //                            6
    '--end-L--', //                   7
    '@note upper $letter', //         8
    '  keep it short', //             9
    '', //                           10
    '@x upper $note', //             11
  ].join('\n');

  it('moves a breakpoint on a block line to its header and leaves blank and comment lines unverified', async () => {
    const c = session(PLAN);
    const bps = await c.start({ stopOnEntry: true }, [2, 4, 5, 6, 9, 1, 10, 11, 40]);
    const placed = bps.body.breakpoints.map((b) => [b.verified, b.line, b.message ?? '']);
    expect(placed.map(([v, l]) => [v, l])).toEqual([
      [true, 2], [true, 2], [true, 2], [true, 2], [true, 8], [false, 1], [false, 10], [true, 11], [false, 40],
    ]);
    expect(placed[5]![2]).toMatch(/comment line holds no step/);
    expect(placed[6]![2]).toMatch(/blank line holds no step/);
    expect(placed[8]![2]).toMatch(/not in the plan/);
    expect(new Set(bps.body.breakpoints.map((b) => b.id)).size).toBe(9);
    await c.stoppedAt();

    const other = await c.ok<DebugProtocol.SetBreakpointsResponse>('setBreakpoints', { source: { path: '/work/plans/other.sop' }, breakpoints: [{ line: 2 }] });
    expect(other.body.breakpoints[0]).toMatchObject({ verified: false, message: expect.stringContaining('Not the plan being debugged (plan.sop)') });
  });

  it('stops at the header of a breakpoint set on a continuation line, naming the breakpoint', async () => {
    const c = session(PLAN);
    const bps = await c.start({}, [9]);
    const stop = await c.stoppedAt();
    expect(stop.reason).toBe('breakpoint');
    expect(stop.frame).toMatchObject({ name: '@note upper', line: 8, source: { path: PLAN_PATH } });
    expect(stop.hit).toEqual([bps.body.breakpoints[0]!.id]);
    await c.ok('continue', { threadId: 1 });
    await c.nextEvent('terminated');
    expect(c.host.store.get('x')).toMatchObject({ status: 'success', value: expect.stringContaining('DEAR $NAME,') });
  });
});

describe('stepping', () => {
  it('stops on entry before anything starts; Next runs the paused declaration and pauses before the next one', async () => {
    const reg = registry();
    const c = session(HELLO, reg);
    await c.start({ stopOnEntry: true });
    let stop = await c.stoppedAt();
    expect(stop.reason).toBe('entry');
    expect(stop.frame).toMatchObject({ name: '@name assign', line: 2, source: { name: 'plan.sop', path: PLAN_PATH } });
    expect((await c.ok<DebugProtocol.ThreadsResponse>('threads')).body.threads).toEqual([{ id: 1, name: 'plan' }]);
    expect(table(await c.scope(/^Plan$/))).toMatchObject({ name: 'paused · not started yet' });
    // A hover on a variable that has no result yet shows its status and reason, not a value.
    const hover = await c.ok<DebugProtocol.EvaluateResponse>('evaluate', { expression: '$greeting', context: 'hover', frameId: 1 });
    expect(hover.body).toMatchObject({ result: 'undefined · waiting for name', type: 'undefined' });
    expect((await c.ok<DebugProtocol.EvaluateResponse>('evaluate', { expression: '@name', context: 'hover', frameId: 1 })).body.result).toBe('paused · not started yet');

    await c.ok('next', { threadId: 1 });
    stop = await c.stoppedAt();
    expect(stop).toMatchObject({ reason: 'step', frame: { name: '@greeting greet', line: 3 } });
    expect(table(await c.scope(/^Plan$/))).toMatchObject({ name: 'success · Ada Lovelace', greeting: 'paused · not started yet' });
    expect(reg.log).toEqual([]);

    // @greeting settles first; then @count and @shout are ready and @count (by name) comes first.
    await c.ok('stepIn', { threadId: 1 });
    stop = await c.stoppedAt();
    expect(stop).toMatchObject({ reason: 'step', frame: { name: '@count word_count', line: 7 } });
    const vars = table(await c.scope(/^Plan$/));
    expect(vars).toMatchObject({ greeting: 'success · Hello, Ada Lovelace!', count: 'paused · not started yet', shout: 'ready · waiting for the debugger' });
    expect(reg.log).toEqual(['greet Ada Lovelace']);

    await c.ok('continue', { threadId: 1 });
    expect((await c.nextEvent<DebugProtocol.ExitedEvent>('exited')).body.exitCode).toBe(0);
    await c.nextEvent('terminated');
    expect([...c.host.store.values()].map((s) => `${s.name}=${s.status}`)).toEqual([
      'name=success', 'greeting=success', 'shout=success', 'count=success', 'lastAnswer=success',
    ]);
    expect(c.host.store.get('lastAnswer')?.value).toBe('HELLO, ADA LOVELACE!');
  });

  it('starts nothing while paused: an independent ready declaration waits too', async () => {
    const g = gate();
    const reg = registry({ wait: g.handler });
    const c = session('@a assign 1\n@b wait x\n@c upper $a\n', reg);
    await c.start({ stopOnEntry: true });
    expect((await c.stoppedAt()).frame.name).toBe('@a assign');
    expect(table(await c.scope(/^Plan$/))).toMatchObject({ a: 'paused · not started yet', b: 'ready · waiting for the debugger' });
    expect(reg.log).toEqual([]);
    await c.ok('continue', { threadId: 1 });
    await g.started;
    g.release('done');
    await c.nextEvent('terminated');
    expect(table([...c.host.store.values()].map((s) => ({ name: s.name, value: `${s.status}:${s.value}`, variablesReference: 0 })))).toEqual({
      a: 'success:1', b: 'success:done', c: 'success:1',
    });
  });

  it('Continue runs to the next breakpoint, including one set while paused', async () => {
    const c = session(HELLO);
    await c.start({ stopOnEntry: true });
    await c.stoppedAt();
    const bps = await c.ok<DebugProtocol.SetBreakpointsResponse>('setBreakpoints', { source: { path: PLAN_PATH }, breakpoints: [{ line: 8 }] });
    await c.ok('continue', { threadId: 1 });
    const stop = await c.stoppedAt();
    expect(stop).toMatchObject({ reason: 'breakpoint', frame: { name: '@lastAnswer final_answer', line: 8 }, hit: [bps.body.breakpoints[0]!.id] });
    expect(table(await c.scope(/^Plan$/))).toMatchObject({ shout: 'success · HELLO, ADA LOVELACE!', count: 'success · 3' });
    await c.ok('continue', { threadId: 1 });
    await c.nextEvent('terminated');
  });

  it('Pause pauses before the next declaration that starts', async () => {
    const g = gate();
    const c = session('@start assign go\n@wait slow $start\n@after upper $wait\n', registry({ slow: g.handler }));
    await c.start({});
    await g.started;
    await c.ok('pause', { threadId: 1 });
    g.release('later');
    const stop = await c.stoppedAt();
    expect(stop).toMatchObject({ reason: 'pause', frame: { name: '@after upper', line: 3 } });
    expect(table(await c.scope(/^Plan$/))).toMatchObject({ start: 'success · go', wait: 'success · later' });
    await c.ok('continue', { threadId: 1 });
    await c.nextEvent('terminated');
    expect(c.host.store.get('after')).toMatchObject({ status: 'success', value: 'LATER' });
  });
});

describe('variables', () => {
  it('shows every variable with its status, the paused declaration\'s arguments, and long values expandable', async () => {
    const plan = [
      '@poem lines 3', //            1
      '@long repeat 300', //         2
      '@after upper $poem $long', // 3
      '  first extra line', //       4
      '  second extra line', //      5
      '',
    ].join('\n');
    const c = session(plan);
    await c.start({}, [3]);
    expect((await c.stoppedAt()).frame.line).toBe(3);
    const scopes = (await c.ok<DebugProtocol.ScopesResponse>('scopes', { frameId: 1 })).body.scopes.map((s) => s.name);
    expect(scopes).toEqual(['Plan', 'Arguments of @after']);

    const plan_ = await c.scope(/^Plan$/);
    const poem = plan_.find((v) => v.name === 'poem')!;
    expect(poem).toMatchObject({ value: 'success · line 1 line 2 line 3', type: 'success', evaluateName: '$poem' });
    expect(poem.variablesReference).toBeGreaterThan(0);
    const lines = (await c.ok<DebugProtocol.VariablesResponse>('variables', { variablesReference: poem.variablesReference })).body.variables;
    expect(table(lines)).toEqual({ 1: 'line 1', 2: 'line 2', 3: 'line 3', length: '20 characters, 3 lines' });

    const long = plan_.find((v) => v.name === 'long')!;
    expect(long.value.startsWith('success · abcdefghij')).toBe(true);
    expect(long.value.endsWith('…')).toBe(true);
    expect(long.value.length).toBeLessThanOrEqual('success · '.length + 100);
    expect(long.variablesReference).toBeGreaterThan(0);
    // Copy Value asks for the clipboard text: the whole value.
    const copied = await c.ok<DebugProtocol.EvaluateResponse>('evaluate', { expression: long.evaluateName, context: 'clipboard', frameId: 1 });
    expect(copied.body.result).toBe('abcdefghij'.repeat(30));
    const hover = await c.ok<DebugProtocol.EvaluateResponse>('evaluate', { expression: 'poem', context: 'hover', frameId: 1 });
    expect(hover.body.result).toBe('line 1\nline 2\nline 3');
    const missing = await c.request('evaluate', { expression: '$nope', context: 'watch', frameId: 1 });
    expect(missing.success).toBe(false);
    expect(missing.message).toMatch(/No variable nope in plan\.sop/);

    const args = await c.scope(/^Arguments/);
    expect(args.map((v) => v.name)).toEqual(['$poem', '$long', '#3']);
    expect(args[0]).toMatchObject({ value: 'success · line 1 line 2 line 3' });
    expect(args[2]).toMatchObject({ value: '"first extra line second extra line"', type: 'literal' });
    const extra = (await c.ok<DebugProtocol.VariablesResponse>('variables', { variablesReference: args[2]!.variablesReference })).body.variables;
    expect(table(extra)).toMatchObject({ 1: '  first extra line', 2: '  second extra line' });

    await c.ok('continue', { threadId: 1 });
    await c.nextEvent('terminated');
  });

  it('gives the implicit $input the launch argument', async () => {
    const c = session('@echo upper $input\n');
    await c.start({ input: 'quiet words' });
    await c.nextEvent('terminated');
    expect(c.host.store.get('echo')).toMatchObject({ status: 'success', value: 'QUIET WORDS' });
  });
});

describe('output and results', () => {
  it('logs each start and settle to the Debug Console with its line, and feeds the results store as it goes', async () => {
    const c = session(HELLO);
    await c.start({});
    await c.nextEvent('terminated');
    const out = c.output();
    expect(out).toContain('[debug] ');
    expect(out).toContain('plan.sop (skills: test registry)');
    expect(out).toContain('… @greeting greet Ada Lovelace\n');
    expect(out).toContain('✓ @greeting success Hello, Ada Lovelace!\n');
    expect(out).toMatch(/plan\.sop: 5 variables: 5 succeeded, 0 failed, 0 canceled, 0 not run; 5 commands ran/);
    const greetStart = c.events.find((e) => e.event === 'output' && (e as DebugProtocol.OutputEvent).body.output.startsWith('… @greeting')) as DebugProtocol.OutputEvent;
    expect(greetStart.body).toMatchObject({ category: 'stdout', line: 3, source: { path: PLAN_PATH } });
    // The store was cleared at the start (a fresh interpreter), saw @greeting running before it
    // saw it succeed, and got a final reset with every variable.
    expect(c.host.published[0]).toEqual({ states: [], reset: true });
    const greetStates = c.host.published.flatMap((p) => p.states.filter((s) => s.name === 'greeting').map((s) => s.status));
    expect(greetStates).toContain('running');
    expect(c.host.published.at(-1)).toMatchObject({ reset: true });
    expect(c.host.published.at(-1)!.states).toHaveLength(5);
  });
});

describe('stopping', () => {
  it('Disconnect while paused aborts the run: the paused declaration never starts, settled values are kept', async () => {
    const reg = registry();
    const c = session(HELLO, reg);
    await c.start({}, [6]);
    expect((await c.stoppedAt()).frame.name).toBe('@shout upper');
    await c.ok('disconnect', { restart: false });
    expect(reg.log).not.toContain('upper Hello, Ada Lovelace!');
    await c.nextEvent('terminated');
    expect((await c.nextEvent<DebugProtocol.ExitedEvent>('exited')).body.exitCode).toBe(1);
    expect(c.host.store.get('greeting')).toMatchObject({ status: 'success', value: 'Hello, Ada Lovelace!' });
    expect(c.host.store.get('shout')?.status).toBe('undefined');
    expect(c.host.store.get('lastAnswer')?.status).toBe('undefined');
    expect(c.output()).toMatch(/plan\.sop: stopped; 5 variables: \d succeeded/);
  });

  it('disposing the adapter (VS Code ended the session) aborts a paused run', async () => {
    const reg = registry();
    const c = session(HELLO, reg);
    await c.start({ stopOnEntry: true });
    await c.stoppedAt();
    c.adapter.dispose();
    await c.nextEvent('terminated');
    expect(reg.log).toEqual([]);
    expect([...c.host.store.values()].every((s) => s.status === 'undefined')).toBe(true);
  });

  it('Disconnect while a command runs aborts it through its signal', async () => {
    const g = gate();
    const c = session('@start assign go\n@wait slow $start\n@after upper $wait\n', registry({ slow: g.handler }));
    await c.start({});
    await g.started;
    await c.ok('disconnect', {});
    await c.nextEvent('terminated');
    expect(c.host.store.get('start')).toMatchObject({ status: 'success', value: 'go' });
    expect(c.host.store.get('wait')?.status).not.toBe('success');
    expect(c.host.store.get('after')?.status).toBe('undefined');
  });
});

describe('launches that do not start', () => {
  it('an invalid plan fails the launch with its first error as file:line:col and runs nothing', async () => {
    const reg = registry();
    const c = session('@name assign Ada\n@hello greet $nmae\n@bye greet $nobody\n', reg);
    await c.ok('initialize', { adapterID: 'lightsoplang', pathFormat: 'path', linesStartAt1: true, columnsStartAt1: true });
    const launch = await c.request('launch', { program: PLAN_PATH });
    expect(launch.success).toBe(false);
    expect(launch.message).toMatch(/^plan\.sop:2:14: .*nmae.* \[undefined-variable\] \(and 1 more error\): nothing was run\.$/);
    expect((launch.body as { error: DebugProtocol.Message }).error).toMatchObject({ showUser: true, url: 'command:workbench.actions.view.problems', urlLabel: 'Show Problems' });
    await c.nextEvent('terminated');
    expect(c.events.some((e) => e.event === 'initialized')).toBe(false);
    // Every error in the Debug Console (clickable paths); the dialog has the first one.
    expect(c.output().split('\n').filter(Boolean).map((l) => l.split(': ')[0])).toEqual([`${PLAN_PATH}:2:14`, `${PLAN_PATH}:3:12`]);
    expect(c.host.loadSkillsCalls).toBe(0);
    expect(reg.log).toEqual([]);
  });

  it('a refused skills module (untrusted workspace) fails the launch with the host\'s message and action', async () => {
    const message = 'The skills module skills.mjs was not loaded because this workspace is not trusted: importing a skills module runs its code. Trust the workspace (Manage Workspace Trust) to run plans with it.';
    const c = session(HELLO, registry(), new LaunchError(message, { label: 'Manage Workspace Trust', command: 'workbench.trust.manage' }));
    await c.ok('initialize', { adapterID: 'lightsoplang', pathFormat: 'path' });
    const launch = await c.request('launch', { program: PLAN_PATH });
    expect(launch).toMatchObject({ success: false, message });
    expect((launch.body as { error: DebugProtocol.Message }).error).toMatchObject({ format: '{message}', variables: { message }, url: 'command:workbench.trust.manage' });
    expect(c.output()).toBe(`${message}\n`);
    await c.nextEvent('terminated');
  });

  it('an unexpected failure after the launch answered is said in the Debug Console and ends the session', async () => {
    // DebugSession does not await its handlers: a throw in the launch once the plan was accepted
    // was an unhandled rejection in the extension host, with the session left open.
    class BrokenSkillsHost extends FakeHost {
      override async loadSkills(): Promise<PlanSkills> {
        return {
          registry: registry(),
          get note(): string {
            throw new Error('simulated bug: the skills note cannot be read');
          },
        };
      }
    }
    const c = new DapClient(new BrokenSkillsHost(HELLO, registry()));
    client = c;
    await c.start({});
    await c.nextEvent('terminated');
    expect(c.output()).toContain('[debug] launch failed: simulated bug: the skills note cannot be read\n');
  });

  it('an #!english script is refused: it has no declarations until a model writes them', async () => {
    const c = session('#!english\nGreet Ada.\n');
    await c.ok('initialize', { adapterID: 'lightsoplang', pathFormat: 'path' });
    const launch = await c.request('launch', { program: PLAN_PATH });
    expect(launch.success).toBe(false);
    expect(launch.message).toMatch(/plan\.sop is an #!english script.*Use Run Plan/);
  });
});
