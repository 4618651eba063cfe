// ARCHITECTURE.md: a declaration starts only when all of its dependencies are successes, checked
// again immediately before it starts (spec 6.3 step 3). Readiness is decided when a declaration
// is queued; with a concurrency limit it may wait for a slot, and a host may change a value
// meanwhile. The check at the start is what keeps the rule then.
import { describe, expect, it } from 'vitest';
import { Interpreter } from '@lightsop/runtime';
import { testRegistry } from '../helpers/registry';
import { deferred } from '../helpers/sync';

/** `@a emit 1`, `@b held`, `@c combine $a`, one command at a time: @c waits in the queue while @b runs. */
async function queuedBehindHeld() {
  const bStarted = deferred();
  const releaseB = deferred();
  const registry = testRegistry({
    held: async (_p, r) => {
      bStarted.resolve();
      await releaseB.promise;
      return r.success('b');
    },
  });
  const interpreter = new Interpreter({ registry, concurrency: 1 });
  const run = interpreter.updateCode('@a emit 1\n@b held\n@c combine $a');
  // @a ran first (level 0, name order) and queued @c; @b (level 0) took the only slot.
  await bStarted.promise;
  expect(registry.log).toEqual(['emit 1', 'held']);
  return { interpreter, registry, run, releaseB };
}

describe('readiness is checked again immediately before a declaration starts', () => {
  it('a queued declaration whose dependency stopped being a success does not start', async () => {
    const { interpreter, registry, run, releaseB } = await queuedBehindHeld();
    interpreter.setValue('a', 'fail', 'withdrawn by the host');
    releaseB.resolve();
    await run;
    expect(registry.log).toEqual(['emit 1', 'held']);
    expect(interpreter.getValue('c')!.status).toBe('undefined');
  });

  it('a queued declaration that got a value meanwhile does not start again', async () => {
    const { interpreter, registry, run, releaseB } = await queuedBehindHeld();
    interpreter.setValue('c', 'success', 'given by the host');
    releaseB.resolve();
    await run;
    expect(registry.log).toEqual(['emit 1', 'held']);
    expect(interpreter.getVarValue('c')).toBe('given by the host');
  });

  it('a declaration whose dependencies are not all successes is never started (fail, undefined, canceled)', async () => {
    const registry = testRegistry();
    const interpreter = new Interpreter({ registry });
    await interpreter.updateCode('@ok emit 1\n@f failer\n@k canceler\n@x combine $ok $f\n@y combine $ok $k\n@z combine $x');
    expect(registry.log).toEqual(['failer', 'canceler', 'emit 1']);
    expect([interpreter.getValue('x')!.status, interpreter.getValue('y')!.status, interpreter.getValue('z')!.status]).toEqual(['undefined', 'canceled', 'undefined']);
  });
});
