// Spec section 10, items 105 and 107-117: #!english scripts, with a scripted agent object and,
// end to end, with the real OpenAI-compatible client against a scripted HTTP server.
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, DefaultExecutionMonitor, Interpreter, OpenAiCompatibleAgent, type LlmAgent } from '@lightsop/runtime';
// An internal of the runtime, tested directly.
import { stripFences } from '../../packages/runtime/src/english/prompt';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { testRegistry } from '../helpers/registry';
import { deferred } from '../helpers/sync';

/** An agent that answers from a list and records the prompts it got. */
function scriptedAgent(answers: (string | ((prompt: string) => string))[]) {
  const prompts: string[] = [];
  const agent: LlmAgent & { prompts: string[] } = {
    prompts,
    async executePrompt(prompt: string) {
      prompts.push(prompt);
      const next = answers[Math.min(prompts.length - 1, answers.length - 1)]!;
      return typeof next === 'function' ? next(prompt) : next;
    },
  };
  return agent;
}

const withFinal = () => testRegistry({ final_answer: (p, r) => r.success(p.args[0]), broken: (_p, r) => r.fail('simulated failure') });

describe('#!english scripts', () => {
  it('107: an english script without an agent is a configuration error', async () => {
    const interpreter = new Interpreter({ registry: testRegistry() });
    await expect(interpreter.updateCode('#!english\ndo it')).rejects.toBeInstanceOf(ConfigurationError);
    await expect(interpreter.updateCode('#!english\ndo it')).rejects.toThrow('LLMAgent is required to process #!english scripts');
  });
  it('108: the initial prompt', async () => {
    const agent = scriptedAgent(['@a emit hi\n@lastAnswer final_answer $a']);
    const interpreter = new Interpreter({ registry: withFinal(), llmAgent: agent, input: 'the input' });
    await interpreter.updateCode('#!english\nSay hi to the user.');
    const prompt = agent.prompts[0]!;
    expect(prompt).toContain('Generate an initial script');
    expect(prompt).toContain('Instructions:\nSay hi to the user.');
    expect(prompt).toContain('Input context:\nthe input');
    expect(prompt).toContain('Commands:\n- emit: test command emit');
    expect(interpreter.getVarValue('lastAnswer')).toBe('hi');
  });
  it('109: a revision prompt carries the attempt, previous code, failures and a snapshot', async () => {
    const agent = scriptedAgent(['@x broken\n@lastAnswer final_answer $x', '@x emit fixed\n@lastAnswer final_answer $x']);
    const interpreter = new Interpreter({ registry: withFinal(), llmAgent: agent });
    await interpreter.updateCode('#!english\nfix things');
    const revision = agent.prompts[1]!;
    expect(revision).toContain('Attempt 1:');
    expect(revision).toContain('Previous code:\n@x broken');
    expect(revision).toContain('Failures:\n- x: fail:simulated failure');
    expect(revision).toContain('Variable snapshot:\n- x: fail => fail:simulated failure');
    expect(interpreter.getVarValue('lastAnswer')).toBe('fixed');
  });
  it('110: a one-block fenced answer is unwrapped; prose before a fence is not', () => {
    expect(stripFences('```sop\n@a emit x\n```')).toBe('@a emit x');
    expect(stripFences('  ```\n@a emit x\n@b emit y\n```  \n')).toBe('@a emit x\n@b emit y');
    expect(stripFences('Here:\n```sop\n@a emit x\n```')).toBe('Here:\n```sop\n@a emit x\n```');
    expect(stripFences('```light-sop\n@a emit x\n```')).toBe('```light-sop\n@a emit x\n```');
    expect(stripFences('```@a emit x```')).toBe('```@a emit x```');
  });
  it('111 (Q11): without final_answer, a generated plan is a failed round and the model is asked again', async () => {
    const agent = scriptedAgent(['@a emit x', '@a emit x\n@lastAnswer final_answer $a']);
    const interpreter = new Interpreter({ registry: withFinal(), llmAgent: agent });
    await interpreter.updateCode('#!english\nanswer');
    expect(agent.prompts).toHaveLength(2);
    expect(agent.prompts[1]).toContain('- __plan__: plan-error:');
    expect(interpreter.getVarValue('lastAnswer')).toBe('x');
  });
  it('an invalid generated plan is a failed round; when no round remains the update rejects', async () => {
    const agent = scriptedAgent(['@a emit $nope\n@lastAnswer final_answer $a']);
    const interpreter = new Interpreter({ registry: withFinal(), llmAgent: agent, maxLlmaRounds: 2 });
    await expect(interpreter.updateCode('#!english\nanswer')).rejects.toThrow();
    expect(agent.prompts).toHaveLength(2);
  });
  it('a blank answer or a model error in the initial round is a failed round, not a rejection (Q11)', async () => {
    let calls = 0;
    const agent: LlmAgent = {
      async executePrompt(prompt) {
        calls++;
        if (calls === 1) return '   ';
        if (calls === 2) throw new Error('model unavailable');
        expect(prompt).toContain('- __plan__: plan-error:the language model failed: model unavailable');
        return '@lastAnswer final_answer ok';
      },
    };
    const interpreter = new Interpreter({ registry: withFinal(), llmAgent: agent });
    await interpreter.updateCode('#!english\nanswer');
    expect(calls).toBe(3);
    expect(interpreter.getVarValue('lastAnswer')).toBe('ok');
  });
  it('an abort while the model is writing the plan resolves the update as aborted', async () => {
    const controller = new AbortController();
    const agent: LlmAgent = {
      executePrompt: (_prompt, options) => new Promise((_resolve, reject) => {
        options?.signal?.addEventListener('abort', () => reject(new Error('aborted')));
        controller.abort();
      }),
    };
    const interpreter = new Interpreter({ registry: withFinal(), llmAgent: agent, signal: controller.signal });
    await expect(interpreter.updateCode('#!english\nanswer')).resolves.toMatchObject({ aborted: true });
  });
  it('112: failures and cancellations trigger a revision; undefined variables do not', async () => {
    const agent = scriptedAgent(['@n nothing\n@lastAnswer final_answer done']);
    const registry = testRegistry({ final_answer: (p, r) => r.success(p.args[0]), nothing: () => undefined });
    const interpreter = new Interpreter({ registry, llmAgent: agent });
    await interpreter.updateCode('#!english\nanswer');
    expect(agent.prompts).toHaveLength(1);
    const cancel = scriptedAgent(['@c canceler\n@lastAnswer final_answer ok', '@c emit fine\n@lastAnswer final_answer ok']);
    const second = new Interpreter({ registry: withFinal(), llmAgent: cancel });
    await second.updateCode('#!english\nanswer');
    expect(cancel.prompts).toHaveLength(2);
  });
  it('113: with maxLlmaRounds 2 and a plan that keeps failing, exactly two prompts are sent', async () => {
    const agent = scriptedAgent(['@x stale\n@lastAnswer final_answer $x']);
    const reports: unknown[] = [];
    const registry = testRegistry({ final_answer: (p, r) => r.success(p.args[0]), stale: (_p, r) => r.fail('stale') });
    const interpreter = new Interpreter({ registry, llmAgent: agent, maxLlmaRounds: 2, onFail: (f) => reports.push(f) });
    await interpreter.updateCode('#!english\nanswer');
    expect(agent.prompts).toHaveLength(2);
    expect(interpreter.getVarValue('x')).toBe('fail:stale');
    expect(reports).toEqual([[{ variable: 'x', reason: 'fail:stale' }]]);
  });
  it('114: by default at most five prompts are sent', async () => {
    const agent = scriptedAgent(['@x broken\n@lastAnswer final_answer $x']);
    const interpreter = new Interpreter({ registry: withFinal(), llmAgent: agent });
    await interpreter.updateCode('#!english\nanswer');
    expect(agent.prompts).toHaveLength(5);
  });
  it('115: a revision keeps unchanged successful steps without running them again', async () => {
    const agent = scriptedAgent(['@a emit keep\n@x broken\n@lastAnswer final_answer $x', '@a emit keep\n@x combine $a\n@lastAnswer final_answer $x']);
    const registry = withFinal();
    const interpreter = new Interpreter({ registry, llmAgent: agent });
    await interpreter.updateCode('#!english\nanswer');
    expect(registry.log.filter((r) => r === 'emit keep')).toHaveLength(1);
    expect(interpreter.getVarValue('lastAnswer')).toBe('keep');
  });
  it('116 (Q8, Q18): onPlanGenerated does not break revisions and numbers attempts 0, 1, ...', async () => {
    const events: unknown[] = [];
    const agent = scriptedAgent(['@x broken\n@lastAnswer final_answer $x', '@x emit ok\n@lastAnswer final_answer $x']);
    const interpreter = new Interpreter({ registry: withFinal(), llmAgent: agent, onPlanGenerated: (e) => events.push({ reason: e.reason, attempt: e.attempt }) });
    await interpreter.updateCode('#!english\nanswer');
    expect(events).toEqual([{ reason: 'initial', attempt: 0 }, { reason: 'failure', attempt: 1 }]);
  });
  it('117 (Q20): ready settles only after the last revision has run', async () => {
    const agent = scriptedAgent(['@x broken\n@lastAnswer final_answer $x', '@x emit ok\n@lastAnswer final_answer $x']);
    const interpreter = new Interpreter({ registry: withFinal(), llmAgent: agent });
    void interpreter.updateCode('#!english\nanswer');
    await interpreter.ready;
    expect(interpreter.getVarValue('lastAnswer')).toBe('ok');
  });
  it('105: a prompt budget halts before the model is called', async () => {
    const agent = scriptedAgent(['@a emit x']);
    const interpreter = new Interpreter({ registry: withFinal(), llmAgent: agent, executionMonitor: new DefaultExecutionMonitor({ promptCharLimit: 50 }) });
    await expect(interpreter.updateCode('#!english\nanswer')).rejects.toThrow('Execution halted: prompt budget exceeded (50 characters)');
    expect(agent.prompts).toHaveLength(0);
  });
  it('maxLlmaRounds of 0 is a clear configuration error (Q9)', async () => {
    const interpreter = new Interpreter({ registry: withFinal(), llmAgent: scriptedAgent(['x']), maxLlmaRounds: 0 });
    await expect(interpreter.updateCode('#!english\nx')).rejects.toThrow('maxLlmaRounds must be at least 1');
  });
  it('instructions keep text after the header and ignore blank lines before it (Q10)', async () => {
    const agent = scriptedAgent(['@lastAnswer final_answer ok']);
    const interpreter = new Interpreter({ registry: withFinal(), llmAgent: agent });
    await interpreter.updateCode('\n\n#!english Say hello\nand goodbye');
    expect(agent.prompts[0]).toContain('Instructions:\nSay hello\nand goodbye\n');
  });
  it('generateOnly stores the generated plan without running it', async () => {
    const registry = withFinal();
    const interpreter = new Interpreter({ registry, llmAgent: scriptedAgent(['```\n@a emit x\n@lastAnswer final_answer $a\n```']), generateOnly: true });
    await interpreter.updateCode('#!english\nanswer');
    expect(interpreter.currentSourceCode).toBe('@a emit x\n@lastAnswer final_answer $a');
    expect(registry.log).toEqual([]);
  });
  it('an llmInvocationContext sends the user prompt with the plan instructions as system text', async () => {
    const calls: { prompt: string; history: unknown }[] = [];
    const agent: LlmAgent = { async executePrompt(prompt, options) { calls.push({ prompt, history: options?.history }); return '@lastAnswer final_answer ok'; } };
    const interpreter = new Interpreter({ registry: withFinal(), llmAgent: agent, llmInvocationContext: { userPrompt: 'hello there', history: [{ role: 'user', content: 'earlier' }] } });
    await interpreter.updateCode('#!english\nanswer');
    expect(calls[0]!.prompt).toBe('hello there');
    expect((calls[0]!.history as { role: string; content: string }[])[0]!.content).toContain('Generate an initial script');
    expect((calls[0]!.history as unknown[])[1]).toEqual({ role: 'user', content: 'earlier' });
  });
});

