// Spec section 10, items 47-57, and the check order of 4.1.
import { describe, expect, it } from 'vitest';
import { analyzePlan } from '@lightsop/core';
import { codes, errors } from '../helpers/plan';

describe('validation', () => {
  it('47: a repeated name is duplicate-declaration on the later one', () => {
    expect(errors('@a emit 1\n@b emit 2\n@a emit 3')).toEqual(['duplicate-declaration@3']);
  });
  it('48: a reference to an undeclared name is undefined-variable on its token', () => {
    const d = analyzePlan('@a emit $zz').diagnostics.find((x) => x.code === 'undefined-variable')!;
    expect([d.range.line, d.range.column, d.range.endColumn]).toEqual([1, 9, 12]);
    expect(d.message).toContain("'zz'");
  });
  it('49: self-reference and mutual references are cycles, one diagnostic each, naming the cycle', () => {
    expect(errors('@a echo $a')).toEqual(['cycle@1']);
    const diags = analyzePlan('@a echo $b\n@b echo $a\n@c emit x').diagnostics.filter((d) => d.code === 'cycle');
    expect(diags).toHaveLength(1);
    expect(diags[0]!.range.line).toBe(1);
    expect(diags[0]!.message).toBe('Dependency cycle: a -> b -> a');
    expect(diags[0]!.related?.map((r) => r.range.line)).toEqual([2]);
  });
  it('a cycle message names the whole cycle', () => {
    const d = analyzePlan('@a echo $c\n@b echo $a\n@c echo $b\n@d echo $a').diagnostics.filter((x) => x.code === 'cycle');
    expect(d.map((x) => x.message)).toEqual(['Dependency cycle: a -> c -> b -> a']);
  });
  it('declarations that merely depend on a cycle get no diagnostic', () => {
    expect(errors('@a echo $b\n@b echo $a\n@c echo $a')).toEqual(['cycle@1']);
  });
  it('50: an unterminated string is listed before an earlier undefined reference', () => {
    expect(errors('@a emit $zz\n@b emit 1\n@c emit "abc')).toEqual(['unterminated-string@3', 'undefined-variable@1']);
  });
  it('51: a duplicate is listed before a later unterminated string', () => {
    expect(errors('@a emit 1\n@a emit 2\n@b emit 3\n@c emit "x')).toEqual(['duplicate-declaration@2', 'unterminated-string@4']);
  });
  it('52: undefined-variable comes before cycle', () => {
    expect(errors('@a echo $b\n@b echo $a\n@c echo $zz')).toEqual(['undefined-variable@3', 'cycle@1']);
  });
  it('53: lint accepts $input; run without input reports it', () => {
    expect(errors('@r echo $input')).toEqual([]);
    expect(errors('@r echo $input', { inputDeclared: false })).toEqual(['undefined-variable@1']);
  });
  it('54: unknown-command on the command token, with did-you-mean; built-ins are always known', () => {
    const skills = { fetch: 'Downloads', summarize: 'Summarizes' };
    const result = analyzePlan('@a fecth x\n@b assign y\n@c final_answer $a $b\n@d cannot_complete z\n@e summarize $a', { skills });
    const unknown = result.diagnostics.filter((d) => d.code === 'unknown-command');
    expect(unknown.map((d) => [d.range.line, d.range.column, d.range.endColumn])).toEqual([[1, 4, 9]]);
    expect(unknown[0]!.data?.suggestions).toEqual(['fetch']);
    expect(unknown[0]!.message).toContain("Did you mean 'fetch'?");
  });
  it('55: no unknown-command without a skills description', () => {
    expect(codes('@a whatever x')).not.toContain('unknown-command@1');
  });
  it('56: unused assign is a warning, other unused steps info; final steps and lastAnswer exempt', () => {
    const result = analyzePlan('@a assign x\n@b emit y\n@c final_answer z\n@d cannot_complete w\n@lastAnswer emit v');
    expect(result.diagnostics.map((d) => [d.code, d.severity, d.range.line])).toEqual([
      ['unused-variable', 'warning', 1],
      ['unused-variable', 'info', 2],
    ]);
  });
  it('57: columns are 1-based and end columns exclusive', () => {
    const d = analyzePlan('@x emit "abc').diagnostics[0]!;
    expect([d.range.line, d.range.column, d.range.endLine, d.range.endColumn]).toEqual([1, 9, 1, 13]);
  });
  it('diagnostic ranges of 4.2', () => {
    const at = (src: string) => analyzePlan(src).diagnostics.filter((d) => d.severity === 'error').map((d) => [d.code, d.range.line, d.range.column, d.range.endLine, d.range.endColumn]);
    expect(at('  hello there  # c\n@a emit x')).toEqual([['expected-declaration', 1, 3, 1, 14]]);
    expect(at('@ emit 1')).toEqual([['missing-variable-name', 1, 1, 1, 2]]);
    expect(at('@abc')).toEqual([['missing-command', 1, 1, 1, 5]]);
    expect(at('@x "" a')).toEqual([['missing-command', 1, 4, 1, 6]]);
    expect(at('@x emit "abc\\')).toEqual([['invalid-escape', 1, 13, 1, 14]]);
    expect(at('@t assign\n--begin-D--\nbody')).toEqual([['unterminated-heredoc', 2, 1, 2, 12]]);
    expect(at('@t assign\n--begin-D--\nx\n--end-D--\nmore\n\nlast  \n')).toEqual([['heredoc-trailing-content', 5, 1, 7, 5]]);
  });
  it('only one expected-declaration per file', () => {
    expect(errors('one\ntwo\n@a emit x')).toEqual(['expected-declaration@1']);
  });
  it('missing-command is not reported when the name is missing or the header has a lexical error', () => {
    expect(errors('@ ')).toEqual(['missing-variable-name@1']);
    expect(errors('@x "abc')).toEqual(['unterminated-string@1']);
  });
  it('a header with an error still declares its name and keeps references read before the error', () => {
    const result = analyzePlan('@a emit $b "x\n@b emit 1');
    expect(result.symbols.declarations.has('a')).toBe(true);
    expect(result.symbols.declarations.get('a')!.dependencies).toEqual(['b']);
    expect(result.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code)).toEqual(['unterminated-string']);
  });
  it('an english script has no diagnostics', () => {
    expect(analyzePlan('#!english\nsummarize the page @ $x "').diagnostics).toEqual([]);
    expect(analyzePlan('  \n#!english do things').plan.english?.instructions).toBe('do things');
  });
  it('names that are Object.prototype keys are ordinary names', () => {
    expect(errors('@constructor emit 1\n@__proto__ emit $constructor\n@toString emit $__proto__')).toEqual([]);
  });
  it('long chains and long cycles are handled without recursion limits', () => {
    const chain = Array.from({ length: 20000 }, (_, i) => (i === 0 ? '@v0 emit x' : `@v${i} emit $v${i - 1}`)).join('\n');
    expect(errors(chain)).toEqual([]);
    const cycle = Array.from({ length: 20000 }, (_, i) => `@v${i} emit $v${(i + 1) % 20000}`).join('\n');
    const diags = analyzePlan(cycle).diagnostics.filter((d) => d.code === 'cycle');
    expect(diags).toHaveLength(1);
    expect(diags[0]!.data?.cycle).toHaveLength(20001);
  });
});
