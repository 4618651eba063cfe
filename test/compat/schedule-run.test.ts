// `interpreter._scheduleRun()`: an internal of AchillesAgentLib's interpreter that code in the wild
// calls after it refreshed a variable by hand, to run what depends on it. The compat layer
// accepts it as a run of the current plan without an update (spec 6.3).
import { describe, expect, it } from 'vitest';
import LightSOPLangInterpreter, { createFailValue, createSuccessValue } from '@lightsop/runtime/compat';
import { checklistRegistry, gate, settle, until } from './helpers';

describe('_scheduleRun()', () => {
  it('after a value is refreshed by hand, runs its dependents again with it, and nothing else', async () => {
    const { registry, history } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit 1\n@b combine $a x\n@c emit other\n@lastAnswer final_answer $b', {
      ...registry,
      listCommands: () => [...(registry.listCommands() as object[]), { name: 'final_answer', description: 'answer' }],
      executeCommand: (p, r) => (p.command === 'final_answer' ? r.success(p.args.join(' ')) : registry.executeCommand(p, r)),
    });
    await interpreter.ready;
    expect(interpreter.getVarValue('lastAnswer')).toBe('1+x');
    history.length = 0;

    interpreter.variables.get('a')!.value = createSuccessValue('2');
    const run = interpreter._scheduleRun();
    expect(interpreter.ready).toBe(run);
    await run;
    expect(history).toEqual(['combine 2 x']);
    expect(interpreter.getVarValue('b')).toBe('2+x');
    expect(interpreter.getVarValue('lastAnswer')).toBe('2+x');
    expect(interpreter.getVarValue('c')).toBe('other');
  });

  it('with nothing refreshed, runs nothing; a failed step set to success by hand lets its dependents run', async () => {
    const { registry, history } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a failer\n@b combine $a y', registry);
    await interpreter.ready;
    expect(history).toEqual(['failer']);
    await interpreter._scheduleRun();
    expect(history).toEqual(['failer']);

    interpreter.variables.get('a')!.value = createSuccessValue('fixed');
    await interpreter._scheduleRun();
    expect(history).toEqual(['failer', 'combine fixed y']);
    expect(interpreter.getVarValue('b')).toBe('fixed+y');

    interpreter.variables.get('a')!.value = createFailValue('broken again');
    await interpreter._scheduleRun();
    expect(interpreter.getVarValue('b')).toBe('undefined:dependency failure a');
  });

  it('is queued behind an update in flight: ready waits for both, and the run starts nothing meanwhile', async () => {
    const release = gate();
    const { registry, history } = checklistRegistry({
      held: async ({ args }, r) => {
        await release.promise;
        return r.success(args[0]);
      },
    });
    const interpreter = new LightSOPLangInterpreter(null, registry);
    const update = interpreter.updateCode('@a held 1\n@b combine $a z');
    await until(() => history.length === 1, 'the held command to start');
    const run = interpreter._scheduleRun();
    expect(interpreter.ready).toBe(run);
    await settle();
    expect(history).toEqual(['held 1']);
    release.open();
    await run;
    await update;
    expect(history).toEqual(['held 1', 'combine 1 z']);
    expect(interpreter.getVarValue('b')).toBe('1+z');
  });

  it('before any plan, resolves and runs nothing', async () => {
    const { registry, history } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter(null, registry);
    await expect(interpreter._scheduleRun()).resolves.toBeUndefined();
    expect(history).toEqual([]);
  });
});
