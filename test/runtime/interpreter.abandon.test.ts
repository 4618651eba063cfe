// Issue 10 items 1 and 2, in the runtime: a host can stop waiting for commands that never settle or
// that ignore the abort signal. Their variables get the host's status and reason at once, the run
// settles, and a result the command delivers later never replaces that value.
import { describe, expect, it } from 'vitest';
import { DefaultExecutionMonitor, Interpreter, type RunEvent } from '@lightsop/runtime';
import { testRegistry } from '../helpers/registry';

/** A command that waits for the test to release it, whatever its signal says. */
function gate() {
  let release: () => void = () => undefined;
  let started: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const running = new Promise<void>((resolve) => (started = resolve));
  return { released, running, release: () => release(), started: () => started() };
}

describe('abandonRunning', () => {
  it('after an abort: commands ignoring the signal are canceled, the run settles, a late success is dropped', async () => {
    const stuck = gate();
    let lateValue: unknown = null;
    const registry = testRegistry({
      stubborn: async (_p, r) => {
        stuck.started();
        await stuck.released;
        lateValue = r.success('late');
        return lateValue;
      },
    });
    const controller = new AbortController();
    const events: RunEvent[] = [];
    const interpreter = new Interpreter({ registry, signal: controller.signal, onEvent: (e) => events.push(e) });
    const update = interpreter.updateCode('@a emit x\n@s stubborn\n@t emit $s\n');
    await stuck.running;
    controller.abort(new Error('timeout'));
    expect(interpreter.abandonRunning('canceled', 'did not stop within 2 s of the signal')).toEqual(['s']);
    const result = await update;
    expect(result.aborted).toBe(true);
    expect(interpreter.getVarValue('a')).toBe('x');
    expect(interpreter.getVarValue('s')).toBe('canceled:command stubborn canceled (did not stop within 2 s of the signal)');
    expect(interpreter.getVarValue('t')).toBe('canceled:because command stubborn canceled (did not stop within 2 s of the signal) via s');
    const settledBefore = events.filter((e) => e.type === 'variable-settled').length;
    stuck.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(lateValue).not.toBeNull();
    // The late answer changed nothing and announced nothing.
    expect(interpreter.getValue('s')!.status).toBe('canceled');
    expect(events.filter((e) => e.type === 'variable-settled')).toHaveLength(settledBefore);
    expect(interpreter.abandonRunning('canceled', 'again')).toEqual([]);
  });

  it('without an abort: a never-settling command fails, reported to the monitor, and the next queued command runs', async () => {
    const registry = testRegistry({ never: () => new Promise(() => undefined) });
    const monitor = new DefaultExecutionMonitor();
    const interpreter = new Interpreter({ registry, concurrency: 1, executionMonitor: monitor });
    const update = interpreter.updateCode('@n never\n@d emit $n\n@z emit later\n');
    // With one slot, `z` waits behind `never` until the host gives up on it.
    await new Promise((resolve) => setImmediate(resolve));
    expect(registry.log).toEqual(['never']);
    expect(interpreter.abandonRunning('fail', 'never settled')).toEqual(['n']);
    await update;
    expect(interpreter.getVarValue('n')).toBe('fail:never settled');
    expect(interpreter.getVarValue('d')).toBe('undefined:waiting for n');
    expect(interpreter.getVarValue('z')).toBe('later');
    expect(registry.log).toEqual(['never', 'emit later']);
    expect(monitor.failureHistory).toEqual([{ commandName: 'never', reason: 'never settled' }]);
  });

  it('does nothing when no run is executing', () => {
    const interpreter = new Interpreter({ registry: testRegistry() });
    expect(interpreter.abandonRunning('fail', 'x')).toEqual([]);
  });
});
