// The grammar must agree with @lightsop/core on what runs: where a header's inline comment
// starts (the comment scan, quirk Q1 included), and which tokens are references, quoted
// strings, bare literals, the command and the name. Checked on the fixtures and on random
// header lines (fast-check).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyzePlan, findInlineComment, type Declaration } from '@lightsop/core';
import { tokenize, type Token } from './tokenize';

interface Positioned extends Token {
  readonly start: number;
  readonly end: number;
}

function positioned(line: Token[]): Positioned[] {
  let at = 0;
  return line.map((t) => {
    const p = { ...t, start: at, end: at + t.text.length };
    at = p.end;
    return p;
  });
}

const has = (scopes: readonly string[], prefix: string) => scopes.some((s) => s === prefix || s.startsWith(`${prefix}.`));

/** Problems found when comparing the grammar's tokens of a header line with core's declaration. */
function compareHeader(lineText: string, tokens: Token[], decl: Declaration, lineStartOffset: number): string[] {
  const problems: string[] = [];
  const toks = positioned(tokens);
  const covering = (s: number, e: number) => toks.filter((t) => t.end > s && t.start < e && t.text.trim() !== '');
  const expectScope = (what: string, s: number, e: number, prefixes: string[]) => {
    for (const t of covering(s, e)) {
      if (!prefixes.some((p) => has(t.scopes, p))) problems.push(`${what} ${JSON.stringify(lineText.slice(s, e))}: token ${JSON.stringify(t.text)} has ${t.scopes.join(' ')}`);
    }
  };
  // The inline comment starts exactly where core's comment scan says.
  let zw = 0;
  while (zw < lineText.length && /[\uFEFF\u200B-\u200D]/.test(lineText[zw]!)) zw++;
  const hash = findInlineComment(lineText, zw, lineText.length);
  const firstComment = toks.find((t) => has(t.scopes, 'comment.line'));
  if ((firstComment?.start ?? -1) !== hash) problems.push(`comment starts at ${firstComment?.start ?? -1}, core says ${hash}`);
  const rel = (r: { start: number; end: number }) => [r.start - lineStartOffset, r.end - lineStartOffset] as const;
  const [ns, ne] = rel(decl.nameRange);
  expectScope('name', ns + 1, ne, ['entity.name.variable.declaration']);
  if (decl.command && !decl.hasError) {
    const [cs, ce] = rel(decl.command.range);
    expectScope('command', cs, ce, ['entity.name.function.command', 'support.function.builtin']);
  }
  for (const a of decl.arguments) {
    if (a.kind === 'literal' && a.origin !== 'header') continue;
    const [s, e] = rel(a.range);
    if (a.kind === 'reference') expectScope('reference', s, e, ['variable.other.reference']);
    else if (a.quote) expectScope('quoted literal', s, e, ['string.quoted']);
    else expectScope('bare literal', s, e, ['string.unquoted.argument']);
  }
  return problems;
}

async function checkPlan(text: string): Promise<string[]> {
  const analysis = analyzePlan(text);
  const lines = await tokenize(text);
  const sourceLines = text.split(/\r?\n/);
  const problems: string[] = [];
  for (const d of analysis.plan.declarations) {
    const n = d.lineNumber - 1;
    const lineStartOffset = d.nameRange.start - (d.nameRange.column - 1);
    for (const p of compareHeader(sourceLines[n]!, lines[n]!, d, lineStartOffset)) problems.push(`line ${d.lineNumber}: ${p}`);
  }
  return problems;
}

describe('grammar and core agree', () => {
  const fixtures = path.join(__dirname, 'fixtures');
  for (const file of readdirSync(fixtures).filter((f) => f.endsWith('.sop')).sort()) {
    it(`on the headers of ${file}`, async () => {
      const text = readFileSync(path.join(fixtures, file), 'utf8').replace(/^\uFEFF/, '');
      expect(await checkPlan(text)).toEqual([]);
    });
  }

  it('on the example plans', async () => {
    const dir = path.resolve(__dirname, '../../examples');
    const plans = readdirSync(dir).filter((f) => f.endsWith('.sop'));
    expect(plans.length).toBeGreaterThan(0);
    for (const f of plans) expect(await checkPlan(readFileSync(path.join(dir, f), 'utf8')), f).toEqual([]);
  });

  it('on random header lines (quotes, backslashes, # and $ in any order)', async () => {
    const piece = fc.constantFrom('a', 'bc', ' ', '  ', '\t', "'", '"', '\\', '#', '$', '$x', '@', "don't", 'x#y', '\u00A0');
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 14 }), fc.constantFrom('emit', '"my cmd"', "'q'", 'assign'), async (parts, command) => {
        const line = `@v ${command} ${parts.join('')}`;
        const problems = await checkPlan(`${line}\n@w emit $v`);
        expect(problems, JSON.stringify(line)).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });
});
