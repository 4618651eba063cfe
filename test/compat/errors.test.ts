// The reference's error texts (spec 4.6), thrown where the reference throws them: `ready` (and
// the promise of `updateCode`) rejects, nothing runs, and the line numbers are the reference's.
// Spec section 10, items 8, 9, 18, 19, 22, 23, 25, 41-43, 47-53, 85, 86, 107 and Q3, Q5, Q9, Q11.
import { describe, expect, it } from 'vitest';
import LightSOPLangInterpreter from '@lightsop/runtime/compat';
import { checklistRegistry, MockLLMAgent, scriptedAgent } from './helpers';

/** Runs code in a fresh interpreter and returns the message `ready` rejects with, and the commands run. */
async function rejection(code: string, input?: string): Promise<{ message: string; history: string[] }> {
  const { registry, history } = checklistRegistry();
  const interpreter = input === undefined ? new LightSOPLangInterpreter(code, registry) : new LightSOPLangInterpreter(code, registry, input);
  const error = await interpreter.ready.then(() => null, (e: unknown) => e);
  if (!(error instanceof Error)) throw new Error(`expected a rejection for ${JSON.stringify(code)}`);
  return { message: error.message, history };
}

const message = async (code: string, input?: string) => (await rejection(code, input)).message;

describe('syntax errors', () => {
  it('25: a text line before the first declaration', async () => {
    expect(await message('# intro\n\nhello world\n@a emit 1')).toBe('Line 3: declaration must start with @');
    expect(await message('note # with a comment\n@a emit 1')).toBe('Line 1: declaration must start with @');
    const { registry } = checklistRegistry();
    const fine = new LightSOPLangInterpreter('  \n# intro\n   # more\n\n@a emit 1', registry);
    await fine.ready;
    expect(fine.getVarValue('a')).toBe('1');
  });

  it('22: a missing variable name', async () => {
    expect(await message('@ emit 1')).toBe('Line 1: variable name missing');
    expect(await message('@a emit 1\n@#foo')).toBe('Line 2: variable name missing');
  });

  it('23: a missing command', async () => {
    expect(await message('@x')).toBe('Line 1: command name missing for @x');
    expect(await message('@a emit 1\n\n@x # hi')).toBe('Line 3: command name missing for @x');
    expect(await message('@x "" a')).toBe('Line 1: command name missing for @x');
  });

  it('8, 9: invalid escapes and unterminated strings', async () => {
    expect(await message('@x emit "abc\\')).toBe('Invalid escape sequence at line 1');
    expect(await message('@a emit 1\n@x emit "abc\\   ')).toBe('Invalid escape sequence at line 2');
    expect(await message('@x emit "abc\\"')).toBe('Unterminated string literal at line 1');
    expect(await message("@a emit 1\n\n@x emit 'abc")).toBe('Unterminated string literal at line 3');
  });

  it('41: an unterminated here-doc names the header line plus one, also after blank lines', async () => {
    expect(await message('@a emit 1\n@x assign\n--begin-T--\nhello')).toBe('Line 3: missing --end-T-- for here-doc');
    expect(await message('@x assign\n\n\n--begin-T--\nhello')).toBe('Line 2: missing --end-T-- for here-doc');
    expect(await message('@x assign\n--begin-a--b--\nhello\n--end-a--\n')).toBe('Line 2: missing --end-a--b-- for here-doc');
  });

  it('43: a line starting with @ inside a here-doc body ends the block', async () => {
    expect(await message('@x assign\n--begin-T--\n  @john please call\n--end-T--')).toBe('Line 2: missing --end-T-- for here-doc');
  });

  it('42: content after the end marker, a detached comment included', async () => {
    expect(await message('@x assign\n--begin-T--\nbody\n--end-T--\ntrailing')).toBe('Line 5: unexpected content after --end-T--');
    expect(await message('@x assign\n--begin-T--\nbody\n--end-T--\n\n# detached\n\n@y emit 1')).toBe('Line 5: unexpected content after --end-T--');
  });

  it('Q3: with blank lines before the begin marker the line is counted as the reference counts it', async () => {
    // The trailing text is on line 7; the reference says 5 (two blank lines before the begin marker).
    expect(await message('@x assign\n\n\n--begin-T--\nbody\n--end-T--\nextra')).toBe('Line 5: unexpected content after --end-T--');
  });

  it('2: CRLF line breaks give the same line numbers', async () => {
    expect(await message('@a emit 1\r\n@x assign\r\n--begin-T--\r\nbody\r\n--end-T--\r\nextra')).toBe('Line 6: unexpected content after --end-T--');
    expect(await message('# c\r\nstray\r\n@a emit 1')).toBe('Line 2: declaration must start with @');
  });
});

