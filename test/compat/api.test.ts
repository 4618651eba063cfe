// @lightsop/runtime/compat as an AchillesAgentLib user calls it: exports, the positional
// constructor and its option keys, members, `variables`, `parseCode`, payloads and value helpers.
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import LightSOPLangInterpreter, {
  DefaultExecutionMonitor,
  LightSOPLangInterpreter as Named,
  cancelEuristic,
  createFailValue,
  createSuccessValue,
  createUndefinedValue,
  parseCode,
  type LightSOPLangPayload,
} from '@lightsop/runtime/compat';
import { checklistRegistry, createRegistry, MockLLMAgent } from './helpers';

describe('exports', () => {
  it('default and named interpreter are the same class; the monitor, heuristic and helpers are exported', () => {
    expect(LightSOPLangInterpreter).toBe(Named);
    expect(new DefaultExecutionMonitor().getStats()).toMatchObject({ commandLimit: 100, promptCharLimit: 1_000_000, failureLimit: 10 });
    expect(cancelEuristic('Cancel: maintenance window')).toMatchObject({ reason: 'maintenance window' });
    expect(parseCode('@a emit 1').get('a')!.command).toBe('emit');
  });

  it('value helpers build reference value records with increasing timestamps', () => {
    const s = createSuccessValue('hi');
    const f = createFailValue('bad');
    const u = createUndefinedValue();
    expect(s).toEqual({ status: 'success', timestamp: s.timestamp, data: 'hi', raw: `${s.timestamp}:success:hi`, rootCause: null, via: null, origin: 'command' });
    expect(f).toMatchObject({ status: 'fail', data: 'bad', origin: 'internal', raw: `${f.timestamp}:fail:bad` });
    expect(u).toMatchObject({ status: 'undefined', data: '', raw: `${u.timestamp}:undefined:` });
    expect(createSuccessValue(null, 'test')).toMatchObject({ data: '', origin: 'test' });
    expect(createFailValue()).toMatchObject({ data: '' });
    expect(s.timestamp).toBeLessThan(f.timestamp);
    expect(f.timestamp).toBeLessThan(u.timestamp);
  });
});

