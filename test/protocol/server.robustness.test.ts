// Robustness over JSON-RPC: every request on every prefix of a plan (a plan being typed) and
// on random broken text answers without an error response and without the server logging an
// exception; a request the client cancels before it runs is answered with RequestCancelled.
import { afterEach, describe, expect, it } from 'vitest';
import { StreamMessageReader } from 'vscode-jsonrpc/node';
import type { Position } from 'vscode-languageserver';
import { startInProcess, startInProcessWithStreams, withTimeout, type TestClient } from './helpers';

let client: TestClient | undefined;
afterEach(() => {
  client?.dispose();
  client = undefined;
});

const PLAN = [
  '# Fetch the page first',
  '@page fetch "https://example.org/a#b" \'it\\\'s\' # note',
  "@x emit don't # not a comment",
  '@summary summarize $page $missing',
  'Keep it short. $not_a_reference',
  '',
  '# detached',
  '',
  '@letter assign',
  '--begin-L--',
  '@ inside starts a declaration',
  '--end-L--',
  '@a emit $b',
  '@b emit $a \u200b$c, "\\',
  '@lastAnswer final_answer $summary',
].join('\n');

/** Positions worth asking about in `text`: start, end, and a few in between. */
function probePositions(text: string): Position[] {
  const lines = text.split('\n');
  const last = lines.length - 1;
  const out: Position[] = [{ line: 0, character: 0 }, { line: last, character: lines[last]!.length }];
  for (let l = 0; l < lines.length; l += 3) out.push({ line: l, character: Math.floor(lines[l]!.length / 2) });
  out.push({ line: last + 5, character: 99 }); // beyond the end: clamped
  return out;
}

/** Sends every request the server handles, at several positions; resolves with the error responses. */
async function everyRequest(c: TestClient, uri: string, text: string): Promise<string[]> {
  const textDocument = { uri };
  const positions = probePositions(text);
  const whole = { start: { line: 0, character: 0 }, end: { line: 999, character: 0 } };
  const requests: [string, unknown][] = [
    ['textDocument/documentSymbol', { textDocument }],
    ['textDocument/semanticTokens/full', { textDocument }],
    ['textDocument/semanticTokens/range', { textDocument, range: whole }],
    ['textDocument/foldingRange', { textDocument }],
    ['textDocument/formatting', { textDocument, options: { tabSize: 2, insertSpaces: true } }],
    ['textDocument/selectionRange', { textDocument, positions }],
    ['textDocument/codeAction', { textDocument, range: whole, context: { diagnostics: [] } }],
    ['lightsop/planGraph', { textDocument }],
    ['lightsop/planOutline', { textDocument }],
  ];
  for (const position of positions) {
    requests.push(
      ['textDocument/completion', { textDocument, position }],
      ['textDocument/hover', { textDocument, position }],
      ['textDocument/definition', { textDocument, position }],
      ['textDocument/references', { textDocument, position, context: { includeDeclaration: true } }],
      ['textDocument/documentHighlight', { textDocument, position }],
      ['textDocument/prepareRename', { textDocument, position }],
      ['textDocument/rename', { textDocument, position, newName: 'fresh_name_42' }],
    );
  }
  const errors: string[] = [];
  await Promise.all(requests.map(([method, params]) =>
    c.connection.sendRequest(method, params).then(
      () => undefined,
      (e: Error) => {
        errors.push(`${method}: ${e.message}`);
      },
    )));
  return errors;
}

/** A deterministic generator of plan-like garbage. */
function* randomTexts(count: number, seed = 7): Generator<string> {
  const pieces = ['@', '$', '#', '"', "'", '\\', ' ', '\n', '\r', '\r\n', '\u200b', '\ufeff', 'a', 'emit', 'assign', '--begin-T--', '--end-T--', '$a', '@a', 'é', '😀', '\t'];
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state;
  };
  for (let i = 0; i < count; i++) {
    let text = '';
    const n = next() % 60;
    for (let k = 0; k < n; k++) text += pieces[next() % pieces.length];
    yield text;
  }
}

describe('robustness', () => {
  it('answers every request on every prefix of a plan being typed, without errors', async () => {
    client = startInProcess();
    await client.initialize();
    const uri = 'file:///plans/typing.sop';
    await client.open(uri, '');
    for (let k = 1; k <= PLAN.length; k += 2) {
      const text = PLAN.slice(0, k);
      await client.change(uri, text);
      expect(await everyRequest(client, uri, text), `prefix of length ${k}`).toEqual([]);
    }
    expect(client.logs.filter((l) => l.type === 1)).toEqual([]);
  });

  it('answers every request on random broken text, without errors', async () => {
    client = startInProcess();
    await client.initialize();
    const uri = 'file:///plans/random.sop';
    await client.open(uri, '');
    for (const text of randomTexts(150)) {
      await client.change(uri, text);
      expect(await everyRequest(client, uri, text), JSON.stringify(text)).toEqual([]);
    }
    expect(client.logs.filter((l) => l.type === 1)).toEqual([]);
  });

  it('answers RequestCancelled for a request cancelled before it ran', async () => {
    const started = startInProcessWithStreams();
    client = started.client;
    await client.initialize();
    const uri = 'file:///plans/cancel.sop';
    await client.open(uri, '@a emit 1\n');
    // A second reader on the server's output sees the raw response.
    const responses = new Map<string | number, { error?: { code: number } }>();
    const tap = new StreamMessageReader(started.toClient);
    let arrived: () => void = () => undefined;
    const got = new Promise<void>((resolve) => (arrived = resolve));
    tap.listen((m) => {
      const msg = m as { id?: string | number; error?: { code: number } };
      if (msg.id === 'raw-1' || msg.id === 'raw-2') {
        responses.set(msg.id, msg);
        if (responses.size === 2) arrived();
      }
    });
    const frame = (body: unknown) => {
      const json = JSON.stringify(body);
      return `Content-Length: ${Buffer.byteLength(json, 'utf8')}\r\n\r\n${json}`;
    };
    const hover = (id: string) => ({ jsonrpc: '2.0', id, method: 'textDocument/hover', params: { textDocument: { uri }, position: { line: 0, character: 1 } } });
    // One write: the server reads the request and its cancellation before it handles either.
    started.toServer.write(frame(hover('raw-1')) + frame({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 'raw-1' } }) + frame(hover('raw-2')));
    await withTimeout(got, 15000, 'raw responses');
    tap.dispose();
    expect(responses.get('raw-1')!.error?.code).toBe(-32800);
    expect(responses.get('raw-2')!.error).toBeUndefined();
  });
});
