// Spec section 10, items 80-106: updates, input, auto-cancel and the monitor; plus abort,
// progress events, "run up to here" and incremental re-runs of a large plan.
import { describe, expect, it } from 'vitest';
import {
  DefaultExecutionMonitor, Interpreter, PlanValidationError, UnlimitedExecutionMonitor, cancelHeuristic, type RunEvent,
} from '@lightsop/runtime';
import { runPlan, testRegistry } from '../helpers/registry';
import { deferred, nextTurn, type Deferred } from '../helpers/sync';

async function session(extra = {}, options = {}) {
  const registry = testRegistry(extra);
  const interpreter = new Interpreter({ registry, ...options });
  const apply = async (code: string) => {
    const before = registry.log.length;
    await interpreter.updateCode(code);
    return registry.log.slice(before);
  };
  return { registry, interpreter, apply };
}

describe('updates', () => {
  it('80: applying the same code again runs nothing', async () => {
    const { apply } = await session();
    await apply('@a emit 1\n@b combine $a x');
    expect(await apply('@a emit 1\n@b combine $a x')).toEqual([]);
  });
  it('81: adding a declaration runs only that declaration', async () => {
    const { apply } = await session();
    await apply('@a emit 1\n@b combine $a x');
    expect(await apply('@a emit 1\n@b combine $a x\n@aux emit aux')).toEqual(['emit aux']);
  });
  it('82: comments, blank lines, order and quoting style change nothing', async () => {
    const { apply } = await session();
    await apply('@a emit "one"\n@b combine $a x');
    expect(await apply('# a comment\n@b combine $a \'x\' # inline\n\n@a emit one')).toEqual([]);
  });
  it('83: a changed declaration re-runs with its dependents, even when its value is unchanged', async () => {
    const registry = testRegistry({ upper: (p, r) => r.success(String(p.args[0]).toUpperCase()) });
    const interpreter = new Interpreter({ registry });
    await interpreter.updateCode('@a upper x\n@b combine $a y');
    registry.log.length = 0;
    await interpreter.updateCode('@a upper X\n@b combine $a y');
    expect(registry.log).toEqual(['upper X', 'combine X y']);
  });
  it('84: removing a declaration deletes its variable and keeps the others', async () => {
    const { interpreter, apply } = await session();
    await apply('@a emit 1\n@b emit 2');
    expect(await apply('@a emit 1')).toEqual([]);
    expect(interpreter.getVarValue('b')).toBeUndefined();
    expect(interpreter.getVarValue('a')).toBe('1');
  });
  it('85 (Q5): removing a declaration that is still referenced is rejected and nothing changes', async () => {
    const { interpreter, apply } = await session();
    await apply('@a emit 1\n@b combine $a');
    await expect(interpreter.updateCode('@b combine $a')).rejects.toBeInstanceOf(PlanValidationError);
    expect(interpreter.getVarValue('a')).toBe('1');
    expect(interpreter.getVarValue('b')).toBe('1');
    await expect(interpreter.updateCode('@b combine $a')).rejects.toMatchObject({ diagnostics: [expect.objectContaining({ code: 'undefined-variable' })] });
  });
  it('86 (Q5): after a rejected update, the next valid one applies fully', async () => {
    const { interpreter, apply } = await session();
    await apply('@a emit 1');
    await expect(interpreter.updateCode('@a emit 2\n@b emit $zz')).rejects.toThrow();
    await apply('@a emit 2\n@b emit x');
    expect(interpreter.getVarValue('a')).toBe('2');
  });
  it('87: a failed declaration is not retried by an unchanged update, and onFail reports it again', async () => {
    const reports: unknown[] = [];
    const { apply } = await session({}, { onFail: (f: unknown) => reports.push(f) });
    expect(await apply('@a failer\n@b emit ok')).toEqual(['failer', 'emit ok']);
    expect(await apply('@a failer\n@b emit ok')).toEqual([]);
    expect(reports).toHaveLength(2);
  });
  it('88: a canceled declaration runs again on the next update; once it succeeds, its dependents run', async () => {
    let ready = false;
    const { interpreter, apply } = await session({
      mode: (_p: unknown, r: { cancel(x: string): unknown; success(x: string): unknown }) => (ready ? r.success('ready') : r.cancel('not ready')),
      task: (p: { args: unknown[] }, r: { success(x: string): unknown }) => r.success(`job with ${p.args[0]}`),
    });
    const plan = '@mode mode initial\n@job task $mode payload';
    expect(await apply(plan)).toEqual(['mode initial']);
    expect(interpreter.getVarValue('job')).toBe('canceled:because command mode canceled (not ready) via mode');
    ready = true;
    expect(await apply(plan)).toEqual(['mode initial', 'task ready payload']);
    expect(interpreter.getVarValue('job')).toBe('job with ready');
  });
  it('89: replacing a canceling command by a succeeding one restores the dependents', async () => {
    const { interpreter, apply } = await session();
    await apply('@a canceler\n@b combine $a x');
    expect(await apply('@a emit fine\n@b combine $a x')).toEqual(['emit fine', 'combine fine x']);
    expect(interpreter.getVarValue('b')).toBe('fine+x');
  });
  it('90: an update that introduces a cancel runs it once and cancels its dependents', async () => {
    const { interpreter, apply } = await session();
    await apply('@a emit 1\n@b combine $a x');
    expect(await apply('@a canceler\n@b combine $a x')).toEqual(['canceler']);
    expect(interpreter.getVarValue('b')).toBe('canceled:because command canceler canceled (nope) via a');
  });
  it('91: final_answer, cannot_complete and lastAnswer run again on every update, with their dependents', async () => {
    const { apply } = await session({
      final_answer: (p: { args: unknown[] }, r: { success(x: unknown): unknown }) => r.success(p.args[0]),
      cannot_complete: (p: { args: unknown[] }, r: { success(x: unknown): unknown }) => r.success(p.args[0]),
    });
    const plan = '@a emit 1\n@f final_answer $a\n@g emit $f\n@c cannot_complete why\n@lastAnswer emit done';
    await apply(plan);
    expect((await apply(plan)).sort()).toEqual(['cannot_complete why', 'emit 1', 'emit done', 'final_answer 1'].sort());
  });
  it('92: a declaration that returned no response is retried by the next update', async () => {
    let answer = false;
    const { interpreter, apply } = await session({ maybe: (_p: unknown, r: { success(x: string): unknown }) => (answer ? r.success('yes') : undefined) });
    await apply('@a maybe');
    answer = true;
    expect(await apply('@a maybe')).toEqual(['maybe']);
    expect(interpreter.getVarValue('a')).toBe('yes');
  });
  it('93: a dependency given a newer value with the same text makes dependents run (stale dependency)', async () => {
    const { interpreter, apply } = await session();
    await apply('@a emit 1\n@b combine $a x');
    interpreter.setValue('a', 'success', '1');
    expect(await apply('@a emit 1\n@b combine $a x')).toEqual(['combine 1 x']);
  });
  it('runAgain: after setValue, a run without an update runs the stale dependents and resets nothing', async () => {
    const { interpreter, registry } = await session();
    await interpreter.updateCode('@a emit 1\n@b combine $a x\n@lastAnswer emit done');
    registry.log.length = 0;
    expect((await interpreter.runAgain()).commands).toEqual([]);
    interpreter.setValue('a', 'success', '2');
    expect((await interpreter.runAgain()).commands).toEqual(['combine 2 x']);
    expect(interpreter.getVarValue('b')).toBe('2+x');
    expect(registry.log).toEqual(['combine 2 x']);
  });
  it('the second run after a failure says dependency failure (reason texts depend on history)', async () => {
    const { interpreter, apply } = await session();
    await apply('@a failer\n@b emit $a');
    expect(interpreter.getVarValue('b')).toBe('undefined:waiting for a');
    await apply('@a failer\n@b emit $a');
    expect(interpreter.getVarValue('b')).toBe('undefined:dependency failure a');
  });
  it('updates are serialised: the next one starts only after the previous run has settled', async () => {
    // Each command settles only when the test says so, and logs its start and its end.
    const events: string[] = [];
    const started = new Map<string, Deferred>();
    const release = new Map<string, Deferred>();
    const { interpreter } = await session({
      slow: async (p: { args: unknown[] }, r: { success(x: unknown): unknown }) => {
        const n = String(p.args[0]);
        events.push(`start ${n}`);
        started.get(n)!.resolve();
        await release.get(n)!.promise;
        events.push(`end ${n}`);
        return r.success(n);
      },
    });
    for (const n of ['1', '2']) {
      started.set(n, deferred());
      release.set(n, deferred());
    }
    const first = interpreter.updateCode('@a slow 1');
    const second = interpreter.updateCode('@a slow 2');
    await started.get('1')!.promise;
    // Whatever the second update could do on its own has had its chance: it must still wait.
    await nextTurn();
    await nextTurn();
    expect(events).toEqual(['start 1']);
    expect(interpreter.ready).toBe(second);
    release.get('1')!.resolve();
    await first;
    expect(interpreter.getVarValue('a')).toBe('1');
    await started.get('2')!.promise;
    release.get('2')!.resolve();
    await second;
    expect(events).toEqual(['start 1', 'end 1', 'start 2', 'end 2']);
    expect(interpreter.getVarValue('a')).toBe('2');
  });
});