describe('constructor', () => {
  it('applies code given to the constructor asynchronously, so values appear after await ready (Q25)', async () => {
    const { registry, history } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit 1', registry);
    expect(interpreter.getVarValue('a')).toBeUndefined();
    expect(history).toEqual([]);
    await interpreter.ready;
    expect(interpreter.getVarValue('a')).toBe('1');
    expect(interpreter.currentSourceCode).toBe('@a emit 1');
  });

  it('runs nothing without code', async () => {
    const { registry } = checklistRegistry();
    for (const code of ['', null, undefined]) {
      const interpreter = new LightSOPLangInterpreter(code, registry);
      await interpreter.ready;
      expect(interpreter.currentSourceCode).toBe('');
      expect(interpreter.variables.size).toBe(0);
    }
  });

  it('(code, registry, onFail): the third argument as a function is onFail', async () => {
    const { registry } = checklistRegistry();
    const reports: unknown[] = [];
    const interpreter = new LightSOPLangInterpreter('@x failer', registry, (failures) => reports.push(failures));
    await interpreter.ready;
    expect(reports).toEqual([[{ variable: 'x', reason: 'fail:oops' }]]);
    expect(interpreter.inputValue).toBeUndefined();
  });

  it('(code, registry, onFail, options): options follow the function', async () => {
    const { registry } = checklistRegistry();
    const monitor = new DefaultExecutionMonitor();
    const reports: unknown[] = [];
    const interpreter = new LightSOPLangInterpreter('@x failer', registry, (f) => reports.push(f), { executionMonitor: monitor });
    await interpreter.ready;
    expect(interpreter.executionMonitor).toBe(monitor);
    expect(monitor.getStats().failureCounts).toEqual({ failer: 1 });
    expect(reports).toHaveLength(1);
  });

  it('(code, registry, options): an object with a recognised key is the options object', async () => {
    const { registry } = checklistRegistry();
    const reports: unknown[] = [];
    const interpreter = new LightSOPLangInterpreter('@x failer', registry, { onFail: (f) => reports.push(f), maxLlmaRounds: 3 });
    await interpreter.ready;
    expect(reports).toHaveLength(1);
    expect(interpreter.maxLlmaRounds).toBe(3);
    expect(interpreter.inputValue).toBeUndefined();
  });

  it('(code, registry, input, onFail, options): a third argument that is not options is the input', async () => {
    const { registry, history } = checklistRegistry();
    const reports: unknown[] = [];
    const monitor = new DefaultExecutionMonitor();
    const interpreter = new LightSOPLangInterpreter('@r emit $input\n@x failer', registry, 'payload-value', (f) => reports.push(f), { executionMonitor: monitor });
    await interpreter.ready;
    expect(interpreter.inputValue).toBe('payload-value');
    expect(interpreter.getVarValue('r')).toBe('payload-value');
    expect(history).toContain('emit payload-value');
    expect(reports).toEqual([[{ variable: 'x', reason: 'fail:oops' }]]);
    expect(interpreter.executionMonitor).toBe(monitor);
  });

  it('(code, registry, input, options): options in fourth position, and a positional input wins over options.input', async () => {
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@r emit $input', registry, 'positional', { autoCancel: true, input: 'from options' });
    await interpreter.ready;
    expect(interpreter.getVarValue('r')).toBe('positional');
    expect(interpreter.autoCancelEnabled).toBe(true);
  });

  it('options.input supplies the input when no positional input is given', async () => {
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@r emit $input', registry, undefined, { input: 'from options', onFail: () => {} });
    await interpreter.ready;
    expect(interpreter.getVarValue('r')).toBe('from options');
  });

  it('an object without a recognised key in third position is the input itself, as in the reference (Q21)', async () => {
    const { registry, payloads } = checklistRegistry();
    const third = { input: 'x', llmModel: 'm' };
    const interpreter = new LightSOPLangInterpreter('@r emit $input', registry, third);
    await interpreter.ready;
    expect(interpreter.inputValue).toBe(third);
    expect(interpreter.llmModel).toBeNull();
    expect(payloads[0]!.args[0]).toBe(third);
  });

  it('an options object in fourth position wins over a fifth argument, as in the reference', async () => {
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@r emit $input', registry, 'in', { maxLlmaRounds: 2 }, { maxLlmaRounds: 9 });
    await interpreter.ready;
    expect(interpreter.maxLlmaRounds).toBe(2);
  });

  it('reads every option key of the reference, with llmModel/model, llmTags/tags and llmSignal/signal aliases', () => {
    const { registry } = checklistRegistry();
    const agent = new MockLLMAgent(() => '');
    const signal = new AbortController().signal;
    const heuristic = () => null;
    const onPlanGenerated = () => {};
    const a = new LightSOPLangInterpreter(null, registry, {
      llmAgent: agent, llmModel: 'm1', model: 'm2', llmTags: ['t1'], tags: ['t2'], llmSignal: signal, reasoningEffort: 'high',
      llmInvocationContext: { userPrompt: 'hi' }, maxLlmaRounds: 2, cancelHeuristic: heuristic, autoCancel: true, onPlanGenerated, generateOnly: true,
    });
    expect(a.llmAgent).toBe(agent);
    expect([a.llmModel, a.llmTags, a.llmSignal, a.llmReasoningEffort]).toEqual(['m1', ['t1'], signal, 'high']);
    expect(a.llmInvocationContext).toEqual({ userPrompt: 'hi' });
    expect([a.maxLlmaRounds, a.cancelHeuristic, a.autoCancelEnabled, a.onPlanGenerated, a.generateOnly]).toEqual([2, heuristic, true, onPlanGenerated, true]);
    const b = new LightSOPLangInterpreter(null, registry, { llmAgent: agent, model: 'm2', tags: ['t2'], signal });
    expect([b.llmModel, b.llmTags, b.llmSignal]).toEqual(['m2', ['t2'], signal]);
    const c = new LightSOPLangInterpreter(null, registry, { llmAgent: null, maxLlmaRounds: Number.NaN });
    expect([c.llmAgent, c.llmModel, c.llmTags, c.llmSignal, c.llmReasoningEffort, c.maxLlmaRounds, c.cancelHeuristic]).toEqual([null, null, null, null, null, 5, cancelEuristic]);
    expect([c.autoCancelEnabled, c.generateOnly, c.onPlanGenerated]).toEqual([false, false, null]);
    expect(typeof c.onFail).toBe('function');
  });

  it('sends the model options with every prompt', async () => {
    const { registry } = checklistRegistry({ final_answer: ({ args }, r) => r.success(args[0]) });
    const agent = new MockLLMAgent(() => '@lastAnswer final_answer ok');
    const signal = new AbortController().signal;
    const interpreter = new LightSOPLangInterpreter('#!english\nanswer', registry, { llmAgent: agent, model: 'gpt-x', tags: ['plan'], reasoningEffort: 'low', signal });
    await interpreter.ready;
    expect(agent.options[0]).toMatchObject({ model: 'gpt-x', tags: ['plan'], reasoningEffort: 'low', signal });
    const plain = new MockLLMAgent(() => '@lastAnswer final_answer ok');
    await new LightSOPLangInterpreter('#!english\nanswer', registry, { llmAgent: plain }).ready;
    expect(plain.options[0]).toMatchObject({ model: null, tags: null, reasoningEffort: null, signal: null });
  });

  it('rejects unusable registries and monitors with the reference texts', () => {
    const monitorless = { executeCommand: () => null, listCommands: () => [] };
    const cases: [unknown, unknown, string][] = [
      [null, undefined, 'commandsRegistry must be an object'],
      ['registry', undefined, 'commandsRegistry must be an object'],
      [() => null, undefined, 'commandsRegistry must be an object'],
      [{ listCommands: () => [] }, undefined, 'commandsRegistry.executeCommand must be a function'],
      [{ executeCommand: () => null }, undefined, 'commandsRegistry.listCommands must be a function'],
      [monitorless, { beforeExecuteCommand() {} }, 'executionMonitor must implement beforeExecuteCommand, beforeRegenerateScript, and reportCommandFailure'],
    ];
    for (const [registry, executionMonitor, message] of cases) {
      const create = () => new LightSOPLangInterpreter('@a emit 1', registry as never, { executionMonitor: executionMonitor as never });
      expect(create).toThrow(TypeError);
      expect(create).toThrow(message);
    }
  });

  it('uses a default monitor for a falsy one and gives a monitor without statistics an empty getStats()', async () => {
    const { registry } = checklistRegistry();
    const fallback = new LightSOPLangInterpreter(null, registry, { executionMonitor: false as never });
    expect(fallback.executionMonitor).toBeInstanceOf(DefaultExecutionMonitor);
    const counted: string[] = [];
    const monitor = { beforeExecuteCommand: (c: string) => void counted.push(c), beforeRegenerateScript() {}, reportCommandFailure() {} };
    const interpreter = new LightSOPLangInterpreter('@a emit 1', registry, { executionMonitor: monitor });
    await interpreter.ready;
    expect(counted).toEqual(['emit']);
    expect(interpreter.executionMonitor.getStats!()).toEqual({});
  });
});

