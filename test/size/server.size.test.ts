// The language server at 200,000 declarations, over JSON-RPC: diagnostics (the 200k-member cycle
// included) and every request answer correctly, and the server logs no exception. Before issue
// 10's fixes, analysis threw "Maximum call stack size exceeded" on the cycle and several features
// answered with the empty result the request wrapper gives after an exception.
import { afterEach, describe, expect, it } from 'vitest';
import type { DocumentSymbol, FoldingRange, Hover, Location, PublishDiagnosticsParams, SelectionRange, TextEdit, WorkspaceEdit } from 'vscode-languageserver';
import { startInProcess, withTimeout, type TestClient } from '../protocol/helpers';
import { chainPlan, commentsPlan, cyclePlan, SIZE } from './plans';

const TIMEOUT = 120_000;
const WAIT = 90_000;

let client: TestClient | undefined;
afterEach(() => {
  client?.dispose();
  client = undefined;
});

async function open(text: string, uri: string): Promise<{ c: TestClient; diagnostics: PublishDiagnosticsParams }> {
  const c = startInProcess();
  client = c;
  await c.initialize();
  await c.open(uri, text);
  const diagnostics = await c.waitUntil(() => c.diagnosticsLog.find((p) => p.uri === uri && p.version === 1), `diagnostics for ${uri}`, WAIT);
  return { c, diagnostics };
}

function request<R>(c: TestClient, method: string, params: unknown): Promise<R> {
  return withTimeout(c.connection.sendRequest<R>(method, params), WAIT, method);
}

/** The server turns an exception into an empty result and logs it (type 1): none may have been logged. */
function expectNoExceptions(c: TestClient): void {
  expect(c.logs.filter((l) => l.type === 1).map((l) => l.message.slice(0, 200))).toEqual([]);
}

describe('language server at 200k declarations', () => {
  it('reports the 200k-member cycle and answers references, hover and code actions on it', async () => {
    const uri = 'file:///plans/cycle.sop';
    const { c, diagnostics } = await open(cyclePlan(), uri);
    const cycles = diagnostics.diagnostics.filter((d) => d.code === 'cycle');
    expect(cycles).toHaveLength(1);
    expect(cycles[0]!.range).toEqual({ start: { line: 0, character: 11 }, end: { line: 0, character: 14 } });
    expect(cycles[0]!.message).toContain(`(${SIZE} declarations)`);
    const textDocument = { uri };
    const refs = await request<Location[]>(c, 'textDocument/references', { textDocument, position: { line: 0, character: 2 }, context: { includeDeclaration: true } });
    expect(refs.map((r) => r.range.start.line).sort((a, b) => a - b)).toEqual([0, SIZE - 1]);
    const hover = await request<Hover | null>(c, 'textDocument/hover', { textDocument, position: { line: 5, character: 2 } });
    expect(JSON.stringify(hover?.contents)).toContain('v5');
    const actions = await request<unknown[]>(c, 'textDocument/codeAction', { textDocument, range: cycles[0]!.range, context: { diagnostics: cycles } });
    expect(Array.isArray(actions)).toBe(true);
    const graph = await request<{ nodes: unknown[]; edges: unknown[] } | null>(c, 'lightsop/planGraph', { textDocument });
    expect(graph?.nodes).toHaveLength(SIZE);
    expect(graph?.edges).toHaveLength(SIZE);
    expectNoExceptions(c);
  }, TIMEOUT);

  it('answers symbols, tokens, folding, formatting, rename and the graph on a 200k chain', async () => {
    const uri = 'file:///plans/chain.sop';
    const { c, diagnostics } = await open(chainPlan(), uri);
    expect(diagnostics.diagnostics.map((d) => `${d.range.start.line}:${d.code}`)).toEqual([`${SIZE - 1}:unused-variable`]);
    const textDocument = { uri };
    const symbols = await request<DocumentSymbol[]>(c, 'textDocument/documentSymbol', { textDocument });
    expect(symbols).toHaveLength(SIZE);
    expect(symbols[SIZE - 1]!.name).toBe(`v${SIZE - 1}`);
    const tokens = await request<{ data: number[] }>(c, 'textDocument/semanticTokens/full', { textDocument });
    // At least a name and a command token on every line.
    expect(tokens.data.length).toBeGreaterThanOrEqual(5 * 2 * SIZE);
    await request<FoldingRange[]>(c, 'textDocument/foldingRange', { textDocument });
    const edits = await request<TextEdit[]>(c, 'textDocument/formatting', { textDocument, options: { tabSize: 2, insertSpaces: true } });
    expect(edits.length).toBeGreaterThan(0);
    const rename = await request<WorkspaceEdit | null>(c, 'textDocument/rename', { textDocument, position: { line: 0, character: 2 }, newName: 'first' });
    expect(Object.values(rename?.changes ?? {}).flat().length + (rename?.documentChanges?.length ?? 0)).toBeGreaterThan(0);
    const graph = await request<{ nodes: unknown[]; edges: unknown[] } | null>(c, 'lightsop/planGraph', { textDocument });
    expect(graph?.nodes).toHaveLength(SIZE);
    expect(graph?.edges).toHaveLength(SIZE - 1);
    const completion = await request<{ items: unknown[] } | unknown[]>(c, 'textDocument/completion', { textDocument, position: { line: SIZE, character: 0 } });
    expect(completion).toBeTruthy();
    expectNoExceptions(c);
  }, TIMEOUT);

  it('answers formatting, folding and selection ranges on 400k comment lines', async () => {
    const uri = 'file:///plans/comments.sop';
    const { c, diagnostics } = await open(commentsPlan(SIZE, '  '), uri);
    expect(diagnostics.diagnostics.map((d) => d.code)).toEqual(['unused-variable']);
    const textDocument = { uri };
    const edits = await request<TextEdit[]>(c, 'textDocument/formatting', { textDocument, options: { tabSize: 2, insertSpaces: true } });
    expect(edits.length).toBeGreaterThan(0);
    const folds = await request<FoldingRange[]>(c, 'textDocument/foldingRange', { textDocument });
    expect(folds.some((f) => f.startLine === 0 && f.endLine >= SIZE - 1)).toBe(true);
    const ranges = await request<SelectionRange[]>(c, 'textDocument/selectionRange', { textDocument, positions: [{ line: SIZE, character: 2 }, { line: 2 * SIZE + 1, character: 2 }] });
    expect(ranges).toHaveLength(2);
    const hover = await request<Hover | null>(c, 'textDocument/hover', { textDocument, position: { line: SIZE, character: 1 } });
    expect(JSON.stringify(hover?.contents)).toContain('a');
    expectNoExceptions(c);
  }, TIMEOUT);

  it('hovers a literal holding 200k runs of backticks', async () => {
    const uri = 'file:///plans/ticks.sop';
    const text = `@a assign "${'`x'.repeat(SIZE)}"\n@lastAnswer assign $a\n`;
    const { c, diagnostics } = await open(text, uri);
    expect(diagnostics.diagnostics).toEqual([]);
    const hover = await request<Hover | null>(c, 'textDocument/hover', { textDocument: { uri }, position: { line: 0, character: 20 } });
    expect(hover).not.toBeNull();
    expectNoExceptions(c);
  }, TIMEOUT);
});