describe('#!english over HTTP with the OpenAI-compatible client', () => {
  let server: LlmServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  it('generates, runs, replans after a failure and retries a 500 answer', async () => {
    server = await startLlmServer((req, i) => {
      if (i === 0) return { status: 500, text: 'overloaded' };
      const prompt = req.messages.at(-1)!.content;
      return prompt.includes('Attempt 1:')
        ? '```sop\n@x emit repaired\n@lastAnswer final_answer $x\n```'
        : '@x broken\n@lastAnswer final_answer $x';
    });
    const agent = new OpenAiCompatibleAgent({ baseUrl: server.url, model: 'scripted', maxRetries: 2, timeoutMs: 5000 });
    const interpreter = new Interpreter({ registry: withFinal(), llmAgent: agent });
    await interpreter.updateCode('#!english\nRepair the plan.');
    expect(server.requests).toHaveLength(3);
    expect(server.requests[1]!.model).toBe('scripted');
    expect(server.prompts()[2]).toContain('Failures:\n- x: fail:simulated failure');
    expect(interpreter.getVarValue('lastAnswer')).toBe('repaired');
  });

  it('streams tokens when asked and can be aborted', async () => {
    const reached = deferred();
    server = await startLlmServer((_req, i) => {
      if (i === 0) return '@lastAnswer final_answer "streamed answer"';
      reached.resolve();
      return { hold: true };
    });
    const tokens: string[] = [];
    const agent = new OpenAiCompatibleAgent({ baseUrl: server.url, model: 'm', onToken: (t) => tokens.push(t) });
    expect(await agent.executePrompt('go')).toBe('@lastAnswer final_answer "streamed answer"');
    expect(tokens.length).toBeGreaterThan(1);
    const controller = new AbortController();
    const pending = agent.executePrompt('slow', { signal: controller.signal });
    // Abort once the request is at the server, which never answers it.
    await reached.promise;
    controller.abort();
    await expect(pending).rejects.toThrow();
  });
});
