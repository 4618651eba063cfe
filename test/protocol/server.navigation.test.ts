// Navigation and refactoring over JSON-RPC: hover, definition, references, highlights,
// prepareRename and rename (with refused names), document symbols and the plan graph request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentHighlight, DocumentSymbol, Hover, Location, Range, TextEdit, WorkspaceEdit } from 'vscode-languageserver';
import { openPlan, positionOf, textOf, type TestClient } from './helpers';

const TEXT = [
  '# Fetch the page first',
  '@page    fetch "https://example.org"',
  '@summary summarize $page "in short"',
  'Keep it under three sentences.',
  '@count   word_count $summary $page',
  '@page    fetch again',
  '@lastAnswer final_answer $count',
  '',
].join('\n');

let client: TestClient;
let uri: string;
beforeAll(async () => {
  ({ client, uri } = await openPlan(TEXT));
});
afterAll(() => client.dispose());

const at = (needle: string, delta = 1, occurrence = 0) => ({ textDocument: { uri }, position: positionOf(TEXT, needle, delta, occurrence) });
const hoverText = (h: Hover | null) => (h && typeof h.contents === 'object' && 'value' in h.contents ? h.contents.value : '');

describe('hover', () => {
  it('shows a variable declaration with its comment, dependencies and dependents', async () => {
    const hover = await client.request<Hover>('textDocument/hover', at('$page'));
    const value = hoverText(hover);
    expect(value).toContain('@page    fetch "https://example.org"');
    expect(value).toContain('Fetch the page first');
    expect(value).toContain('Used by: `summary`, `count`');
    expect(textOf(TEXT, hover.range!)).toBe('$page');
    const summary = hoverText(await client.request<Hover>('textDocument/hover', at('@summary')));
    expect(summary).toContain('Depends on: `page`');
    expect(summary).toContain('Multi-line text argument: 1 line.');
  });

  it("shows a command's description, or says that nothing describes it", async () => {
    const builtin = hoverText(await client.request<Hover>('textDocument/hover', at('final_answer')));
    expect(builtin).toContain('reserved command');
    expect(builtin).toContain("Declares the plan's answer");
    const unknown = hoverText(await client.request<Hover>('textDocument/hover', at('word_count')));
    expect(unknown).toContain('No skills description is configured');
  });

  it('marks a later duplicate and explains literals', async () => {
    expect(hoverText(await client.request<Hover>('textDocument/hover', at('@page', 1, 1)))).toContain('first declared on line 2');
    expect(hoverText(await client.request<Hover>('textDocument/hover', at('"in short"')))).toContain('Literal text `in short`');
    expect(await client.request('textDocument/hover', { textDocument: { uri }, position: { line: 7, character: 0 } })).toBeNull();
  });
});

describe('definition, references and highlights', () => {
  it('goes from a use to the first declaration', async () => {
    const loc = await client.request<Location>('textDocument/definition', at('$page', 3));
    expect(loc.uri).toBe(uri);
    expect(loc.range).toEqual({ start: { line: 1, character: 0 }, end: { line: 1, character: 5 } });
  });

  it('finds every use, and the declarations when asked', async () => {
    const refs = await client.request<Location[]>('textDocument/references', { ...at('@page'), context: { includeDeclaration: true } });
    expect(refs.map((r) => [r.range.start.line, textOf(TEXT, r.range)])).toEqual([[1, '@page'], [2, '$page'], [4, '$page'], [5, '@page']]);
    const uses = await client.request<Location[]>('textDocument/references', { ...at('$summary'), context: { includeDeclaration: false } });
    expect(uses.map((r) => r.range.start.line)).toEqual([4]);
  });

  it('highlights declarations as writes and uses as reads', async () => {
    const highlights = await client.request<DocumentHighlight[]>('textDocument/documentHighlight', at('$count'));
    expect(highlights.map((h) => [h.range.start.line, h.kind])).toEqual([[4, 3], [6, 2]]);
  });

  it('answers empty where there is no variable', async () => {
    expect(await client.request('textDocument/definition', at('fetch'))).toBeNull();
    expect(await client.request('textDocument/references', { ...at('fetch'), context: { includeDeclaration: true } })).toEqual([]);
  });
});

describe('rename', () => {
  it('prepares on the name without its sigil', async () => {
    const prepared = await client.request<{ range: Range; placeholder: string }>('textDocument/prepareRename', at('$summary', 2));
    expect(prepared.placeholder).toBe('summary');
    expect(textOf(TEXT, prepared.range)).toBe('summary');
    expect(await client.request('textDocument/prepareRename', at('summarize'))).toBeNull();
  });

  it('renames the declarations and every `$` use, keeping the sigils', async () => {
    const edit = await client.request<WorkspaceEdit>('textDocument/rename', { ...at('$page'), newName: 'site.page' });
    const edits = edit.changes![uri]!;
    expect(edits.map((e: TextEdit) => [e.range.start.line, textOf(TEXT, e.range), e.newText])).toEqual([
      [1, 'page', 'site.page'],
      [2, 'page', 'site.page'],
      [4, 'page', 'site.page'],
      [5, 'page', 'site.page'],
    ]);
  });

  it('refuses invalid and taken names with a clear error', async () => {
    for (const [newName, reason] of [
      ['', 'cannot be empty'],
      ['two words', 'whitespace'],
      ['a#b', "'#' would start a comment"],
      ['it"s', 'quotes'],
      ['count', 'already declared on line 5'],
    ] as const) {
      const error = await client.request('textDocument/rename', { ...at('$page'), newName }).then(
        () => null,
        (e: { message: string; code: number }) => e,
      );
      expect(error, newName).not.toBeNull();
      expect(error!.message).toContain(reason);
      expect(error!.code).toBe(-32803);
    }
  });
});

describe('document symbols and plan graph', () => {
  it('lists every declaration with its command, covering its comments', async () => {
    const symbols = await client.request<DocumentSymbol[]>('textDocument/documentSymbol', { textDocument: { uri } });
    expect(symbols.map((s) => [s.name, s.detail])).toEqual([
      ['page', 'fetch'],
      ['summary', 'summarize'],
      ['count', 'word_count'],
      ['page', 'fetch (duplicate)'],
      ['lastAnswer', 'final_answer'],
    ]);
    expect(symbols[0]!.range.start.line).toBe(0);
    expect(symbols[0]!.selectionRange).toEqual({ start: { line: 1, character: 0 }, end: { line: 1, character: 5 } });
    expect(symbols[1]!.range.end.line).toBe(3);
  });

  it('answers lightsop/planGraph with nodes, edges and ranges', async () => {
    const graph = await client.request<{ version: number; nodes: { name: string; range: Range }[]; edges: { from: string; to: string }[] }>(
      'lightsop/planGraph', { textDocument: { uri } });
    expect(graph.version).toBe(1);
    expect(graph.nodes.map((n) => n.name)).toEqual(['page', 'summary', 'count', 'lastAnswer']);
    expect(graph.edges).toEqual(expect.arrayContaining([{ from: 'page', to: 'summary' }, { from: 'count', to: 'lastAnswer' }]));
    expect(graph.nodes[3]!.range.start.line).toBe(6);
  });
});
