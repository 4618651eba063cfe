// A hostile or buggy client's parameters (issue 11, item 14): every request the server handles,
// sent as raw JSON-RPC with `params: null`, a number, an empty object, a null or numeric
// document, and the positions, ranges and names it needs missing or malformed, is answered with
// its empty result, never an error response, and the server logs no exception for it (the params
// are checked, not tripped over). Params given by position (an array) are refused by the JSON-RPC
// layer itself with InvalidParams, as JSON-RPC says; they are not part of this test.
import { afterEach, describe, expect, it } from 'vitest';
import { StreamMessageReader } from 'vscode-jsonrpc/node';
import { startInProcessWithStreams, withTimeout, type TestClient } from './helpers';

let client: TestClient | undefined;
afterEach(() => {
  client?.dispose();
  client = undefined;
});

const uri = 'file:///plans/params.sop';
const textDocument = { uri };
const at = { line: 1, character: 9 };
const whole = { start: { line: 0, character: 0 }, end: { line: 9, character: 0 } };

/** Params no request can use: not an object, or no usable document. */
const NO_DOCUMENT: unknown[] = [null, 42, 'text', true, {}, { textDocument: null }, { textDocument: { uri: 5 } }, { textDocument: uri }];
/** Params with a usable document but a missing or malformed position. */
const BAD_POSITIONS: unknown[] = [
  { textDocument }, { textDocument, position: null }, { textDocument, position: { line: 'x', character: 0 } },
  { textDocument, position: { line: 1 } }, { textDocument, position: { line: -1, character: 0 } }, { textDocument, position: { line: 1.5, character: 0 } },
];

/** Each request with its empty result and the params that are bad for it in particular. */
const REQUESTS: [string, unknown, unknown[]][] = [
  ['textDocument/completion', { isIncomplete: false, items: [] }, BAD_POSITIONS],
  ['textDocument/hover', null, BAD_POSITIONS],
  ['textDocument/definition', null, BAD_POSITIONS],
  ['textDocument/references', [], [...BAD_POSITIONS, { textDocument, position: at, context: 'x' }]],
  ['textDocument/documentHighlight', [], BAD_POSITIONS],
  ['textDocument/prepareRename', null, BAD_POSITIONS],
  ['textDocument/rename', null, [...BAD_POSITIONS, { textDocument, position: at }, { textDocument, position: at, newName: 7 }]],
  ['textDocument/documentSymbol', [], []],
  ['textDocument/semanticTokens/full', { data: [] }, []],
  ['textDocument/semanticTokens/range', { data: [] }, [{ textDocument }, { textDocument, range: null }, { textDocument, range: { start: 1, end: 2 } }]],
  ['textDocument/foldingRange', [], []],
  ['textDocument/formatting', [], []],
  ['textDocument/selectionRange', [], [{ textDocument }, { textDocument, positions: null }, { textDocument, positions: [null, 3] }, { textDocument, positions: { line: 0 } }]],
  ['textDocument/codeAction', [], [{ textDocument }, { textDocument, range: null }, { textDocument, range: whole, context: 'x' }]],
  ['lightsop/planGraph', null, []],
  ['lightsop/planOutline', null, []],
];

describe('bad request params', () => {
  it('every request with null, scalar or malformed params gets its empty result, not an error', async () => {
    const started = startInProcessWithStreams();
    client = started.client;
    await client.initialize();
    await client.open(uri, '@a emit 1\n@b emit $a\n@lastAnswer final_answer $b\n');
    await client.diagnosticsFor(uri, 1);

    const responses = new Map<number, { result?: unknown; error?: { code: number; message: string } }>();
    const expected = new Map<number, { method: string; params: unknown; empty: unknown }>();
    let id = 0;
    let wire = '';
    for (const [method, empty, own] of REQUESTS) {
      for (const params of [...NO_DOCUMENT, ...own]) {
        id++;
        expected.set(id, { method, params, empty });
        const body = JSON.stringify({ jsonrpc: '2.0', id, method, params });
        wire += `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      }
    }
    // A second reader on the server's output sees the raw responses, errors included.
    const tap = new StreamMessageReader(started.toClient);
    let done: () => void = () => undefined;
    const all = new Promise<void>((resolve) => (done = resolve));
    tap.listen((m) => {
      const msg = m as { id?: number; result?: unknown; error?: { code: number; message: string } };
      if (typeof msg.id === 'number' && expected.has(msg.id)) {
        responses.set(msg.id, msg);
        if (responses.size === expected.size) done();
      }
    });
    started.toServer.write(wire);
    await withTimeout(all, 15_000, 'every response');
    tap.dispose();

    const wrong: string[] = [];
    for (const [n, { method, params, empty }] of expected) {
      const r = responses.get(n)!;
      if (r.error) wrong.push(`${method} ${JSON.stringify(params)}: error ${r.error.code} ${r.error.message}`);
      else if (JSON.stringify(r.result ?? null) !== JSON.stringify(empty)) wrong.push(`${method} ${JSON.stringify(params)}: ${JSON.stringify(r.result)}`);
    }
    expect(wrong).toEqual([]);
    expect(client.logs.filter((l) => l.type === 1)).toEqual([]);

    // The server still answers well-formed requests afterwards.
    const hover = await client.connection.sendRequest('textDocument/hover', { textDocument, position: { line: 1, character: 10 } });
    expect(JSON.stringify(hover)).toContain('@a emit 1');
  }, 30_000);
});
