// The formatter: canonical spacing and alignment; idempotent; never changes what a plan means
// and never drops a character of comments, strings or multi-line text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyzePlan, formatPlan, parsePlan } from '@lightsop/core';

/** What a plan means: declarations with their arguments and comments, and the diagnostic codes. */
function meaning(source: string) {
  const { plan, diagnostics } = analyzePlan(source);
  return {
    english: plan.english?.instructions ?? null,
    declarations: plan.declarations.map((d) => ({
      name: d.name,
      command: d.command?.name ?? null,
      args: d.arguments.map((a) => (a.kind === 'literal' ? ['literal', a.value] : ['reference', a.name])),
      comments: d.commentLines,
      error: d.hasError,
    })),
    codes: diagnostics.map((d) => d.code),
  };
}

/** Text rich in the characters that matter to the language. */
const planText = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('@', '#', '"', "'", '\\', '$', ' ', '  ', '\n', '\n', '\n', '\r\n', '\r', '\t', '\u00A0', '\u200B', '\uFEFF') },
      { weight: 4, arbitrary: fc.constantFrom('a', 'b', 'emit', 'assign', 'x y', '--begin-T--', '--end-T--', 'final_answer', '$a', '@a ', '@b ', '# c') },
      { weight: 1, arbitrary: fc.string({ maxLength: 4 }) },
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(''));

describe('formatter', () => {
  it('aligns commands of adjacent declarations and normalises spacing', () => {
    const src = '@sum   add 5 3   # literals\n@greet format   "hello world"  $sum\n\n\n@path join $sum, "x"\n';
    expect(formatPlan(src)).toBe('@sum   add 5 3 # literals\n@greet format "hello world" $sum\n\n@path join $sum, "x"\n');
  });
  it('keeps multi-line text, here-docs and quoting byte for byte', () => {
    const src = '# about p\n@p   emit\n  indented line  \n\n# text, not a comment\n\n@doc assign\n--begin-X--\n\n  body  \n\n--end-X--\n';
    const out = formatPlan(src);
    expect(out).toContain('  indented line  \n\n# text, not a comment\n');
    expect(out).toContain('--begin-X--\n\n  body  \n\n--end-X--\n');
    expect(meaning(out)).toEqual(meaning(src));
  });
  it('keeps comments, trimming only their indentation and trailing space', () => {
    expect(formatPlan('   # first  \n   @a emit x   #   note  \n')).toBe('# first\n@a emit x # note\n');
  });
  it('keeps the Q1 quirk intact (no comment appears or disappears)', () => {
    const src = "@x   emit don't # comment here\n";
    expect(meaning(formatPlan(src))).toEqual(meaning(src));
  });
  it('keeps CRLF line endings', () => {
    expect(formatPlan('@a  emit x\r\n@bb emit y\r\n')).toBe('@a  emit x\r\n@bb emit y\r\n');
  });
  it('leaves english scripts and broken headers alone', () => {
    expect(formatPlan('#!english\n  do   things  \n')).toBe('#!english\n  do   things  \n');
    expect(formatPlan('@x   emit "abc\n')).toBe('@x   emit "abc\n');
  });
  it('never throws, is idempotent and keeps the meaning (property)', () => {
    fc.assert(
      fc.property(planText, (src) => {
        const once = formatPlan(src);
        expect(formatPlan(once)).toBe(once);
        expect(meaning(once)).toEqual(meaning(src));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('parser robustness', () => {
  it('never throws on arbitrary text and every range lies inside the source (property)', () => {
    fc.assert(
      fc.property(fc.oneof(planText, fc.string({ unit: 'binary', maxLength: 200 })), (src) => {
        const { plan, diagnostics } = parsePlan(src);
        for (const d of plan.declarations) {
          for (const r of [d.range, d.nameRange, ...d.arguments.map((a) => a.range)]) {
            expect(r.start).toBeGreaterThanOrEqual(0);
            expect(r.end).toBeLessThanOrEqual(src.length);
            expect(r.start).toBeLessThanOrEqual(r.end);
          }
        }
        for (const d of diagnostics) expect(d.range.end).toBeLessThanOrEqual(src.length);
      }),
      { numRuns: 3000 },
    );
  });
});
