// The compact syntax tree (packages/core/src/syntax/tree.ts): its materialised nodes, its syntax
// diagnostics and the analysis built on it equal what the previous object-building parser and
// validators produced (kept in test/core/legacy/ for this comparison only), for random plans; and
// nodes are materialised only when read.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyzePlan, CommandSurface, parsePlan } from '@lightsop/core';
import { parsePlan as legacyParsePlan } from './legacy/build-ast';
import { analyzePlan as legacyAnalyzePlan } from './legacy/validate/index';

const name = fc.constantFrom('a', 'b', 'c', 'input', 'lastAnswer', 'x_1', 'ä', '', 'a"b', "o'k");
const word = fc.constantFrom('emit', 'assign', 'step', 'final_answer', 'cannot_complete', 'shout', 'x', '--x', 'don\'t', 'a#b', '$', '$$a', '@a');
const quoted = fc.tuple(
  fc.constantFrom('"', "'"),
  fc.array(fc.constantFrom('a', ' ', '\\n', '\\t', '\\\\', '\\"', "\\'", '#', '$a', '"', "'", 'é', '\\x'), { maxLength: 5 }),
  fc.constantFrom('close', 'close', 'close', 'open', 'backslash'),
).map(([q, parts, end]) => q + parts.join('') + (end === 'close' ? q : end === 'backslash' ? '\\' : ''));
const token = fc.oneof(
  { weight: 3, arbitrary: word },
  { weight: 3, arbitrary: name.map((n) => '$' + n) },
  { weight: 2, arbitrary: quoted },
);
const space = fc.constantFrom(' ', ' ', '  ', '\t', '\u00A0', '\u3000', '\uFEFF', '\r');
const header = fc.tuple(
  fc.constantFrom('', '', ' ', '\t', '\u200B', '\uFEFF'),
  name,
  fc.array(fc.tuple(space, token), { maxLength: 5 }),
  fc.constantFrom('', '', ' ', ' # note', '#', '  #  two  words ', ' # "quoted"'),
).map(([lead, n, toks, comment]) => `${lead}@${n}${toks.map(([s, t]) => s + t).join('')}${comment}`);
const line = fc.oneof(
  { weight: 8, arbitrary: header },
  { weight: 2, arbitrary: fc.constantFrom('', '   ', '\t', '\u200B') },
  { weight: 2, arbitrary: fc.constantFrom('# a comment', '  #indented', '#') },
  { weight: 2, arbitrary: fc.constantFrom('free text', '  indented text ', 'more: $a "x', '@', '--begin-T--', '--end-T--', ' --end-T-- ', '--begin-T U--') },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);
const plan = fc.tuple(
  fc.array(line, { maxLength: 25 }),
  fc.constantFrom('\n', '\n', '\r\n'),
  fc.boolean(),
).map(([lines, eol, final]) => lines.join(eol) + (final ? eol : ''));

const surface = CommandSurface.fromDescription({ emit: 'emits', shout: 'shouts' });

describe('compact syntax tree', () => {
  it('materialises the same nodes and reports the same diagnostics as the object-building parser (property)', () => {
    fc.assert(
      fc.property(plan, (src) => {
        const now = parsePlan(src);
        const before = legacyParsePlan(src);
        expect(now.plan).toEqual(before.plan);
        expect(now.diagnostics).toEqual(before.diagnostics);
      }),
      { numRuns: 4000 },
    );
  });

  it('analyses to the same diagnostics and symbol tables as the previous validators (property)', () => {
    fc.assert(
      fc.property(plan, fc.boolean(), fc.boolean(), (src, withCommands, inputDeclared) => {
        const options = { commands: withCommands ? surface : null, inputDeclared };
        const now = analyzePlan(src, options);
        const before = legacyAnalyzePlan(src, options);
        expect(now.diagnostics).toEqual(before.diagnostics);
        expect([...now.symbols.declarations]).toEqual([...before.symbols.declarations]);
        expect([...now.symbols.indexOf]).toEqual([...before.symbols.indexOf]);
        expect([...now.symbols.references]).toEqual([...before.symbols.references]);
        for (const d of now.plan.declarations) {
          if (d.name !== '') expect(now.symbols.declarations.get(d.name)).toBe(now.plan.declarations[now.tree.indexOfName(d.name)]);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('reads broken quoted tokens through Chevrotain with the same ranges and messages', () => {
    const src = '@a emit "ok" $b "open\n@b emit \'x\\\n@c "\n@d "" arg\n';
    const now = parsePlan(src);
    expect(now.diagnostics).toEqual(legacyParsePlan(src).diagnostics);
    expect(now.diagnostics.map((d) => d.code)).toEqual(['unterminated-string', 'invalid-escape', 'unterminated-string', 'missing-command']);
    expect(now.plan.declarations[0]!.arguments.map((a) => a.kind === 'literal' ? a.value : '$' + a.name)).toEqual(['ok', '$b']);
  });
});

describe('lazy nodes', () => {
  const src = '# first\n@a emit "x"\n@b step $a # uses a\n@c step $b $zz\n@d step $d\n@a again\n';

  it('linting reads the compact tree only: no declaration node is materialised', () => {
    const analysis = analyzePlan(src, { commands: surface });
    expect(analysis.diagnostics.map((d) => d.code)).toEqual(['duplicate-declaration', 'undefined-variable', 'cycle', 'unknown-command', 'unknown-command', 'unknown-command', 'unknown-command', 'unused-variable']);
    expect(analysis.tree.materialised()).toBe(0);
  });

  it('materialises one declaration when one is read, and the same object every time', () => {
    const { plan, tree } = parsePlan(src);
    const c = tree.declaration(2);
    expect(tree.materialised()).toBe(1);
    expect(c).toMatchObject({ name: 'c', command: { name: 'step' }, dependencies: ['b', 'zz'], lineNumber: 4 });
    expect(tree.declaration(2)).toBe(c);
    expect(plan.declarations[2]).toBe(c);
    expect(tree.materialised()).toBe(5);
    expect(plan.declarations).toBe(plan.declarations);
  });

  it('the symbol table hands out the plan\'s own nodes, built on first use', () => {
    const analysis = analyzePlan(src);
    expect(analysis.tree.materialised()).toBe(0);
    expect(analysis.symbols.declarations.get('b')).toBe(analysis.plan.declarations[2 - 1]);
    expect(analysis.symbols.declarations.get('a')).toBe(analysis.plan.declarations[0]);
    expect(analysis.symbols.indexOf.get('d')).toBe(3);
    expect(analysis.tree.indexOfName('zz')).toBe(-1);
    expect(analysis.tree.symbolOf('c')).toBe(2);
  });
});