describe('input', () => {
  it('94: $input refers to the supplied input', async () => {
    const { registry } = await runPlan('@result emit $input', { input: 'payload-value' });
    expect(registry.log).toEqual(['emit payload-value']);
  });
  it('95 (Q7): a declared @input takes the input and its command does not run', async () => {
    const { registry, interpreter } = await runPlan('@input emit declared\n@r emit $input', { input: 'given' });
    expect(registry.log).toEqual(['emit given']);
    expect(interpreter.getVarValue('input')).toBe('given');
  });
  it('without an input, $input is undefined-variable and nothing runs', async () => {
    const interpreter = new Interpreter({ registry: testRegistry() });
    await expect(interpreter.updateCode('@r emit $input')).rejects.toMatchObject({ diagnostics: [expect.objectContaining({ code: 'undefined-variable' })] });
  });
  it('the implicit input is kept across updates and listed in snapshots', async () => {
    const { interpreter } = await runPlan('@r emit $input', { input: '' });
    await interpreter.updateCode('@r emit $input\n@s emit 2');
    expect(interpreter.snapshot().map((v) => v.name)).toEqual(['r', 'input', 's']);
  });
});

describe('auto-cancel', () => {
  const produce = (text: unknown) => testRegistry({ produce: (_p, r) => r.success(text) });
  it('96: off by default', async () => {
    const { interpreter } = await runPlan('@x produce', { registry: produce('Canceled: maintenance window') });
    expect(interpreter.getVarValue('x')).toBe('Canceled: maintenance window');
  });
  it('97: when enabled, cancellation words in success data cancel', async () => {
    const { interpreter } = await runPlan('@x produce', { registry: produce('Canceled: maintenance window'), autoCancel: true });
    expect(interpreter.getVarValue('x')).toBe('canceled:command produce canceled (maintenance window)');
    const viaRegistry = await runPlan('@x produce', { registry: testRegistry({ produce: (_p, r) => r.success('CANCELLED - quota') }, { autoCancel: true }) });
    expect(viaRegistry.interpreter.getVarValue('x')).toBe('canceled:command produce canceled (quota)');
  });
  it('98: an object status cancels; a later update that succeeds gives the data', async () => {
    let cancel = true;
    const registry = testRegistry({ task: (_p, r) => r.success(cancel ? { status: 'cancel', reason: 'quota exceeded' } : 'done') });
    const interpreter = new Interpreter({ registry, autoCancel: true });
    await interpreter.updateCode('@t task');
    expect(interpreter.getVarValue('t')).toBe('canceled:command task canceled (quota exceeded)');
    cancel = false;
    await interpreter.updateCode('@t task');
    expect(interpreter.getVarValue('t')).toBe('done');
  });
  it('99-100: the built-in heuristic', () => {
    expect(cancelHeuristic('Cancel: maintenance window')?.reason).toBe('maintenance window');
    expect(cancelHeuristic({ status: 'cancelled', reason: 'quota exceeded' })?.reason).toBe('quota exceeded');
    for (const no of ['all good', 'Cancellation requested', 'stopped', 'halting', 'aborting', { status: 'ok', state: 'cancel' }, { a: 1 }, 42, null]) {
      expect(cancelHeuristic(no)).toBeFalsy();
    }
    expect(cancelHeuristic('Stop now')?.reason).toBe('Stop now');
    expect(cancelHeuristic('The order was not canceled')?.reason).toBe('The order was not canceled');
    expect(cancelHeuristic('cancled now')?.reason).toBe('cancled now');
    expect(cancelHeuristic({ cancel: true })?.reason).toBe('canceled');
    expect(cancelHeuristic(['cancel'])?.reason).toBe('cancel');
  });
  it('101: auto-cancel applies to assign and never to fail', async () => {
    const { interpreter } = await runPlan('@a assign "stop everything"\n@f failer', { registry: testRegistry({ failer: (_p, r) => r.fail('canceled by user') }), autoCancel: true });
    expect(interpreter.getVarValue('a')).toBe('canceled:command assign canceled (stop everything)');
    expect(interpreter.getVarValue('f')).toBe('fail:canceled by user');
  });
  it('enableAutoCancel switches it at any time, with an optional heuristic', async () => {
    const interpreter = new Interpreter({ registry: testRegistry() });
    interpreter.enableAutoCancel(true, (data) => (data === 'magic' ? { reason: 'by magic' } : null));
    await interpreter.updateCode('@a emit magic');
    expect(interpreter.getVarValue('a')).toBe('canceled:command emit canceled (by magic)');
  });
});

