// The plan runtime SOP sessions build on (sessions.md 2.1): validation with an allowed command
// set, execution that resolves on abort, and the interpreter's holdNewCommands hook.
import { describe, expect, it } from 'vitest';
import { Interpreter } from '@lightsop/runtime';
import { createPlanRuntime } from '@lightsop/sessions';
import { testRegistry } from '../helpers/registry';

describe('plan runtime', () => {
  it('holdNewCommands: once it returns true no further command starts; running ones settle', async () => {
    let hold = false;
    const registry = testRegistry({ pause: (_p, r) => { hold = true; return r.success('paused'); } });
    const interpreter = new Interpreter({ registry, holdNewCommands: () => hold });
    await interpreter.updateCode('@a pause\n@b emit $a\n@c emit x');
    expect(interpreter.getValue('a')!.status).toBe('success');
    expect(interpreter.getValue('b')!.status).toBe('undefined');
    expect(registry.log).not.toContain('emit paused');
  });

  it('validate reports unknown commands against the allowed set and topology errors, with the declared variable', () => {
    const runtime = createPlanRuntime();
    const diagnostics = runtime.validate('@a nope x\n@b emit $zz\n@lastAnswer final_answer $a', { commands: new Set(['emit', 'final_answer']) });
    const codes = diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.code}:${d.variable}`);
    expect(codes).toContain('unknown-command:a');
    expect(codes).toContain('undefined-variable:b');
  });

  it('execute resolves with aborted: true and the variables settled before the abort', async () => {
    const runtime = createPlanRuntime();
    const controller = new AbortController();
    const registry = testRegistry({
      slow: (p, r) => (p.signal!.aborted ? r.fail('stopped') : new Promise((resolve) => p.signal!.addEventListener('abort', () => resolve(r.fail('stopped')), { once: true }))),
    });
    const updates: string[] = [];
    const done = runtime.execute('@a emit one\n@b slow $a\n@c emit $b', registry, {
      signal: controller.signal,
      holdNewCommands: () => false,
      onVariable: (u) => {
        updates.push(`${u.variable}:${u.state}`);
        if (u.variable === 'b' && u.state === 'running') controller.abort('esc');
      },
    });
    const report = await done;
    expect(report.aborted).toBe(true);
    expect(report.variables.a).toEqual({ status: 'success', value: 'one' });
    expect(report.variables.c!.status).toBe('undefined');
    expect(updates).toContain('a:success');
  });
});