describe('members', () => {
  it('updateCode replaces ready, queues updates and resolves to undefined', async () => {
    const { registry, history } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit 1', registry);
    const first = interpreter.ready;
    const second = interpreter.updateCode('@a emit 1\n@b emit 2');
    expect(interpreter.ready).toBe(second);
    expect(interpreter.ready).not.toBe(first);
    void interpreter.updateCode('@a emit 1\n@b emit 2\n@c emit 3'); // settles through interpreter.ready, awaited next
    await interpreter.ready;
    expect(await second).toBeUndefined();
    expect(history).toEqual(['emit 1', 'emit 2', 'emit 3']);
    expect(interpreter.currentSourceCode).toBe('@a emit 1\n@b emit 2\n@c emit 3');
  });

  it('updateCode rejects code that is not a string', async () => {
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit 1', registry);
    await expect(interpreter.updateCode(42 as never)).rejects.toThrow('LightSOPLang code must be a string');
    expect(interpreter.getVarValue('a')).toBe('1');
  });

  it('onFail, onPlanGenerated and inputValue may be replaced after construction, as plain fields', async () => {
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@r emit $input', registry, 'first');
    await interpreter.ready;
    const reports: unknown[] = [];
    interpreter.onFail = (f) => reports.push(f);
    interpreter.inputValue = 'second';
    await interpreter.updateCode('@r emit $input\n@x failer');
    expect(interpreter.getVarValue('r')).toBe('second');
    expect(reports).toEqual([[{ variable: 'x', reason: 'fail:oops' }]]);
  });

  it('autoCancelEnabled and cancelHeuristic follow enableAutoCancel and may be assigned', async () => {
    const { registry } = checklistRegistry({ produce: (_p, r) => r.success('Stop now') });
    const interpreter = new LightSOPLangInterpreter(null, registry);
    expect(interpreter.autoCancelEnabled).toBe(false);
    interpreter.enableAutoCancel();
    expect(interpreter.autoCancelEnabled).toBe(true);
    const custom = (data: unknown) => (data === 'custom' ? { reason: 'by custom heuristic' } : null);
    interpreter.enableAutoCancel(true, custom);
    expect(interpreter.cancelHeuristic).toBe(custom);
    await interpreter.updateCode('@a produce\n@b emit custom');
    expect(interpreter.getVarValue('a')).toBe('Stop now');
    expect(interpreter.getVarValue('b')).toBe('canceled:command emit canceled (by custom heuristic)');
    interpreter.cancelHeuristic = cancelEuristic;
    interpreter.autoCancelEnabled = false;
    expect(interpreter.autoCancelEnabled).toBe(false);
    await interpreter.updateCode('@a produce\n@b emit custom2');
    expect(interpreter.getVarValue('b')).toBe('custom2');
    interpreter.autoCancelEnabled = true;
    await interpreter.updateCode('@a produce x\n@b emit custom2');
    expect(interpreter.getVarValue('a')).toBe('canceled:command produce canceled (Stop now)');
  });

  it('a heuristic or autoCancel flag on the registry is used when the options give none', async () => {
    const registry = createRegistry((p, r) => r.success(p.args[0]), [{ name: 'emit', description: 'emit' }]);
    registry.autoCancel = true;
    registry.cancelHeuristic = (data) => (data === 'no' ? { reason: 'registry says no' } : null);
    const interpreter = new LightSOPLangInterpreter('@a emit no\n@b emit "Cancel: x"', registry);
    await interpreter.ready;
    expect(interpreter.autoCancelEnabled).toBe(true);
    expect(interpreter.getVarValue('a')).toBe('canceled:command emit canceled (registry says no)');
    expect(interpreter.getVarValue('b')).toBe('Cancel: x');
    const overridden = new LightSOPLangInterpreter('@a emit no', registry, { autoCancel: false });
    await overridden.ready;
    expect(overridden.getVarValue('a')).toBe('no');
  });

  it('commandsRegistry lists the registry commands and runs the built-in assign', async () => {
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter(null, registry);
    expect(interpreter.commandsRegistry.listCommands()).toEqual(registry.listCommands());
    await interpreter.updateCode('@x assign a b');
    expect(interpreter.getVarValue('x')).toBe('a b');
  });

  it('generateOnly stores plain code without running it, as the reference does', async () => {
    const { registry, history } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit 1\n@a emit 2', registry, { generateOnly: true, llmAgent: null });
    await interpreter.ready;
    expect(interpreter.currentSourceCode).toBe('@a emit 1\n@a emit 2');
    expect(history).toEqual([]);
    expect(interpreter.getVarValue('a')).toBeUndefined();
  });
});