describe('the execution monitor', () => {
  it('102: default limits', () => {
    const m = new DefaultExecutionMonitor();
    expect([m.commandLimit, m.promptCharLimit, m.failureLimit]).toEqual([100, 1_000_000, 10]);
  });
  it('103: a command budget halts the run after the limit; the next start is counted, not run', async () => {
    const monitor = new DefaultExecutionMonitor({ commandLimit: 2 });
    const registry = testRegistry();
    const interpreter = new Interpreter({ registry, executionMonitor: monitor });
    await expect(interpreter.updateCode('@a emit 1\n@b emit 2\n@c emit 3\n@d emit 4')).rejects.toThrow('Execution halted: command budget exceeded (2)');
    expect(registry.log).toHaveLength(2);
    expect(monitor.getStats().commandsExecuted).toBe(3);
  });
  it('104: the third failure of one command with failureLimit 2 halts the third update', async () => {
    const monitor = new DefaultExecutionMonitor({ failureLimit: 2 });
    const interpreter = new Interpreter({ registry: testRegistry(), executionMonitor: monitor });
    await interpreter.updateCode('@a failer one');
    await interpreter.updateCode('@a failer two');
    await expect(interpreter.updateCode('@a failer three')).rejects.toThrow('Execution halted: failure limit exceeded for command failer');
    expect(interpreter.getVarValue('a')).toBe('fail:oops');
  });
  it('106: a halted run calls neither onFail nor a replan, and waits for commands in flight (Q19)', async () => {
    const reports: unknown[] = [];
    // @a settles only after the monitor has halted the run (at @b, over the budget of one).
    const halted = deferred();
    const monitor = new DefaultExecutionMonitor({ commandLimit: 1 });
    const before = monitor.beforeExecuteCommand.bind(monitor);
    monitor.beforeExecuteCommand = (command, raw) => {
      try {
        before(command, raw);
      } catch (error) {
        halted.resolve();
        throw error;
      }
    };
    const registry = testRegistry({ slow: async (_p, r) => { await halted.promise; return r.success('late'); } });
    const interpreter = new Interpreter({ registry, executionMonitor: monitor, onFail: (f) => reports.push(f) });
    await expect(interpreter.updateCode('@a slow\n@b failer')).rejects.toThrow('command budget');
    expect(reports).toEqual([]);
    expect(interpreter.getVarValue('a')).toBe('late');
  });
  it('a monitor lacking a method is rejected at construction', () => {
    expect(() => new Interpreter({ registry: testRegistry(), executionMonitor: { beforeExecuteCommand() {} } as never })).toThrow('executionMonitor must implement');
  });
});

