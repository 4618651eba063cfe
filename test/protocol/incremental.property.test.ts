/**
 * The language server analyses an edited plan incrementally (only the blocks on changed lines
 * are parsed again; names, references, cycles and unused variables are checked from the kept
 * declarations). Property: after any sequence of edits, what it computed equals a fresh
 * `analyzePlan` of the same text: diagnostics (in check order), declarations, free comments,
 * symbols and the plan graph. 10,000 edit sequences on small plans built from the language's
 * line kinds (comments that attach or not, here-docs, continuation lines, broken quotes,
 * duplicates, cycles, `#!english`, CRLF and lone CR), with edits anywhere.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyzePlan, CommandSurface, computeLineStarts, planGraphData, type Analysis } from '@lightsop/core';
import { analyzeEdit, analyzeFull } from '../../packages/language-server/src/incremental';

const SKILLS = CommandSurface.fromDescription({ fetch: 'Downloads', summarize: 'Summarizes', tr: 'Translates' });

const NAMES = ['a', 'b', 'c', 'ab', 'input', 'lastAnswer', 'alpha', 'alpah'];
const name = fc.constantFrom(...NAMES);
const command = fc.constantFrom('fetch', 'summarize', 'tr', 'assign', 'final_answer', 'fetc', 'nope', '"fetch"', "'tr'");
const arg = fc.oneof(
  name.map((n) => `$${n}`),
  fc.constantFrom('"q x"', "'s'", 'word', '"open', "'open", 'back\\', '$', '"a#b"', '#'),
);
const line = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(name, command, fc.array(arg, { maxLength: 3 }), fc.boolean()).map(([n, c, args, note]) => `@${n} ${c} ${args.join(' ')}${note ? ' # note' : ''}`) },
  { weight: 2, arbitrary: fc.constantFrom('# comment', '  # indented', '#', '# !english', '#!english') },
  { weight: 2, arbitrary: fc.constantFrom('', '   ', '\t') },
  { weight: 2, arbitrary: fc.constantFrom('continued text', '  more', 'stray words', '@', '@ fetch') },
  { weight: 1, arbitrary: fc.constantFrom('@h assign', '--begin-T--', 'body $a', '--end-T--', '--end-X--') },
);
const eol = fc.constantFrom('\n', '\n', '\n', '\r\n', '\r');
const plan = fc.array(fc.tuple(line, eol), { maxLength: 10 }).map((ls) => ls.map(([l, e]) => l + e).join(''));

/** Text inserted by an edit: characters that change line classes and tokens, and whole lines. */
const insert = fc.oneof(
  fc.constantFrom('', 'x', '@', '#', '$', '"', "'", '\\', ' ', '\t', '\u200b', '\ufeff', '\u00a0', '\n', '\r', '\r\n', '@a', '$a', '$c', 'b', '\n@', '\n#', '\n\n', '#!english', '--begin-T--', '--end-T--'),
  line.map((l) => `${l}\n`),
);
const edit = fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.nat({ max: 12 }), insert);

function apply(text: string, [where, length, replacement]: [number, number, string]): string {
  const at = Math.floor(where * (text.length + 1));
  return text.slice(0, Math.min(at, text.length)) + replacement + text.slice(Math.min(text.length, at + length));
}

function comparable(a: Analysis) {
  const symbols = a.symbols;
  return {
    diagnostics: a.diagnostics,
    plan: a.plan,
    declarations: [...symbols.declarations.entries()],
    indexOf: [...symbols.indexOf.entries()],
    references: [...symbols.references.entries()],
    graph: planGraphData(symbols),
  };
}

/** Deep equality, fast (10,000 sequences); on a difference, vitest's diff says where. */
function expectSame(actual: Analysis, expected: Analysis): void {
  const a = comparable(actual);
  const b = comparable(expected);
  if (!isDeepStrictEqual(a, b)) expect(a).toEqual(b);
}

describe('incremental analysis in the language server', () => {
  it('after random edits equals a fresh analysis of the same text (property, 10,000 sequences)', () => {
    fc.assert(
      fc.property(plan, fc.array(edit, { minLength: 1, maxLength: 6 }), fc.boolean(), (start, edits, withSkills) => {
        const options = { commands: withSkills ? SKILLS : null };
        let text = start;
        let current = analyzeFull(text, options);
        expectSame(current.analysis, analyzePlan(text, options));
        for (const e of edits) {
          text = apply(text, e);
          current = analyzeEdit(current.snapshot, text, options);
          expect(current.analysis.source).toBe(text);
          expect(Array.from(current.analysis.lineIndex.lineStarts)).toEqual(computeLineStarts(text));
          expectSame(current.analysis, analyzePlan(text, options));
        }
      }),
      { numRuns: 10_000 },
    );
  }, 600_000);

  it('re-parses only the blocks an edit touches, and keeps the rest as they were parsed', () => {
    const lines: string[] = [];
    for (let i = 0; i < 200; i++) lines.push(`# step ${i}`, `@v${i} fetch ${i > 0 ? `$v${i - 1}` : '"start"'} "arg ${i}"`, '');
    const text = lines.join('\n');
    const first = analyzeFull(text, { commands: SKILLS });
    const middle = text.indexOf('"arg 100"') + 1;
    const edited = text.slice(0, middle) + 'x' + text.slice(middle);
    const next = analyzeEdit(first.snapshot, edited, { commands: SKILLS });
    const before = first.snapshot;
    const after = next.snapshot;
    expect(after.index).toHaveLength(before.index.length);
    // The same parsed trees outside the edited block and the one before it.
    const same = (i: number) => after.chunks![i] === before.chunks![i] && after.index[i] === before.index[i];
    let reparsed = 0;
    for (let i = 0; i < after.index.length; i++) if (!same(i)) reparsed++;
    expect(reparsed).toBeLessThanOrEqual(2);
    expect(reparsed).toBeGreaterThan(0);
    expect(same(150)).toBe(true);
    expect(comparable(next.analysis)).toEqual(comparable(analyzePlan(edited, { commands: SKILLS })));
  });
});