describe('variables', () => {
  const code = ['# Load the seed', '@seed emit base # inline', '@mid combine $seed extra $seed', '@top combine $mid'].join('\n');

  it('is a Map from name to the entry fields of the reference', async () => {
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter(code, registry, 'IN');
    await interpreter.ready;
    const { variables } = interpreter;
    expect(variables).toBeInstanceOf(Map);
    expect(inspect(variables)).toContain("'top' => LightSOPLangVariable");
    expect([...variables.keys()]).toEqual(['seed', 'mid', 'top', 'input']);
    expect(variables.size).toBe(4);
    const mid = variables.get('mid')!;
    expect(mid.name).toBe('mid');
    expect(mid.command).toBe('combine');
    expect(mid.arguments).toEqual([{ type: 'variable', name: 'seed' }, { type: 'literal', value: 'extra' }, { type: 'variable', name: 'seed' }]);
    expect(mid.dependencies).toEqual(new Set(['seed']));
    expect(mid.dependents).toEqual(new Set(['top']));
    expect(mid.lineNumber).toBe(3);
    expect(mid.signature).toBe(parseCode(code).get('mid')!.signature);
    const seed = variables.get('seed')!;
    expect([seed.comment, seed.commentLines, seed.lineNumber]).toEqual(['Load the seed\ninline', ['Load the seed', 'inline'], 2]);
    const value = variables.get('top')!.value;
    expect(value).toMatchObject({ status: 'success', data: 'base+extra+base', rootCause: null, via: null, origin: 'command' });
    expect(value.raw).toBe(`${value.timestamp}:success:base+extra+base`);
    const input = variables.get('input')!;
    expect([input.command, input.arguments, input.lineNumber, input.signature]).toEqual(['', [], null, '']);
    expect(input.value).toMatchObject({ status: 'success', data: 'IN', origin: 'input' });
    expect(variables.has('nope')).toBe(false);
    const seen: string[] = [];
    variables.forEach((v, k, map) => {
      expect(map).toBe(variables);
      seen.push(`${k}:${v.command}`);
    });
    expect(seen).toEqual(['seed:emit', 'mid:combine', 'top:combine', 'input:']);
    expect([...variables].map(([k]) => k)).toEqual(['seed', 'mid', 'top', 'input']);
  });

  it('keeps entries and their identity across updates and follows the applied plan', async () => {
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter(code, registry);
    await interpreter.ready;
    const { variables } = interpreter;
    const seed = variables.get('seed')!;
    await interpreter.updateCode('@seed emit base\n@other emit o\n@top2 combine $seed');
    expect(interpreter.variables).toBe(variables);
    expect(variables.get('seed')).toBe(seed);
    expect([...variables.keys()]).toEqual(['seed', 'other', 'top2']);
    expect(seed.dependents).toEqual(new Set(['top2']));
    expect([seed.comment, seed.lineNumber]).toEqual(['', 1]);
    expect(variables.get('mid')).toBeUndefined();
    expect(() => variables.set('x', seed)).toThrow(TypeError);
    expect(() => variables.delete('seed')).toThrow(TypeError);
    expect(() => variables.clear()).toThrow(TypeError);
  });

  it('a command sees its own entry as payload.variableState, and values are current during the run', async () => {
    const seen: string[] = [];
    const { registry } = checklistRegistry({
      look: ({ variableState }, r) => {
        seen.push(`${variableState!.name}:${String(variableState!.value.data)}:${String(variableState!.value.status)}`);
        return r.success('looked');
      },
    });
    const interpreter = new LightSOPLangInterpreter('@a emit 1\n@b look $a', registry);
    await interpreter.ready;
    expect(seen).toEqual(['b:waiting for a:undefined']);
    expect(interpreter.variables.get('b')!.value.data).toBe('looked');
  });

  it('assigning a value record replaces the value with a newer one, so dependents run again', async () => {
    const { registry, history } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@source emit base\n@final combine $source tail', registry);
    await interpreter.ready;
    const before = interpreter.variables.get('source')!.value.timestamp;
    interpreter.variables.get('source')!.value = createSuccessValue('base', 'test');
    expect(interpreter.variables.get('source')!.value.timestamp).toBeGreaterThan(before);
    await interpreter.updateCode(interpreter.currentSourceCode);
    expect(history).toEqual(['emit base', 'combine base tail', 'combine base tail']);
    expect(() => {
      interpreter.variables.get('source')!.value = { status: 'done' } as never;
    }).toThrow('Unsupported status: done');
  });
});

