// Spec section 10, items 1-46, through the compat entry point: what commands receive (payload
// args, comments) and what `parseCode` returns. Error items of this range are in errors.test.ts.
import { describe, expect, it } from 'vitest';
import LightSOPLangInterpreter, { parseCode } from '@lightsop/runtime/compat';
import { checklistRegistry, createRegistry } from './helpers';

/** Runs code with the checklist registry; returns the interpreter and each variable's payload. */
async function run(code: string) {
  const { registry, payloads, history } = checklistRegistry();
  const interpreter = new LightSOPLangInterpreter(code, registry);
  await interpreter.ready;
  const byVariable = new Map(payloads.map((p) => [p.variable, p]));
  return { interpreter, history, payload: (name: string) => byVariable.get(name)!, args: (name: string) => byVariable.get(name)!.args };
}

const argTexts = (code: string, name: string) => parseCode(code).get(name)!.arguments.map((a) => (a.type === 'literal' ? a.value : `$${a.name}`));

describe('lines, whitespace, tokens', () => {
  it('1: a lone carriage return is not a line break', async () => {
    const { interpreter, args } = await run('@a emit x\r@b emit y');
    expect([...interpreter.variables.keys()]).toEqual(['a']);
    expect(args('a')).toEqual(['x', '@b', 'emit', 'y']);
  });

  it('2: CRLF line breaks give the same declarations and line numbers as LF', () => {
    const lf = '# c\n@a emit 1\n@b emit $a\ntext\n\n@c assign\n--begin-T--\nbody\n--end-T--';
    expect(parseCode(lf.replace(/\n/g, '\r\n'))).toEqual(parseCode(lf));
    expect(parseCode(lf).get('c')!.lineNumber).toBe(6);
  });

  it('3: leading zero-width characters and a BOM do not hide a declaration', async () => {
    expect((await run('\u200B\u200C\u200D@x emit 1')).interpreter.getVarValue('x')).toBe('1');
    expect((await run('\uFEFF@x emit 1')).interpreter.getVarValue('x')).toBe('1');
  });

  it('4: a zero-width character after spaces makes a text line', async () => {
    const { interpreter, args } = await run('@a emit 0\n  \u200B@x emit 1');
    expect([...interpreter.variables.keys()]).toEqual(['a']);
    expect(args('a')).toEqual(['0', '  \u200B@x emit 1']);
  });

  it('5: a no-break space separates tokens; a zero-width space does not', async () => {
    const { payload } = await run('@x combine a\u00A0b c\u200Bd');
    expect(payload('x').args).toEqual(['a', 'b', 'c\u200Bd']);
  });

  it('6, 7: escapes in quoted strings', async () => {
    const { args } = await run('@x combine "a\\qb" "c\\\\d" "e\\nf" \'g\\"h\' "\\u0041"');
    expect(args('x')).toEqual(['aqb', 'c\\d', 'e\nf', 'g"h', 'u0041']);
  });

  it('10, 11: a closing quote ends the token; empty quotes give an empty argument', async () => {
    const { args } = await run('@a emit A\n@x combine "abc"def "pre"$a ""');
    expect(args('x')).toEqual(['abc', 'def', 'pre', 'A', '']);
    expect(argTexts('@a emit A\n@x combine "abc"def "pre"$a ""', 'x')).toEqual(['abc', 'def', 'pre', '$a', '']);
  });

  it('12: bare tokens keep backslashes and quotes', async () => {
    const { args } = await run('@x combine a\\b abc"def');
    expect(args('x')).toEqual(['a\\b', 'abc"def']);
  });

  it('13: an inline comment needs no space before #', async () => {
    const { payload } = await run('@x combine a#b c');
    expect(payload('x').args).toEqual(['a']);
    expect(payload('x').comment).toBe('b c');
  });

  it('14: # inside quotes is text (Reference)', async () => {
    const { interpreter } = await run('@x emit "value#hash" # comment\n@y emit \'#tag\' # more comments');
    expect([interpreter.getVarValue('x'), interpreter.getVarValue('y')]).toEqual(['value#hash', '#tag']);
  });

  it('15: a backslash protects # from the comment scan', async () => {
    const { payload } = await run('@x combine a\\#b');
    expect([payload('x').args, payload('x').comment]).toEqual([['a\\#b'], '']);
  });

  it("16 (Q1): an apostrophe in a bare word hides a later #", async () => {
    const { payload } = await run("@x combine don't # comment here");
    expect(payload('x').args).toEqual(["don't", '#', 'comment', 'here']);
    expect(payload('x').commentLines).toEqual([]);
  });
});

describe('names and references', () => {
  it('17: names may contain punctuation', async () => {
    const { interpreter, history } = await run('@a.b-c/d emit 1\n@x emit $a.b-c/d');
    expect(interpreter.getVarValue('x')).toBe('1');
    expect(history).toEqual(['emit 1', 'emit 1']);
  });

  it('20: quoted $a, pre$a and $a in continuation text are literal text', async () => {
    const { args } = await run('@a emit A\n@x combine "$a" \'$a\' pre$a\nuses $a here');
    expect(args('x')).toEqual(['$a', '$a', 'pre$a', 'uses $a here']);
  });

  it('21: the command token is never a reference; @john after the command is literal', async () => {
    const seen: string[] = [];
    const registry = createRegistry(({ command, args }, r) => {
      seen.push(`${command}|${args.join('|')}`);
      return r.success('ok');
    });
    await new LightSOPLangInterpreter('@x $cmd arg\n@y emit @john', registry).ready;
    expect(seen).toEqual(['$cmd|arg', 'emit|@john']);
  });

  it('24: a quoted command may contain spaces', async () => {
    const seen: string[] = [];
    await new LightSOPLangInterpreter('@x "my cmd" a', createRegistry(({ command }, r) => r.success(seen.push(command)))).ready;
    expect(seen).toEqual(['my cmd']);
  });
});

