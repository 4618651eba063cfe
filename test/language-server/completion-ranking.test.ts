/**
 * Completion of `$` variables reads the declared names from the incremental state and walks out
 * from the cursor instead of sorting every declaration (`features/completion.ts`). Property:
 * for any plan, cursor and earlier edits, the items equal the ranking by distance over a fresh
 * analysis's symbols (declarations above the cursor nearest first, then those below in order,
 * then the implicit `input`), cut at `maxVariables` with `isIncomplete` when more matched.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyzePlan } from '@lightsop/core';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { AnalysisCache } from '../../packages/language-server/src/documents';
import { getCompletions } from '../../packages/language-server/src/features/completion';
import { PositionMap } from '../../packages/language-server/src/to-lsp';
import type { SkillsContext } from '../../packages/language-server/src/workspace';

const NO_SKILLS: SkillsContext = { key: 0, commands: null, source: null };
const NAMES = ['a', 'b', 'ab', 'ba', 'input', 'abc', 'c'];
const name = fc.constantFrom(...NAMES);
const line = fc.oneof(
  { weight: 5, arbitrary: fc.tuple(name, fc.constantFrom('emit', 'fetch'), fc.array(name.map((n) => `$${n}`), { maxLength: 2 }), fc.boolean()).map(([n, c, refs, note]) => `@${n} ${c} ${refs.join(' ')}${note ? ' # note' : ''}`) },
  { weight: 1, arbitrary: fc.constantFrom('# about it', '', 'text line') },
);
const plan = fc.array(line, { minLength: 1, maxLength: 12 }).map((ls) => ls.join('\n') + '\n');

/** What completion offered before: every first declaration but the cursor's, ranked by distance. */
function expected(text: string, offset: number, typed: string, declName: string, max: number): { labels: string[]; incomplete: boolean } {
  const symbols = analyzePlan(text).symbols;
  const matches = (n: string) => {
    let k = 0;
    for (let i = 0; i < n.length && k < typed.length; i++) if (n[i]!.toLowerCase() === typed[k]!.toLowerCase()) k++;
    return k === typed.length;
  };
  const candidates: { name: string; distance: number }[] = [];
  for (const [n, d] of symbols.declarations) {
    if (n === declName || !matches(n)) continue;
    const start = d.headerRange.start;
    candidates.push({ name: n, distance: start < offset ? offset - start : 1e12 + start });
  }
  if (!symbols.declarations.has('input') && declName !== 'input' && matches('input')) candidates.push({ name: 'input', distance: 2e12 });
  candidates.sort((x, y) => x.distance - y.distance);
  return { labels: candidates.slice(0, max).map((c) => `$${c.name}`), incomplete: candidates.length > max };
}

describe('completion of $ variables', () => {
  it('ranks like a sort by distance over a fresh analysis, after any edits (property)', () => {
    fc.assert(
      fc.property(plan, plan, fc.nat(), fc.constantFrom('', 'a', 'b', 'ab'), fc.integer({ min: 1, max: 5 }), fc.constantFrom('a', 'zz', 'input'), (first, second, where, typed, max, declName) => {
        const cache = new AnalysisCache(() => NO_SKILLS);
        const uri = 'file:///p.sop';
        // Analyse an earlier text first, so that the later one is analysed incrementally.
        let doc = TextDocument.create(uri, 'lightsoplang', 1, first);
        cache.analyze(doc);
        const lines = second.split('\n');
        const at = where % lines.length;
        const cursorLine = `@${declName} emit $${typed}`;
        const text = [...lines.slice(0, at), cursorLine, ...lines.slice(at)].join('\n');
        doc = TextDocument.update(doc, [{ text }], 2);
        const analyzed = cache.analyze(doc);
        const positions = new PositionMap(text, analyzed.analysis.lineIndex);
        const position = { line: at, character: cursorLine.length };
        const list = getCompletions({ text, positions, analyzed, skills: NO_SKILLS }, position, { snippets: true, maxVariables: max });
        const offset = positions.offset(position);
        const want = expected(text, offset, typed, declName, max);
        expect(list.items.map((i) => i.label)).toEqual(want.labels);
        expect(list.isIncomplete).toBe(want.incomplete);
        // The shown declarations are described by their own header and comment.
        const symbols = analyzePlan(text).symbols;
        for (const item of list.items) {
          const decl = symbols.declarations.get(item.label.slice(1));
          if (!decl) continue;
          expect(item.detail).toBe(decl.command ? text.slice(decl.command.range.start, decl.headerRange.end) : '');
          expect(item.documentation).toEqual(decl.comment ? { kind: 'markdown', value: decl.comment } : undefined);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