describe('topology errors', () => {
  it('47: a repeated name; nothing runs', async () => {
    const { message: text, history } = await rejection('@value emit 1\n@other emit 3\n@value emit 2');
    expect(text).toBe('Variable value declared multiple times');
    expect(history).toEqual([]);
  });

  it('48: a reference to an undeclared name; nothing runs', async () => {
    const { message: text, history } = await rejection('@a emit 1\n@b emit $zz');
    expect(text).toBe('Variable b depends on undefined variable zz');
    expect(history).toEqual([]);
  });

  it('49: cycles, self-references included, stop everything, unrelated declarations too', async () => {
    expect(await message('@a emit $a')).toBe('Cycle detected in LightSOPLang declarations');
    const { message: text, history } = await rejection('@a echo $b\n@b echo $a\n@c emit unrelated');
    expect(text).toBe('Cycle detected in LightSOPLang declarations');
    expect(history).toEqual([]);
  });

  it('18, 19: trailing punctuation is part of a name, and a lone $ names the empty name', async () => {
    expect(await message('@a emit 1\n@x emit $a,')).toBe('Variable x depends on undefined variable a,');
    expect(await message('@x emit $')).toBe('Variable x depends on undefined variable ');
  });

  it('50-52: the first error is the one the reference reports', async () => {
    expect(await message('@a emit $zz\n@b emit 1\n@c emit "abc')).toBe('Unterminated string literal at line 3');
    expect(await message('@b emit 1\n@b emit 2\n@c emit 3\n@d emit "x')).toBe('Variable b declared multiple times');
    expect(await message('@a emit $b\n@b emit $a\n@c emit $zz')).toBe('Variable c depends on undefined variable zz');
  });

  it('53: $input is undefined without an input and runs with one', async () => {
    expect(await message('@r emit $input')).toBe('Variable r depends on undefined variable input');
    const { registry, history } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@r emit $input', registry, 'payload-value');
    await interpreter.ready;
    expect(history).toEqual(['emit payload-value']);
  });

  it('an undefined variable is reported for the first declaration in table order, as the reference does', async () => {
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@b emit 1\n@a emit 2', registry);
    await interpreter.ready;
    // Source order would name a first; the table keeps b before a.
    await expect(interpreter.updateCode('@a emit $x\n@b emit $y')).rejects.toThrow('Variable b depends on undefined variable y');
    await expect(interpreter.updateCode('@a emit $x\n@b emit 1\n@n emit $q')).rejects.toThrow('Variable a depends on undefined variable x');
  });

  it('the error is an Error carrying the diagnostics in check order', async () => {
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit $x\n@b emit $y', registry);
    const error = (await interpreter.ready.catch((e: unknown) => e)) as Error & { diagnostics: { code: string; range: { line: number } }[] };
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe('Variable a depends on undefined variable x');
    expect(error.diagnostics.map((d) => `${d.code}@${d.range.line}`)).toEqual(['undefined-variable@1', 'undefined-variable@2']);
  });
});

describe('rejected updates', () => {
  it('85 (Q5): removing a declaration that is still referenced rejects and leaves the values as they were', async () => {
    const { registry, history } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit 1\n@b combine $a', registry);
    await interpreter.ready;
    await expect(interpreter.updateCode('@b combine $a')).rejects.toThrow('Variable b depends on undefined variable a');
    expect([interpreter.getVarValue('a'), interpreter.getVarValue('b')]).toEqual(['1', '1']);
    expect([...interpreter.variables.keys()]).toEqual(['a', 'b']);
    expect(interpreter.currentSourceCode).toBe('@a emit 1\n@b combine $a');
    expect(history).toEqual(['emit 1', 'combine 1']);
  });

  it('86 (Q5): a rejected update does not leave half-applied state behind', async () => {
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit 1', registry);
    await interpreter.ready;
    await expect(interpreter.updateCode('@a emit 2\n@b emit $zz')).rejects.toThrow('Variable b depends on undefined variable zz');
    expect(interpreter.getVarValue('a')).toBe('1');
    await interpreter.updateCode('@a emit 2\n@b emit x');
    expect(interpreter.getVarValue('a')).toBe('2');
  });

  it('a rejected update does not block the updates queued after it', async () => {
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit 1\n@a emit 2', registry);
    const rejected = interpreter.ready;
    void interpreter.updateCode('@a emit 3'); // settles through interpreter.ready, awaited next
    await interpreter.ready;
    await expect(rejected).rejects.toThrow('Variable a declared multiple times');
    expect(interpreter.getVarValue('a')).toBe('3');
  });
});

