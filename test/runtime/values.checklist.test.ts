// Spec section 10, items 58-79: values, outcomes and execution.
import { describe, expect, it } from 'vitest';
import { DefaultExecutionMonitor, Interpreter, type RunEvent } from '@lightsop/runtime';
// An internal of the runtime, tested directly.
import { createValue } from '../../packages/runtime/src/values';
import { runPlan, testRegistry } from '../helpers/registry';
import { deferred, nextTurn } from '../helpers/sync';

describe('values and outcomes', () => {
  it('58: public forms of the four statuses, and undefined for an unknown name', async () => {
    const registry = testRegistry({ nothing: () => undefined });
    const { interpreter } = await runPlan('@s emit hi\n@f failer\n@c canceler\n@u nothing\n@w emit $f', { registry });
    expect(interpreter.getVarValue('s')).toBe('hi');
    expect(interpreter.getVarValue('f')).toBe('fail:oops');
    expect(interpreter.getVarValue('c')).toBe('canceled:command canceler canceled (nope)');
    expect(interpreter.getVarValue('u')).toBe('undefined:command returned no response');
    expect(interpreter.getVarValue('w')).toBe('undefined:waiting for f');
    expect(interpreter.getVarValue('missing')).toBeUndefined();
    interpreter.setValue('s', 'undefined', '');
    expect(interpreter.getVarValue('s')).toBe('undefined');
  });
  it("59: fail('') and fail() give fail:unknown failure", async () => {
    const registry = testRegistry({ a: (_p, r) => r.fail(''), b: (_p, r) => r.fail() });
    const { interpreter } = await runPlan('@a a\n@b b', { registry });
    expect([interpreter.getVarValue('a'), interpreter.getVarValue('b')]).toEqual(['fail:unknown failure', 'fail:unknown failure']);
  });
  it("60: a thrown Error('') gives fail: and a thrown string gives its text", async () => {
    const registry = testRegistry({ e: () => { throw new Error(''); }, s: () => { throw 'x'; } });
    const { interpreter } = await runPlan('@e e\n@s s', { registry });
    expect([interpreter.getVarValue('e'), interpreter.getVarValue('s')]).toEqual(['fail:', 'fail:x']);
  });
  it("61: cancel('') names the command and says no reason was provided", async () => {
    const registry = testRegistry({ stopper: (_p, r) => r.cancel('') });
    const { interpreter } = await runPlan('@x stopper', { registry });
    expect(interpreter.getVarValue('x')).toBe('canceled:command stopper canceled (no reason provided)');
  });
  it('62: the guard example of 5.5', async () => {
    const registry = testRegistry({ guard: (_p, r) => r.cancel('guard disabled'), task: (_p, r) => r.success('t'), finalize: (_p, r) => r.success('f') });
    const { interpreter } = await runPlan('@feature guard off\n@taskA   task $feature body\n@final   finalize $taskA', { registry });
    expect(interpreter.getVarValue('feature')).toBe('canceled:command guard canceled (guard disabled)');
    expect(interpreter.getVarValue('taskA')).toBe('canceled:because command guard canceled (guard disabled) via feature');
    expect(interpreter.getVarValue('final')).toBe('canceled:because command guard canceled (guard disabled) via taskA');
    expect(registry.log).toEqual(['guard off']);
  });
  it('63: returning a bare string is an invalid result', async () => {
    const { interpreter } = await runPlan('@x bare', { registry: testRegistry({ bare: () => 'text' }) });
    expect(interpreter.getVarValue('x')).toBe('fail:invalid result from executeCommand');
  });
  it('64: returning nothing leaves the variable undefined, blocks dependents and counts no failure', async () => {
    const monitor = new DefaultExecutionMonitor();
    const { interpreter, registry } = await runPlan('@a nothing\n@b emit $a', { registry: testRegistry({ nothing: () => undefined }), executionMonitor: monitor });
    expect(interpreter.getVarValue('a')).toBe('undefined:command returned no response');
    expect(interpreter.getVarValue('b')).toBe('undefined:waiting for a');
    expect(registry.log).toEqual(['nothing']);
    expect(monitor.getStats().failureCounts).toEqual({});
  });
  it('65: the last responder value is used when nothing is returned', async () => {
    const registry = testRegistry({
      a: (_p, r) => { r.success('s'); return null; },
      b: (_p, r) => { r.success('s'); r.fail('later'); },
    });
    const { interpreter } = await runPlan('@a a\n@b b', { registry });
    expect([interpreter.getVarValue('a'), interpreter.getVarValue('b')]).toEqual(['s', 'fail:later']);
  });
  it('66: an exception becomes a failure with its message and counts once', async () => {
    const monitor = new DefaultExecutionMonitor();
    const { interpreter } = await runPlan('@x boom', { registry: testRegistry({ boom: () => { throw new Error('kaput'); } }), executionMonitor: monitor });
    expect(interpreter.getVarValue('x')).toBe('fail:kaput');
    expect(monitor.getStats().failureCounts).toEqual({ boom: 1 });
  });
  it("67 (Q15): a returned { status: 'cancelled' } is a cancellation that propagates; an unknown status is invalid", async () => {
    const registry = testRegistry({
      custom: () => ({ status: 'cancelled', raw: 'x', data: 'custom' }),
      weird: () => ({ status: 'done', raw: 'x', data: 'd' }),
    });
    const { interpreter } = await runPlan('@a custom\n@b emit $a\n@w weird', { registry });
    expect(interpreter.getVarValue('a')).toBe('canceled:custom');
    expect(interpreter.getVarValue('b')).toBe('canceled:because command a canceled (custom) via a');
    expect(interpreter.getVarValue('w')).toBe('fail:invalid result from executeCommand');
  });
  it('68: a canceled value without a root cause names the variable downstream', async () => {
    const registry = testRegistry({ custom: () => createValue('canceled', 'custom', 'test') });
    const { interpreter } = await runPlan('@a custom\n@b emit $a', { registry });
    expect(interpreter.getVarValue('b')).toBe('canceled:because command a canceled (custom) via a');
  });
  it('69: timestamps of successive values strictly increase', () => {
    const stamps = Array.from({ length: 1000 }, () => createValue('success', 'x', 't').timestamp);
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]!).toBeGreaterThan(stamps[i - 1]!);
  });
});

