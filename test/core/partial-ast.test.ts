// ARCHITECTURE.md: parsing never throws on user text and returns a possibly partial AST. A header
// with an error stays in the AST with what was read before the error, and the declarations
// around it are whole, so editors can still hover, complete and outline a half-typed plan.
import { describe, expect, it } from 'vitest';
import { parsePlan } from '@lightsop/core';

describe('a partial AST', () => {
  it('keeps every declaration of a plan with broken headers, each with what could be read', () => {
    const { plan, diagnostics } = parsePlan('@a emit $b "x\n@b emit 1\n@c\n@ emit 2\n@d upper $b\n');
    expect(plan.declarations.map((d) => [d.name, d.command?.name ?? null, d.hasError])).toEqual([
      ['a', 'emit', true],
      ['b', 'emit', false],
      ['c', null, true],
      ['', 'emit', true],
      ['d', 'upper', false],
    ]);
    expect(plan.declarations[0]!.arguments.map((a) => (a.kind === 'reference' ? `$${a.name}` : a.value))).toEqual(['$b']);
    expect(plan.declarations[4]!.dependencies).toEqual(['b']);
    expect(diagnostics.map((d) => `${d.code}@${d.range.line}`)).toEqual(['unterminated-string@1', 'missing-command@3', 'missing-variable-name@4']);
  });
});