describe('payloads and responders', () => {
  it('37: a payload carries command, args, raw, variable, variableState, lineNumber, comment and commentLines', async () => {
    const { registry, payloads } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('\n# Say it\n# twice\n@x emit "a b" c # inline', registry);
    await interpreter.ready;
    const payload: LightSOPLangPayload = payloads[0]!;
    expect(payload).toEqual({
      command: 'emit', args: ['a b', 'c'], raw: 'emit a b c', variable: 'x', variableState: interpreter.variables.get('x'),
      lineNumber: 4, comment: 'Say it\ntwice\ninline', commentLines: ['Say it', 'twice', 'inline'],
    });
  });

  it('responder methods work when destructured, as closures in the reference', async () => {
    const { registry } = checklistRegistry({
      ok: (_p, { success }) => success('yes'),
      no: (_p, { fail }) => fail('nope'),
      stop: (_p, { cancel }) => cancel('halt'),
    });
    const interpreter = new LightSOPLangInterpreter('@a ok\n@b no\n@c stop', registry);
    await interpreter.ready;
    expect([interpreter.getVarValue('a'), interpreter.getVarValue('b'), interpreter.getVarValue('c')]).toEqual(['yes', 'fail:nope', 'canceled:command stop canceled (halt)']);
  });

  it('a command may return value records made with the value helpers', async () => {
    const { registry } = checklistRegistry({
      made: () => createSuccessValue('made'),
      broke: () => createFailValue('broke'),
      later: () => createUndefinedValue('later'),
    });
    const interpreter = new LightSOPLangInterpreter('@a made\n@b broke\n@c later', registry);
    await interpreter.ready;
    expect([interpreter.getVarValue('a'), interpreter.getVarValue('b'), interpreter.getVarValue('c')]).toEqual(['made', 'fail:broke', 'undefined:later']);
  });
});

