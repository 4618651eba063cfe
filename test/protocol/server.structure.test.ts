// Structure features over JSON-RPC: semantic tokens (following the comment scan, quirk Q1
// included), folding ranges, selection ranges and formatting.
import { afterEach, describe, expect, it } from 'vitest';
import type { FoldingRange, InitializeResult, SelectionRange, SemanticTokens, TextEdit } from 'vscode-languageserver';
import { openPlan, positionOf, startInProcess, textOf, type TestClient } from './helpers';

let client: TestClient | undefined;
afterEach(() => {
  client?.dispose();
  client = undefined;
});

/** Decodes relative semantic tokens into [text, type, modifiers] triples. */
function decode(text: string, tokens: SemanticTokens, legend: { tokenTypes: string[]; tokenModifiers: string[] }): [string, string, string[]][] {
  const lines = text.split('\n');
  const out: [string, string, string[]][] = [];
  let line = 0;
  let char = 0;
  for (let i = 0; i < tokens.data.length; i += 5) {
    const [dLine, dChar, length, type, mods] = tokens.data.slice(i, i + 5) as [number, number, number, number, number];
    line += dLine;
    char = dLine === 0 ? char + dChar : dChar;
    const modifiers = legend.tokenModifiers.filter((_, k) => mods & (1 << k));
    out.push([lines[line]!.slice(char, char + length), legend.tokenTypes[type]!, modifiers]);
  }
  return out;
}

async function tokensOf(text: string) {
  client = startInProcess();
  const init: InitializeResult = await client.initialize();
  const uri = 'file:///plans/tokens.sop';
  await client.open(uri, text);
  const tokens = await client.request<SemanticTokens>('textDocument/semanticTokens/full', { textDocument: { uri } });
  return decode(text, tokens, init.capabilities.semanticTokensProvider!.legend);
}

describe('semantic tokens', () => {
  it('colours names, commands, references, literals and comments', async () => {
    const tokens = await tokensOf(['# Load it', '@page fetch "https://x" raw # note', '@s assign $page', ''].join('\n'));
    expect(tokens).toEqual([
      ['# Load it', 'comment', []],
      ['@page', 'variable', ['declaration']],
      ['fetch', 'function', []],
      ['"https://x"', 'string', []],
      ['raw', 'parameter', []],
      ['# note', 'comment', []],
      ['@s', 'variable', ['declaration']],
      ['assign', 'function', ['defaultLibrary']],
      ['$page', 'variable', []],
    ]);
  });

  it("follows the comment scan: in `don't # comment here` nothing is a comment (Q1)", async () => {
    const tokens = await tokensOf("@x emit don't # comment here\n");
    expect(tokens.map(([t, type]) => `${t}:${type}`)).toEqual([
      '@x:variable', 'emit:function', "don't:parameter", '#:parameter', 'comment:parameter', 'here:parameter',
    ]);
  });

  it('keeps `#` inside quotes and after a backslash as text', async () => {
    const tokens = await tokensOf('@x emit "value#hash" a\\#b # real\n');
    expect(tokens.map(([t, type]) => `${t}:${type}`)).toEqual([
      '@x:variable', 'emit:function', '"value#hash":string', 'a\\#b:parameter', '# real:comment',
    ]);
  });

  it('colours multi-line text line by line, detached `#` lines as text, here-doc markers as keywords', async () => {
    const text = ['@a emit', 'first line', '', '# detached: text', '', '@doc assign', '--begin-T--', 'body', '--end-T--', ''].join('\n');
    const tokens = await tokensOf(text);
    expect(tokens.filter(([, type]) => type === 'string' || type === 'keyword' || type === 'comment')).toEqual([
      ['first line', 'string', []],
      ['# detached: text', 'string', []],
      ['--begin-T--', 'keyword', []],
      ['body', 'string', []],
      ['--end-T--', 'keyword', []],
    ]);
  });

  it('answers range requests with the tokens of the declarations in the range', async () => {
    client = startInProcess();
    await client.initialize();
    const uri = 'file:///plans/range.sop';
    await client.open(uri, '@a emit 1\n@b emit 2\n@c emit 3\n');
    const tokens = await client.request<SemanticTokens>('textDocument/semanticTokens/range', {
      textDocument: { uri }, range: { start: { line: 1, character: 0 }, end: { line: 1, character: 9 } },
    });
    expect(tokens.data.length).toBe(3 * 5);
    expect(tokens.data[0]).toBe(1); // first token on line 1
  });
});

describe('folding ranges', () => {
  it('folds multi-line arguments, here-docs and comment blocks', async () => {
    const text = [
      '# one', '# two', '# three', // 0-2: comment block attached to @a
      '@a emit', 'line 1', 'line 2', // 3-5
      '@doc assign', '--begin-T--', 'x', 'y', '--end-T--', // 6-10
      '@single emit 1', // 11
      '',
    ].join('\n');
    let uri: string;
    ({ client, uri } = await openPlan(text));
    const folds = await client.request<FoldingRange[]>('textDocument/foldingRange', { textDocument: { uri } });
    const simple = folds.map((f) => [f.startLine, f.endLine, f.kind ?? null]).sort((x, y) => (x[0] as number) - (y[0] as number));
    expect(simple).toEqual([[0, 2, 'comment'], [3, 5, null], [6, 10, null], [7, 10, null]]);
  });
});

describe('selection ranges', () => {
  it('expands from a name to its token, header, declaration with comments and the plan', async () => {
    const text = ['# note', '@summary summarize $page "two words"', 'more text', '@page fetch x', ''].join('\n');
    let uri: string;
    ({ client, uri } = await openPlan(text));
    const [inName, inString] = await client.request<SelectionRange[]>('textDocument/selectionRange', {
      textDocument: { uri }, positions: [positionOf(text, '$page', 2), positionOf(text, 'two', 1)],
    });
    const chain = (r: SelectionRange | undefined): string[] => (r ? [textOf(text, r.range), ...chain(r.parent)] : []);
    expect(chain(inName)).toEqual([
      'page',
      '$page',
      '@summary summarize $page "two words"',
      '@summary summarize $page "two words"\nmore text',
      '# note\n@summary summarize $page "two words"\nmore text',
      text,
    ]);
    expect(chain(inString).slice(0, 2)).toEqual(['two words', '"two words"']);
  });
});

describe('formatting', () => {
  it('returns line edits that produce the core formatter output, and nothing when formatted', async () => {
    const text = ['@a    emit   1', '@long_name   emit $a', '', '', '', '#   comment  ', '@b emit $long_name   # note  ', ''].join('\n');
    let uri: string;
    ({ client, uri } = await openPlan(text));
    const edits = await client.request<TextEdit[]>('textDocument/formatting', { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } });
    const formatted = applyEdits(text, edits);
    expect(formatted).toBe(['@a         emit 1', '@long_name emit $a', '', '#   comment', '@b emit $long_name # note', ''].join('\n'));
    // Only changed lines are touched: no edit reaches into an unchanged line.
    expect(edits.length).toBeGreaterThan(1);
    const version = await client.change(uri, formatted);
    await client.diagnosticsFor(uri, version);
    expect(await client.request('textDocument/formatting', { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } })).toEqual([]);
  });
});

/** Applies LSP edits (non-overlapping) to a text whose lines end with \n. */
function applyEdits(text: string, edits: TextEdit[]): string {
  const lines = text.split('\n');
  const offset = (p: { line: number; character: number }) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
  const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
  let out = text;
  for (const e of sorted) out = out.slice(0, offset(e.range.start)) + e.newText + out.slice(offset(e.range.end));
  return out;
}