describe('declarations, continuation, comments', () => {
  it('26: indented declaration lines are declarations', async () => {
    const { interpreter } = await run('    @x emit 1\n\t@y emit $x');
    expect(interpreter.getVarValue('y')).toBe('1');
  });

  it('27, 28: lines after a header become one argument after the header arguments (Reference)', async () => {
    const { args } = await run('@x combine a b\n\n  first line  \n\n    indented\nlast\n\n@y combine c\ntext line');
    expect(args('x')).toEqual(['a', 'b', '  first line  \n\n    indented\nlast']);
    expect(args('y')).toEqual(['c', 'text line']);
  });

  it('29, 33: a # line between text lines stays text; one directly above the next declaration is its comment (Reference)', async () => {
    const { args, payload } = await run('@x emit\nline 1\n# kept as text\nline 2\n# for y\n@y emit ok');
    expect(args('x')).toEqual(['line 1\n# kept as text\nline 2']);
    expect(payload('y').commentLines).toEqual(['for y']);
  });

  it('30: an indented @ line inside text starts a declaration', async () => {
    const { interpreter, args } = await run('@x emit\nDear team,\n  @john hi\n@z emit done');
    expect([...interpreter.variables.keys()]).toEqual(['x', 'john', 'z']);
    expect(args('x')).toEqual(['Dear team,']);
    expect(interpreter.variables.get('john')!.command).toBe('hi');
  });

  it('31, 34, 35: comment runs attach to the next declaration, a BOM-led one included (Reference)', async () => {
    const { payload } = await run('\uFEFF# Load input context\n## heading\n#\n# before calling\n@context emit value # inline detail');
    expect(payload('context').commentLines).toEqual(['Load input context', '# heading', '', 'before calling', 'inline detail']);
    expect(payload('context').comment).toBe('Load input context\n# heading\n\nbefore calling\ninline detail');
  });

  it('32: a blank line detaches a comment, which becomes text of the declaration above', async () => {
    const { args, payload } = await run('# Load\n@context emit value\n\n# detached comment\n\n@next emit ok');
    expect(args('context')).toEqual(['value', '# detached comment']);
    expect(payload('next').commentLines).toEqual([]);
    expect(payload('context').commentLines).toEqual(['Load']);
  });

  it('36: a # line at the end of the file is text of the last declaration', async () => {
    const { args } = await run('@x combine a\n# trailing');
    expect(args('x')).toEqual(['a', '# trailing']);
  });
});

describe('here-doc', () => {
  it('38, 45: here-docs and assign (Reference)', async () => {
    const code = [
      '@first assign', '--begin-token-one--', 'hello', '--end-token-one--',
      '@second assign "prefix" $first', '@third assign $second "tail"',
      '@empty assign', '@b assign x "y z" 3', '@c assign $b tail',
    ].join('\n');
    const { interpreter, history } = await run(code);
    expect(['first', 'second', 'third', 'empty', 'b', 'c'].map((n) => interpreter.getVarValue(n)))
      .toEqual(['hello', 'prefix hello', 'prefix hello tail', '', 'x y z 3', 'x y z 3 tail']);
    expect(history).toEqual([]);
  });

  it('39: blank lines inside the body are kept, at its edges too', async () => {
    const { interpreter } = await run('@x assign\n--begin-T--\n\n  hello  \n\n--end-T--');
    expect(interpreter.getVarValue('x')).toBe('\n  hello  \n');
  });

  it('40: markers may be indented and followed by spaces; tokens are taken greedily', async () => {
    const { interpreter } = await run('@x assign\n\n   --begin-a--b--   \nbody # text\n  --end-a--b--  \n\n@y assign\n--begin-E--\n--end-E--');
    expect([interpreter.getVarValue('x'), interpreter.getVarValue('y')]).toEqual(['body # text', '']);
  });

  it('44: marker lines are plain text when the here-doc conditions do not hold', async () => {
    const markers = '\n--begin-T--\nbody\n--end-T--';
    const { interpreter, args } = await run(`@x assign foo${markers}\n@y emit${markers}\n@z assign\ntext${markers}`);
    expect(interpreter.getVarValue('x')).toBe('foo --begin-T--\nbody\n--end-T--');
    expect(args('y')).toEqual(['--begin-T--\nbody\n--end-T--']);
    expect(interpreter.getVarValue('z')).toBe('text\n--begin-T--\nbody\n--end-T--');
  });

  it('46: a registry that lists assign receives assign declarations', async () => {
    const seen: string[] = [];
    const registry = createRegistry(({ command, args }, r) => {
      seen.push([command, ...args].join(' '));
      return r.success('from registry');
    }, [{ name: 'assign', description: 'custom assign' }]);
    const interpreter = new LightSOPLangInterpreter('@x assign a b', registry);
    await interpreter.ready;
    expect(seen).toEqual(['assign a b']);
    expect(interpreter.getVarValue('x')).toBe('from registry');
  });
});
