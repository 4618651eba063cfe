// Spec section 10, items 102-117, through the compat entry point: execution monitors and their
// statistics, and #!english scripts with an LLM agent object that has `executePrompt`.
import { describe, expect, it } from 'vitest';
import LightSOPLangInterpreter, { DefaultExecutionMonitor } from '@lightsop/runtime/compat';
import { checklistRegistry, createRegistry, gate, MockLLMAgent, scriptedAgent, type ExecuteCommand } from './helpers';

interface PromptEntry {
  prompt: string;
  request: { reason: string; attempt: number; failures: { variable: string; reason: string }[]; variables: { name: string }[]; commands: { name: string }[] };
}

const promptHistory = (monitor: DefaultExecutionMonitor) => monitor.getStats().promptHistory as unknown as PromptEntry[];

/** The checklist registry with final commands, as a session's registry lists them. */
function finalRegistry(extra: Record<string, ExecuteCommand> = {}) {
  return checklistRegistry({
    final_answer: ({ args }, r) => r.success(args[0]),
    broken: (_p, r) => r.fail('simulated failure'),
    ...extra,
  });
}

describe('execution monitor', () => {
  it('102: the default limits', async () => {
    expect(new DefaultExecutionMonitor().getStats()).toMatchObject({ commandLimit: 100, promptCharLimit: 1_000_000, failureLimit: 10 });
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit 1', registry);
    await interpreter.ready;
    expect(interpreter.executionMonitor).toBeInstanceOf(DefaultExecutionMonitor);
    expect(interpreter.executionMonitor.getStats!()).toMatchObject({ commandLimit: 100, commandsExecuted: 1 });
  });

  it('103: a command budget halts after two commands ran and three were counted (Reference)', async () => {
    const monitor = new DefaultExecutionMonitor({ commandLimit: 2, promptCharLimit: 1_000_000, failureLimit: 10 });
    const { registry, history } = checklistRegistry();
    const reports: unknown[] = [];
    const interpreter = new LightSOPLangInterpreter('@a emit 1\n@b emit 2\n@sum combine $a $b\n@final combine $sum tail', registry, {
      executionMonitor: monitor,
      onFail: (f) => reports.push(f),
    });
    await expect(interpreter.ready).rejects.toThrow('Execution halted: command budget exceeded (2)');
    const stats = monitor.getStats();
    expect(stats.commandsExecuted).toBe(3);
    expect(stats.lastCommand).toEqual({ commandName: 'emit', commandInput: 'emit 2' });
    expect(history).toEqual(['emit 1', 'emit 2']);
    expect(interpreter.getVarValue('sum')).toBe('undefined:waiting for a');
    expect(reports).toEqual([]);
  });

  it('104: the third failure of one command halts the update; counters live across updates (Reference)', async () => {
    const monitor = new DefaultExecutionMonitor({ commandLimit: 100, promptCharLimit: 100_000, failureLimit: 2 });
    const registry = createRegistry(({ command, args }, response) => {
      if (command === 'failer') return response.fail(`fail-${args.join('-')}`);
      throw new Error(`Unexpected command ${command}`);
    }, [{ name: 'failer', description: 'Always fails for testing' }]);
    const interpreter = new LightSOPLangInterpreter('@x failer first', registry, { executionMonitor: monitor });
    await interpreter.ready;
    expect(interpreter.getVarValue('x')).toBe('fail:fail-first');
    await interpreter.updateCode('@x failer second');
    await interpreter.ready;
    await expect(interpreter.updateCode('@x failer third')).rejects.toThrow('Execution halted: failure limit exceeded for command failer');
    const stats = monitor.getStats();
    expect(stats.failureCounts.failer).toBe(3);
    expect(stats.lastFailure).toEqual({ commandName: 'failer', reason: 'fail-third' });
    expect(stats.failureHistory).toHaveLength(3);
  });

  it('statistics capture the commands of a run (Reference)', async () => {
    const monitor = new DefaultExecutionMonitor({ commandLimit: 10, promptCharLimit: 1_000_000, failureLimit: 5 });
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit alpha\n@b emit beta\n@combo combine $a $b', registry, { executionMonitor: monitor });
    await interpreter.ready;
    const stats = monitor.getStats();
    expect(stats.commandsExecuted).toBe(3);
    expect(stats.failureCounts.failer).toBeUndefined();
    expect(stats.lastCommand!.commandName).toBe('combine');
    expect(stats.commandHistory.map((c) => c.commandInput)).toEqual(['emit alpha', 'emit beta', 'combine alpha beta']);
    expect(Object.keys(stats).sort()).toEqual([
      'commandHistory', 'commandLimit', 'commandsExecuted', 'failureCounts', 'failureHistory', 'failureLimit',
      'lastCommand', 'lastFailure', 'lastPrompt', 'promptCharLimit', 'promptHistory', 'promptsConsidered', 'totalPromptChars',
    ]);
  });

  it('105: a prompt budget halts an english script before the model is called (Reference)', async () => {
    const monitor = new DefaultExecutionMonitor({ commandLimit: 100, promptCharLimit: 50, failureLimit: 10 });
    const agent = scriptedAgent('@value emit ok');
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('#!english\nCreate a very verbose script that exceeds the prompt limit.', registry, { llmAgent: agent, executionMonitor: monitor });
    await expect(interpreter.ready).rejects.toThrow('Execution halted: prompt budget exceeded (50 characters)');
    expect(monitor.getStats().promptsConsidered).toBe(1);
    expect(agent.prompts).toHaveLength(0);
  });

  it('106: a halted run calls neither onFail nor a replan', async () => {
    const reports: unknown[] = [];
    const agent = scriptedAgent('@x broken\n@lastAnswer final_answer $x', '@x emit fixed\n@lastAnswer final_answer $x');
    const interpreter = new LightSOPLangInterpreter('#!english\nfix it', finalRegistry().registry, (f) => reports.push(f), {
      llmAgent: agent,
      executionMonitor: new DefaultExecutionMonitor({ failureLimit: 0 }),
    });
    await expect(interpreter.ready).rejects.toThrow('Execution halted: failure limit exceeded for command broken');
    expect(agent.prompts).toHaveLength(1);
    expect(reports).toEqual([]);
  });

  it('Q19: a halt waits for the commands in flight and keeps their results', async () => {
    // @a settles only after the monitor has refused @b (over the budget of one) and halted.
    const halted = gate();
    const monitor = new DefaultExecutionMonitor({ commandLimit: 1 });
    const before = monitor.beforeExecuteCommand.bind(monitor);
    monitor.beforeExecuteCommand = (command: string, raw: string) => {
      try {
        before(command, raw);
      } catch (error) {
        halted.open();
        throw error;
      }
    };
    const { registry } = checklistRegistry({
      slow: async (_p, r) => {
        await halted.promise;
        return r.success('slow done');
      },
    });
    const interpreter = new LightSOPLangInterpreter('@a slow\n@b emit 1', registry, { executionMonitor: monitor });
    await expect(interpreter.ready).rejects.toThrow('command budget exceeded (1)');
    expect(interpreter.getVarValue('a')).toBe('slow done');
    expect(interpreter.getVarValue('b')).toBe('undefined:definition changed');
  });
});