describe('execution', () => {
  it('70: a chain runs once each, in order', async () => {
    const { registry, interpreter } = await runPlan('@source emit foo\n@middle combine $source bar\n@final combine $source $middle');
    expect(registry.log).toEqual(['emit foo', 'combine foo bar', 'combine foo foo+bar']);
    expect(interpreter.getVarValue('final')).toBe('foo+foo+bar');
  });
  it('71: a failed step blocks its dependents; onFail receives the failure', async () => {
    const calls: unknown[] = [];
    const { interpreter } = await runPlan('@broken failer\n@after emit $broken', { onFail: (f) => calls.push(f) });
    expect(interpreter.getVarValue('after')).toBe('undefined:waiting for broken');
    expect(calls).toEqual([[{ variable: 'broken', reason: 'fail:oops' }]]);
  });
  it('72: a failure does not stop independent declarations', async () => {
    const { interpreter } = await runPlan('@a failer\n@b emit ok\n@c emit $b');
    expect(interpreter.getVarValue('c')).toBe('ok');
  });
  it('73: two independent asynchronous commands both start before either settles', async () => {
    const events: string[] = [];
    const registry = testRegistry({
      slow: async (p, r) => {
        events.push(`start ${p.variable}`);
        await nextTurn();
        events.push(`end ${p.variable}`);
        return r.success(p.variable);
      },
    });
    await runPlan('@a slow\n@b slow', { registry });
    expect(events.slice(0, 2)).toEqual(['start a', 'start b']);
  });
  it('74: roots start in name order by UTF-16 code units', async () => {
    const { registry } = await runPlan('@zeta emit 1\n@alpha emit 2\n@Zed emit 3\n@_u emit 4\n@a10 emit 5\n@a9 emit 6');
    expect(registry.log).toEqual(['emit 3', 'emit 4', 'emit 5', 'emit 6', 'emit 2', 'emit 1']);
  });
  it('75: fan-out from roots follows level then name order', async () => {
    const { registry } = await runPlan('@a emit 1\n@b emit 2\n@z1 combine $a\n@y1 combine $b');
    expect(registry.log).toEqual(['emit 1', 'emit 2', 'combine 2', 'combine 1']);
  });
  it('76: dataflow: a dependent of a fast command starts before a slow one settles', async () => {
    // @s settles only once @g has started: a scheduler that waited for it would never finish.
    const events: string[] = [];
    const depStarted = deferred();
    const registry = testRegistry({
      slow: async (_p, r) => { await depStarted.promise; events.push('slow settled'); return r.success('s'); },
      fast: async (_p, r) => { await nextTurn(); return r.success('f'); },
      dep: (_p, r) => { events.push('dep started'); depStarted.resolve(); return r.success('d'); },
    });
    await runPlan('@s slow\n@f fast\n@g dep $f', { registry });
    expect(events).toEqual(['dep started', 'slow settled']);
  });
  it('77: a repeated reference runs once and passes the value each time', async () => {
    const { registry, interpreter } = await runPlan('@a emit x\n@b combine $a $a $a');
    expect(registry.log).toEqual(['emit x', 'combine x x x']);
    expect(interpreter.getVarValue('b')).toBe('x+x+x');
  });
  it('78: failing and canceling ancestors: the outcome that arrives last wins', async () => {
    // The commands settle in the order the test chooses: the second is released only after the
    // first one's value has been stored.
    const outcome = async (first: 'a' | 'b') => {
      const release = { a: deferred(), b: deferred() };
      const bothStarted = deferred();
      let started = 0;
      const startedOne = () => (++started === 2 ? bothStarted.resolve() : undefined);
      const settled = { a: deferred(), b: deferred() };
      const registry = testRegistry({
        f: async (_p, r) => { startedOne(); await release.a.promise; return r.fail('oops'); },
        k: async (_p, r) => { startedOne(); await release.b.promise; return r.cancel('nope'); },
      });
      const onEvent = (e: RunEvent) => {
        if (e.type === 'variable-settled' && (e.variable === 'a' || e.variable === 'b')) settled[e.variable].resolve();
      };
      const interpreter = new Interpreter({ registry, onEvent });
      const run = interpreter.updateCode('@a f\n@b k\n@c combine $a $b');
      await bothStarted.promise;
      const second = first === 'a' ? 'b' : 'a';
      release[first].resolve();
      await settled[first].promise;
      release[second].resolve();
      await run;
      return interpreter.getVarValue('c');
    };
    expect(await outcome('a')).toBe('canceled:because command k canceled (nope) via b');
    expect(await outcome('b')).toBe('undefined:upstream a');
  });
  it('79: an exception thrown by onFail does not reject the update', async () => {
    await expect(runPlan('@a failer', { onFail: () => { throw new Error('host bug'); } })).resolves.toBeTruthy();
  });
  it('the payload carries variable, line, comments (a copy) and the abort signal', async () => {
    const { registry } = await runPlan('# Describe\n@info emit alpha # inline');
    const p = registry.payloads[0]!;
    expect(p).toMatchObject({ command: 'emit', args: ['alpha'], raw: 'emit alpha', variable: 'info', lineNumber: 2, comment: 'Describe\ninline', commentLines: ['Describe', 'inline'] });
  });
  it('a concurrency limit runs at most N commands at once, in start order', async () => {
    let running = 0;
    let peak = 0;
    const registry = testRegistry({ work: async (p, r) => { running++; peak = Math.max(peak, running); await nextTurn(); running--; return r.success(p.variable); } });
    const plan = Array.from({ length: 12 }, (_, i) => `@v${String(i).padStart(2, '0')} work`).join('\n');
    const interpreter = new Interpreter({ registry, concurrency: 3 });
    await interpreter.updateCode(plan);
    expect(peak).toBe(3);
    expect(registry.log).toHaveLength(12);
  });
  it('non-string success data is passed on unchanged (Q16)', async () => {
    const registry = testRegistry({ obj: (_p, r) => r.success({ n: 1 }), read: (p, r) => r.success(typeof p.args[0]) });
    const { interpreter, registry: reg } = await runPlan('@a obj\n@b read $a', { registry });
    expect(interpreter.getVarValue('b')).toBe('object');
    expect(reg.log).toEqual(['obj', 'read [object Object]']);
  });
});