describe('abort, events, targets', () => {
  it('an abort stops new starts, keeps settled values and resolves without onFail', async () => {
    const controller = new AbortController();
    const reports: unknown[] = [];
    // @a aborts the run while it is itself in flight, then succeeds on a later turn.
    const registry = testRegistry({ slow: async (p, r) => { if (p.variable === 'a') controller.abort(); await nextTurn(); return r.success(p.variable); } });
    const interpreter = new Interpreter({ registry, signal: controller.signal, onFail: (f) => reports.push(f) });
    const result = await interpreter.updateCode('@a slow\n@b slow $a\n@c failer');
    expect(result.aborted).toBe(true);
    expect(interpreter.lastRun?.aborted).toBe(true);
    expect(interpreter.getVarValue('a')).toBe('a');
    expect(interpreter.getVarValue('b')).toBe('undefined:waiting for a');
    expect(reports).toEqual([]);
    expect(registry.payloads[0]!.signal).toBe(controller.signal);
  });
  it('progress events: started and settled, propagated values included', async () => {
    const events: RunEvent[] = [];
    await runPlan('@a emit 1\n@b canceler\n@c emit $b', { onEvent: (e) => events.push(e) });
    expect(events[0]).toEqual({ type: 'run-started' });
    expect(events).toContainEqual({ type: 'command-started', variable: 'a', command: 'emit', raw: 'emit 1', lineNumber: 1, args: ['1'], dependencies: [], comment: '' });
    expect(events).toContainEqual({ type: 'variable-settled', variable: 'a', status: 'success', value: '1', lineNumber: 1, data: '1', rootCause: null });
    expect(events).toContainEqual({
      type: 'variable-settled', variable: 'c', status: 'canceled', value: 'canceled:because command canceler canceled (nope) via b', lineNumber: 3,
      data: 'because command canceler canceled (nope) via b', rootCause: expect.objectContaining({ name: 'b', reason: 'nope' }) as unknown,
    });
    expect(events.at(-1)).toEqual({ type: 'run-finished', aborted: false, halted: false });
  });
  it('targets run a declaration and its ancestors only ("run up to here")', async () => {
    const registry = testRegistry();
    const interpreter = new Interpreter({ registry });
    await interpreter.updateCode('@a emit 1\n@b combine $a\n@c combine $b\n@d emit 4', { targets: ['b'] });
    expect(registry.log).toEqual(['emit 1', 'combine 1']);
    await interpreter.updateCode('@a emit 1\n@b combine $a\n@c combine $b\n@d emit 4');
    expect(registry.log.slice(2)).toEqual(['emit 4', 'combine 1']);
  });
  it('a one-line edit of a 10k plan re-executes exactly the downstream set', async () => {
    const registry = testRegistry();
    const interpreter = new Interpreter({ registry, executionMonitor: new UnlimitedExecutionMonitor() });
    // Ten chains of 1000; chain k's step i uses step i-1 of the same chain.
    const lines = (edit: boolean) => {
      const out: string[] = [];
      for (let k = 0; k < 10; k++) for (let i = 0; i < 1000; i++) {
        const arg = k === 3 && i === 500 && edit ? 'edited' : 'x';
        out.push(i === 0 ? `@c${k}_0 emit ${k}` : `@c${k}_${i} combine $c${k}_${i - 1} ${arg}`);
      }
      return out.join('\n');
    };
    await interpreter.updateCode(lines(false));
    expect(registry.log).toHaveLength(10000);
    registry.log.length = 0;
    await interpreter.updateCode(lines(true));
    expect(registry.log).toHaveLength(500);
    expect(new Set(registry.payloads.slice(10000).map((p) => p.variable))).toEqual(new Set(Array.from({ length: 500 }, (_, i) => `c3_${500 + i}`)));
  });
});

describe('beforeCommand (the debugger hook)', () => {
  it('is awaited before each declaration starts, in start order; an abort while paused stops the run', async () => {
    const seen: string[] = [];
    let release: (() => void) | null = null;
    const pausedAtC = deferred();
    const controller = new AbortController();
    const registry = testRegistry();
    const interpreter = new Interpreter({
      registry,
      signal: controller.signal,
      beforeCommand: async (step) => {
        seen.push(step.variable);
        if (step.variable === 'c') {
          const paused = new Promise<void>((resolve) => (release = resolve));
          pausedAtC.resolve();
          await paused;
        }
      },
    });
    const run = interpreter.updateCode('@a emit 1\n@b combine $a\n@c combine $b\n@d combine $c');
    await pausedAtC.promise;
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(registry.log).toEqual(['emit 1', 'combine 1']);
    controller.abort();
    release!();
    const result = await run;
    expect(result.aborted).toBe(true);
    expect(registry.log).toEqual(['emit 1', 'combine 1']);
    expect(interpreter.getVarValue('c')).toBe('undefined:waiting for b');
  });
});
