// The scheduler leaves nothing behind a finished run: its pending `setImmediate` (the yield to the
// event loop after a long run of synchronous rounds) holds the run's state and the interpreter,
// so a run that ends while one is pending (an abort) clears it. Observed as Node's count of
// active `Immediate` handles, read in the same turn of the event loop (no immediate can fire or
// be added by anything else meanwhile): states only, no sleeps, no timings.
import { describe, expect, it } from 'vitest';
import { Interpreter, UnlimitedExecutionMonitor, type CommandRegistry } from '@lightsop/runtime';

function pendingImmediates(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Immediate').length;
}

describe('scheduler memory', () => {
  it('an abort while the scheduler yields to the event loop leaves no pending immediate holding the finished run', async () => {
    const controller = new AbortController();
    const started: string[] = [];
    const registry: CommandRegistry = {
      listCommands: () => [{ name: 'step', description: 'answers at once' }],
      executeCommand(payload, responder) {
        started.push(payload.variable);
        // Runs once the promise jobs have drained, i.e. after the scheduler has gone through its
        // synchronous rounds and yielded with a pending setImmediate, and before that fires.
        if (started.length === 1) process.nextTick(() => controller.abort(new Error('stop')));
        // A value, not a promise: each settlement is one promise job, one synchronous round.
        return responder.success('ok');
      },
    };
    const n = 1000;
    let plan = '';
    for (let i = 0; i < n; i++) plan += `@s${String(i).padStart(4, '0')} step x\n`;
    const interpreter = new Interpreter({ registry, concurrency: 1, signal: controller.signal, executionMonitor: new UnlimitedExecutionMonitor() });
    const before = pendingImmediates();
    const result = await interpreter.updateCode(plan);
    // Read in the turn the run ended in: an immediate left pending would still be counted.
    const after = pendingImmediates();
    // The abort came while the scheduler waited for its immediate: it had yielded (many rounds
    // ran, not all of them), so the run ended with one pending.
    expect(result.aborted).toBe(true);
    expect(started.length).toBeGreaterThan(100);
    expect(started.length).toBeLessThan(n);
    expect(after).toBe(before);
  });
});