describe('parseCode', () => {
  it('returns the reference declaration records by name', () => {
    const declarations = parseCode(['# first', '@a emit "x y" $b # note', '@b assign', '--begin-T--', 'body', '--end-T--'].join('\n'));
    expect(declarations).toBeInstanceOf(Map);
    expect([...declarations.keys()]).toEqual(['a', 'b']);
    expect(declarations.get('a')).toEqual({
      name: 'a', command: 'emit', arguments: [{ type: 'literal', value: 'x y' }, { type: 'variable', name: 'b' }],
      dependencies: new Set(['b']), signature: 'emit\u0001#x y\u0001$b', lineNumber: 2, comment: 'first\nnote', commentLines: ['first', 'note'],
    });
    expect(declarations.get('b')!.arguments).toEqual([{ type: 'literal', value: 'body' }]);
  });

  it('signatures ignore quoting and comments but tell literals from references', () => {
    const sig = (code: string) => parseCode(code).get('x')!.signature;
    expect(sig('@x emit "a" \'b\' c')).toBe(sig('# c\n@x emit a b "c" # d'));
    expect(sig('@x emit "$a"\n@a emit 1')).not.toBe(sig('@x emit $a\n@a emit 1'));
  });

  it('does not check references or cycles, as the reference parser does not', () => {
    expect(parseCode('@a emit $missing').get('a')!.dependencies).toEqual(new Set(['missing']));
    expect(parseCode('@a emit $b\n@b emit $a').size).toBe(2);
  });

  it('throws the reference texts for invalid code and for code that is not a string', () => {
    expect(() => parseCode('@a emit 1\n@a emit 2')).toThrow('Variable a declared multiple times');
    expect(() => parseCode('@x emit "abc')).toThrow('Unterminated string literal at line 1');
    expect(() => parseCode(undefined)).toThrow('LightSOPLang code must be a string');
  });

  it('reads #!english as an ordinary comment, as the reference parser does', () => {
    expect(() => parseCode('#!english\nwrite a plan')).toThrow('Line 2: declaration must start with @');
    expect(parseCode('#!english\n@x emit 1').get('x')!.commentLines).toEqual(['!english']);
  });
});