describe('#!english scripts', () => {
  it('108: the initial prompt names the round, instructions, input and commands (Reference)', async () => {
    const agent = scriptedAgent('@result emit $input\n@lastAnswer final_answer $result');
    const { registry } = finalRegistry();
    const interpreter = new LightSOPLangInterpreter('#!english\nReturn the provided input.', registry, 'context-payload', { llmAgent: agent });
    await interpreter.ready;
    const prompt = agent.prompts[0]!;
    expect(prompt).toContain('Generate an initial script');
    expect(prompt).toContain('Instructions:\nReturn the provided input.');
    expect(prompt).toContain('Input context:\ncontext-payload');
    expect(prompt).toContain('Commands:\n- emit: emit for tests\n- combine: combine for tests');
    expect(interpreter.getVarValue('result')).toBe('context-payload');
    expect(interpreter.currentSourceCode).toBe('@result emit $input\n@lastAnswer final_answer $result');
  });

  it('109: generated scripts iterate until success; the revision request carries failures, variables and commands (Reference)', async () => {
    const agent = new MockLLMAgent((prompt) => {
      if (prompt.includes('Generate an initial script')) return '@seed emit base\n@broken failer $seed\n@result combine $broken done';
      if (prompt.includes('Attempt 1')) return '@seed emit base\n@result combine $seed done';
      throw new Error('Unexpected prompt content');
    });
    const monitor = new DefaultExecutionMonitor();
    const { registry, history } = checklistRegistry({ failer: (_p, r) => r.fail('simulated failure') });
    const english = '#!english\nEnsure we prepare a seed value and combine it with the word done.\nThe initial attempt is expected to fail.';
    const interpreter = new LightSOPLangInterpreter(english, registry, { llmAgent: agent, maxLlmaRounds: 5, executionMonitor: monitor });
    await interpreter.ready;
    expect([interpreter.getVarValue('seed'), interpreter.getVarValue('result')]).toEqual(['base', 'base+done']);
    const [first, second] = promptHistory(monitor);
    expect(monitor.getStats().promptsConsidered).toBe(2);
    expect([first!.request.reason, second!.request.reason]).toEqual(['initial', 'failure']);
    expect(second!.request.failures[0]).toEqual({ variable: 'broken', reason: 'fail:simulated failure' });
    expect(second!.request.variables.map((v) => v.name).sort()).toEqual(['broken', 'result', 'seed']);
    expect(second!.request.commands.map((c) => c.name).sort()).toEqual(['canceler', 'combine', 'emit', 'failer']);
    expect(history.filter((h) => h.startsWith('failer'))).toHaveLength(1);
    expect(first!.prompt).toMatch(/Ensure we prepare a seed value/);
    const revision = agent.prompts[1]!;
    expect(revision).toContain('Attempt 1:');
    expect(revision).toContain('Previous code:\n@seed emit base\n@broken failer $seed');
    expect(revision).toContain('Failures:\n- broken: fail:simulated failure');
    expect(revision).toContain('Variable snapshot:\n- seed: success => base\n- broken: fail => fail:simulated failure\n- result: undefined => undefined:waiting for broken');
  });

  it('scripts can be refined across several rounds, cancellations included (Reference)', async () => {
    const agent = new MockLLMAgent((prompt) => {
      if (prompt.includes('Generate an initial script')) return '@seed emit alpha\n@result failer $seed';
      if (prompt.includes('Attempt 1')) return '@seed emit alpha\n@result canceler $seed';
      if (prompt.includes('Attempt 2')) return '@seed emit alpha\n@result successor $seed';
      throw new Error('Unexpected prompt content');
    });
    const monitor = new DefaultExecutionMonitor();
    const { registry } = checklistRegistry({
      failer: (_p, r) => r.fail('planned failure'),
      canceler: (_p, r) => r.cancel('planned cancel'),
      successor: ({ args }, r) => r.success(`${args.join('#')}#done`),
    });
    const interpreter = new LightSOPLangInterpreter('#!english\nStart from alpha and produce a success result.', registry, { llmAgent: agent, executionMonitor: monitor });
    await interpreter.ready;
    await interpreter.ready;
    await interpreter.ready;
    expect(interpreter.getVarValue('result')).toBe('alpha#done');
    const [, failPrompt, cancelPrompt] = promptHistory(monitor);
    expect(failPrompt!.request.failures[0]!.reason).toBe('fail:planned failure');
    expect(cancelPrompt!.request.failures[0]!.reason).toBe('canceled:command canceler canceled (planned cancel)');
  });

  it('110: a one-block fenced answer is unwrapped; an answer with prose before the fence is not', async () => {
    const { registry } = finalRegistry();
    const fenced = new LightSOPLangInterpreter('#!english\nanswer', registry, { llmAgent: scriptedAgent('```sop\n@a emit x\n@lastAnswer final_answer $a\n```') });
    await fenced.ready;
    expect(fenced.getVarValue('lastAnswer')).toBe('x');
    const prose = scriptedAgent('Here is the plan:\n```sop\n@a emit x\n@lastAnswer final_answer $a\n```');
    const rejected = new LightSOPLangInterpreter('#!english\nanswer', registry, { llmAgent: prose, maxLlmaRounds: 1 });
    await expect(rejected.ready).rejects.toThrow('Line 1: declaration must start with @');
  });

  it('111 (Q11): with final_answer listed, a plan without a final declaration is a failed round', async () => {
    const agent = scriptedAgent('@a emit x', '@a emit x\n@lastAnswer final_answer $a');
    const interpreter = new LightSOPLangInterpreter('#!english\nanswer', finalRegistry().registry, { llmAgent: agent });
    await interpreter.ready;
    expect(agent.prompts).toHaveLength(2);
    expect(agent.prompts[1]).toContain('- __plan__: plan-error:LightSOPLang plans generated from #!english must include at least one');
    expect(interpreter.getVarValue('lastAnswer')).toBe('x');
  });

  it('112: failures and cancellations trigger a revision; undefined variables do not', async () => {
    const quiet = scriptedAgent('@n nothing\n@lastAnswer final_answer done');
    const { registry } = finalRegistry({ nothing: () => undefined });
    const first = new LightSOPLangInterpreter('#!english\nanswer', registry, { llmAgent: quiet });
    await first.ready;
    expect(quiet.prompts).toHaveLength(1);
    expect(first.getVarValue('n')).toBe('undefined:command returned no response');
    const cancel = scriptedAgent('@c canceler\n@lastAnswer final_answer ok', '@c emit fine\n@lastAnswer final_answer ok');
    const second = new LightSOPLangInterpreter('#!english\nanswer', registry, { llmAgent: cancel });
    await second.ready;
    expect(cancel.prompts).toHaveLength(2);
    expect(second.getVarValue('c')).toBe('fine');
  });

  it('113: with maxLlmaRounds 2 and a plan that keeps failing, two prompts are sent and the result stays failed (Reference)', async () => {
    const agent = new MockLLMAgent(() => '@value emit stale\n@result validate $value');
    let attempts = 0;
    const registry = createRegistry(({ command, args }, response) => {
      attempts += 1;
      if (command === 'emit') return response.success(args[0] ?? '');
      if (command === 'validate') return args[0] === 'stale' ? response.fail('stale') : response.success('ok');
      throw new Error(`Unknown command ${command}`);
    }, [{ name: 'emit', description: 'Emit literal' }, { name: 'validate', description: 'Validate value' }]);
    const reports: unknown[] = [];
    const interpreter = new LightSOPLangInterpreter('#!english\nProduce a value and ensure validation passes.', registry, (f) => reports.push(f), {
      llmAgent: agent,
      maxLlmaRounds: 2,
      executionMonitor: new DefaultExecutionMonitor({ failureLimit: 50 }),
    });
    await interpreter.ready;
    expect(interpreter.getVarValue('result')).toBe('fail:stale');
    expect(agent.prompts).toHaveLength(2);
    expect(attempts).toBe(2);
    expect(reports).toEqual([[{ variable: 'result', reason: 'fail:stale' }]]);
  });

  it('114: by default at most five prompts are sent', async () => {
    const agent = scriptedAgent('@x broken\n@lastAnswer final_answer $x');
    const interpreter = new LightSOPLangInterpreter('#!english\nanswer', finalRegistry().registry, { llmAgent: agent });
    await interpreter.ready;
    expect(agent.prompts).toHaveLength(5);
  });

  it('115: a revision keeps unchanged successful steps without running them again', async () => {
    const agent = scriptedAgent('@a emit keep\n@x broken\n@lastAnswer final_answer $x', '@a emit keep\n@x combine $a\n@lastAnswer final_answer $x');
    const { registry, history } = finalRegistry();
    const interpreter = new LightSOPLangInterpreter('#!english\nanswer', registry, { llmAgent: agent });
    await interpreter.ready;
    expect(history.filter((h) => h === 'emit keep')).toHaveLength(1);
    expect(interpreter.getVarValue('lastAnswer')).toBe('keep');
  });

  it('116 (Q8, Q18): onPlanGenerated does not break revisions and numbers attempts 0, 1', async () => {
    const events: unknown[] = [];
    const agent = scriptedAgent('@x broken\n@lastAnswer final_answer $x', '@x emit ok\n@lastAnswer final_answer $x');
    const interpreter = new LightSOPLangInterpreter('#!english\nanswer', finalRegistry().registry, {
      llmAgent: agent,
      onPlanGenerated: ({ code, previousCode, reason, attempt }) => events.push({ code, previousCode, reason, attempt }),
    });
    await interpreter.ready;
    expect(events).toEqual([
      { code: '@x broken\n@lastAnswer final_answer $x', previousCode: null, reason: 'initial', attempt: 0 },
      { code: '@x emit ok\n@lastAnswer final_answer $x', previousCode: '@x broken\n@lastAnswer final_answer $x', reason: 'failure', attempt: 1 },
    ]);
    expect(interpreter.getVarValue('lastAnswer')).toBe('ok');
  });

  it('117 (Q20): one await of ready covers every revision', async () => {
    const agent = scriptedAgent('@x broken\n@lastAnswer final_answer $x', '@x failer\n@lastAnswer final_answer $x', '@x emit ok\n@lastAnswer final_answer $x');
    const interpreter = new LightSOPLangInterpreter('#!english\nanswer', finalRegistry().registry, { llmAgent: agent });
    await interpreter.ready;
    expect(agent.prompts).toHaveLength(3);
    expect(interpreter.getVarValue('lastAnswer')).toBe('ok');
  });

  it('Q10: instructions keep text after the header and ignore blank lines before it', async () => {
    const agent = scriptedAgent('@lastAnswer final_answer ok');
    await new LightSOPLangInterpreter('\n\n#!english Say hello\nand goodbye', finalRegistry().registry, { llmAgent: agent }).ready;
    expect(agent.prompts[0]).toContain('Instructions:\nSay hello\nand goodbye\n');
  });

  it('generateOnly stores the generated plan without running it and reports it to onPlanGenerated', async () => {
    const events: string[] = [];
    const { registry, history } = finalRegistry();
    const interpreter = new LightSOPLangInterpreter('#!english\nanswer', registry, {
      llmAgent: scriptedAgent('```\n@a emit x\n@lastAnswer final_answer $a\n```'),
      generateOnly: true,
      onPlanGenerated: ({ reason }) => events.push(reason),
    });
    await interpreter.ready;
    expect(interpreter.currentSourceCode).toBe('@a emit x\n@lastAnswer final_answer $a');
    expect(history).toEqual([]);
    expect(events).toEqual(['initial']);
  });

  it('llmInvocationContext sends the user prompt, with the plan instructions as system text', async () => {
    const agent = scriptedAgent('@lastAnswer final_answer ok');
    const interpreter = new LightSOPLangInterpreter('#!english\nanswer', finalRegistry().registry, {
      llmAgent: agent,
      llmInvocationContext: { userPrompt: 'hello there', history: [{ role: 'user', content: 'earlier' }] },
    });
    await interpreter.ready;
    expect(agent.prompts[0]).toBe('hello there');
    const history = agent.options[0]!.history as { role: string; content: string }[];
    expect(history[0]!.role).toBe('system');
    expect(history[0]!.content).toContain('Generate an initial script');
    expect(history[1]).toEqual({ role: 'user', content: 'earlier' });
  });

  it('a later plain update leaves the english loop and runs as code', async () => {
    const agent = scriptedAgent('@a emit x\n@lastAnswer final_answer $a');
    const { registry } = finalRegistry();
    const interpreter = new LightSOPLangInterpreter('#!english\nanswer', registry, { llmAgent: agent });
    await interpreter.ready;
    await interpreter.updateCode('@a emit x\n@b failer\n@lastAnswer final_answer $a');
    expect(agent.prompts).toHaveLength(1);
    expect(interpreter.getVarValue('b')).toBe('fail:oops');
  });
});
