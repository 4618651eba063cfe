// A host's analysis handed to `updateCode` (`UpdateOptions.analysis`): used only when it is of the
// same text and made as the interpreter would make it; anything else is analysed again.
import { describe, expect, it } from 'vitest';
import { analyzePlan, CommandSurface } from '@lightsop/core';
import { Interpreter, PlanValidationError } from '@lightsop/runtime';
import { testRegistry } from '../helpers/registry';

const PLAN = '# the first\n@a emit one\n@b combine $a two # inline\n@c emit "three four"\n@d combine $b $c\n';

function declarationOf(interpreter: Interpreter, name: string) {
  return interpreter.entries().find((e) => e.name === name)?.declaration ?? null;
}

describe('a handed-over analysis', () => {
  it('is used as it is: the table holds its declaration nodes', async () => {
    const registry = testRegistry();
    const interpreter = new Interpreter({ registry });
    const analysis = analyzePlan(PLAN, { inputDeclared: false });
    const result = await interpreter.updateCode(PLAN, { analysis });
    expect(result.failures).toEqual([]);
    const nodes = analysis.plan.declarations;
    for (const [i, name] of ['a', 'b', 'c', 'd'].entries()) expect(declarationOf(interpreter, name)).toBe(nodes[i]);
  });

  it('gives the same results as an update without one', async () => {
    const run = async (handed: boolean, input?: string) => {
      const registry = testRegistry();
      const interpreter = new Interpreter({ registry, input });
      const text = input === undefined ? PLAN : `${PLAN}@e combine $input $d\n`;
      const result = await interpreter.updateCode(text, handed ? { analysis: analyzePlan(text, { inputDeclared: input !== undefined }) } : {});
      // The raw record carries the time it was made: compared without it.
      const snapshot = interpreter.snapshot().map((v) => ({ ...v, raw: v.raw.replace(/^\d+:/, '') }));
      const entries = interpreter.entries().map((e) => ({ ...e, value: e.value.status, declaration: e.declaration?.name ?? null }));
      return { result, snapshot, entries, log: registry.log };
    };
    expect(await run(true)).toEqual(await run(false));
    expect(await run(true, 'in')).toEqual(await run(false, 'in'));
  });

  it('of another text is not trusted: the given text is what runs', async () => {
    const registry = testRegistry();
    const interpreter = new Interpreter({ registry });
    const other = analyzePlan('@a emit one\n', { inputDeclared: false });
    await interpreter.updateCode('@a emit two\n', { analysis: other });
    expect(registry.log).toEqual(['emit two']);
    expect(declarationOf(interpreter, 'a')).not.toBe(other.plan.declarations[0]);
  });

  it('made with the input declared is not trusted by an interpreter without input: $input is still an error', async () => {
    const text = '@a combine $input x\n';
    const registry = testRegistry();
    const interpreter = new Interpreter({ registry });
    const analysis = analyzePlan(text, { inputDeclared: true });
    expect(analysis.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    await expect(interpreter.updateCode(text, { analysis })).rejects.toBeInstanceOf(PlanValidationError);
    expect(registry.log).toEqual([]);
    expect(interpreter.entries()).toEqual([]);
  });

  it('made with the input undeclared is not trusted by an interpreter with an input', async () => {
    const text = '@a combine $input x\n';
    const registry = testRegistry();
    const interpreter = new Interpreter({ registry, input: 'in' });
    const analysis = analyzePlan(text, { inputDeclared: false });
    expect(analysis.diagnostics.some((d) => d.severity === 'error')).toBe(true);
    const result = await interpreter.updateCode(text, { analysis });
    expect(result.failures).toEqual([]);
    expect(registry.log).toEqual(['combine in x']);
  });

  it('made with a command surface is not trusted (its unknown-command errors are not the runtime\'s)', async () => {
    const text = '@a emit one\n';
    const registry = testRegistry();
    const interpreter = new Interpreter({ registry });
    const analysis = analyzePlan(text, { inputDeclared: false, commands: CommandSurface.fromDescription({ other: '' }) });
    expect(analysis.diagnostics.some((d) => d.code === 'unknown-command')).toBe(true);
    await interpreter.updateCode(text, { analysis });
    expect(registry.log).toEqual(['emit one']);
  });

  it('with errors rejects the update as the interpreter\'s own analysis would, and changes nothing', async () => {
    const text = '@a emit one\n@b combine $missing\n';
    const fresh = new Interpreter({ registry: testRegistry() });
    const own = await fresh.updateCode(text).then(() => null, (error: unknown) => error);
    const registry = testRegistry();
    const interpreter = new Interpreter({ registry });
    await interpreter.updateCode('@a emit one\n');
    const handed = await interpreter.updateCode(text, { analysis: analyzePlan(text, { inputDeclared: false }) }).then(() => null, (error: unknown) => error);
    expect(handed).toBeInstanceOf(PlanValidationError);
    expect(own).toBeInstanceOf(PlanValidationError);
    expect((handed as PlanValidationError).message).toBe((own as PlanValidationError).message);
    expect(interpreter.entries().map((e) => e.name)).toEqual(['a']);
    expect(registry.log).toEqual(['emit one']);
  });
});
