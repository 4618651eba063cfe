// `lightsop/planOutline` over JSON-RPC: the facts the VS Code extension places its CodeLens,
// inline results and variables view from and checks before Run Plan, in LSP positions.
import { afterEach, describe, expect, it } from 'vitest';
import type { PlanOutlineResult } from '@lightsop/language-server';
import { openPlan, type TestClient } from './helpers';

let client: TestClient | null = null;
afterEach(() => {
  client?.dispose();
  client = null;
});

async function outline(text: string): Promise<PlanOutlineResult | null> {
  const opened = await openPlan(text);
  client = opened.client;
  return client.request<PlanOutlineResult | null>('lightsop/planOutline', { textDocument: { uri: opened.uri } });
}

describe('lightsop/planOutline', () => {
  it('lists the declarations that can run (the first of each name) with their name and block ranges', async () => {
    const result = await outline([
      '# A comment above',
      '@page fetch "https://example.org"',
      '@note assign',
      '  two lines',
      '  of text',
      '@page fetch again',
      '@lastAnswer final_answer $page $note',
      '',
    ].join('\n'));
    expect(result).toMatchObject({ version: 1, english: null });
    expect(result!.errors.map((e) => [e.code, e.range.start.line])).toEqual([['duplicate-declaration', 5]]);
    expect(result!.declarations.map((d) => [d.name, d.command])).toEqual([['page', 'fetch'], ['note', 'assign'], ['lastAnswer', 'final_answer']]);
    expect(result!.declarations[1]).toEqual({
      name: 'note',
      command: 'assign',
      nameRange: { start: { line: 2, character: 0 }, end: { line: 2, character: 5 } },
      range: { start: { line: 2, character: 0 }, end: { line: 4, character: 9 } },
    });
  });

  it('gives an #!english script its header and no declarations', async () => {
    const result = await outline('\n#!english Greet Ada\nand count the words\n');
    expect(result).toMatchObject({ english: { start: { line: 1, character: 0 } }, declarations: [], errors: [] });
  });

  it('lists the errors in check order, and no warnings', async () => {
    // The unused @b assign is a warning: not an error, so not listed.
    const result = await outline('@a emit $nope\n@b assign 2\n@a emit 3 $c\n@lastAnswer final_answer $a\n');
    expect(result!.errors.map((e) => e.code)).toEqual(['duplicate-declaration', 'undefined-variable', 'undefined-variable']);
    expect(result!.errors.map((e) => e.range.start.line)).toEqual([2, 0, 2]);
    expect(result!.errors[1]).toMatchObject({ message: expect.stringContaining("'nope'"), range: { start: { line: 0, character: 8 }, end: { line: 0, character: 13 } } });
  });

  it('counts a lone carriage return as a line break, as LSP does, while the language does not', async () => {
    const result = await outline('@a assign x\r@b assign y\n@c assign $a\n');
    // One declaration @a whose header runs over two LSP lines, then @c on the third.
    expect(result!.declarations.map((d) => [d.name, d.nameRange.start.line])).toEqual([['a', 0], ['c', 2]]);
    expect(result!.declarations[0]!.range.end).toEqual({ line: 1, character: 11 });
  });

  it('answers null for a document that is not open', async () => {
    await outline('@a emit 1\n');
    expect(await client!.request('lightsop/planOutline', { textDocument: { uri: 'file:///plans/other.sop' } })).toBeNull();
  });
});