describe('english script errors', () => {
  const finals = () => checklistRegistry({ final_answer: ({ args }, r) => r.success(args[0]) }).registry;

  it('107: an english script without an agent', async () => {
    const interpreter = new LightSOPLangInterpreter('#!english\nmake something', finals());
    await expect(interpreter.ready).rejects.toThrow('LLMAgent is required to process #!english scripts');
  });

  it('an agent without executePrompt is accepted at construction and rejected for an english script', async () => {
    const interpreter = new LightSOPLangInterpreter('@a emit 1', finals(), { llmAgent: { prompt: () => '' } as never });
    await interpreter.ready;
    expect(interpreter.getVarValue('a')).toBe('1');
    await expect(interpreter.updateCode('#!english\nmake something')).rejects.toThrow('LLMAgent must provide executePrompt(promptText)');
  });

  it('Q11: an invalid generated plan is retried while rounds remain, then rejects with the reference text', async () => {
    const agent = scriptedAgent('@a emit $nope\n@lastAnswer final_answer $a');
    const interpreter = new LightSOPLangInterpreter('#!english\nanswer', finals(), { llmAgent: agent, maxLlmaRounds: 2 });
    await expect(interpreter.ready).rejects.toThrow('Variable a depends on undefined variable nope');
    expect(agent.prompts).toHaveLength(2);
    expect(agent.prompts[1]).toContain('- __plan__: plan-error:');
  });

  it('Q11: a plan without final_answer, when the registry lists it, is a failed round', async () => {
    const noFinal = scriptedAgent('@a emit x');
    await expect(new LightSOPLangInterpreter('#!english\nanswer', finals(), { llmAgent: noFinal, maxLlmaRounds: 2 }).ready)
      .rejects.toThrow('LightSOPLang plans generated from #!english must include at least one "final_answer" or "cannot_complete" declaration');
    expect(noFinal.prompts).toHaveLength(2);
  });

  it('a generated plan with a syntax error and no final declaration reports the syntax error, as the reference parses first', async () => {
    const agent = scriptedAgent('@a emit "unclosed');
    await expect(new LightSOPLangInterpreter('#!english\nanswer', finals(), { llmAgent: agent, maxLlmaRounds: 1 }).ready)
      .rejects.toThrow('Unterminated string literal at line 1');
    const undefinedRef = scriptedAgent('@a emit $nope');
    await expect(new LightSOPLangInterpreter('#!english\nanswer', finals(), { llmAgent: undefinedRef, maxLlmaRounds: 1 }).ready)
      .rejects.toThrow('LightSOPLang plans generated from #!english must include at least one');
  });

  it('a blank answer rejects with the reference text', async () => {
    const blank = scriptedAgent('   ');
    await expect(new LightSOPLangInterpreter('#!english\nanswer', finals(), { llmAgent: blank, maxLlmaRounds: 3 }).ready).rejects.toThrow('LLMAgent returned empty code');
    expect(blank.prompts.length).toBeGreaterThan(0);
  });

  it("a model that keeps failing rejects with the model's own error", async () => {
    const failure = new Error('model unavailable');
    const agent = new MockLLMAgent(() => {
      throw failure;
    });
    const interpreter = new LightSOPLangInterpreter('#!english\nanswer', finals(), { llmAgent: agent, maxLlmaRounds: 2 });
    await expect(interpreter.ready).rejects.toBe(failure);
    expect(agent.prompts.length).toBeGreaterThan(0);
  });

  it('Q9: maxLlmaRounds of 0 is a clear configuration error, not "code must be a string"', async () => {
    const agent = scriptedAgent('@lastAnswer final_answer ok');
    const interpreter = new LightSOPLangInterpreter('#!english\nanswer', finals(), { llmAgent: agent, maxLlmaRounds: 0 });
    await expect(interpreter.ready).rejects.toThrow('maxLlmaRounds must be at least 1 (got 0)');
    expect(agent.prompts).toHaveLength(0);
  });
});
