// Initialization and diagnostics over JSON-RPC: capabilities, every contract code, cycle
// related information, the Unnecessary tag, severities, edits and versions.
import { afterEach, describe, expect, it } from 'vitest';
import { DiagnosticSeverity, DiagnosticTag, type Diagnostic } from 'vscode-languageserver';
import { openPlan, startInProcess, startInProcessWithStreams, textOf, type TestClient } from './helpers';

let client: TestClient | undefined;
afterEach(() => {
  client?.dispose();
  client = undefined;
});

const byCode = (diagnostics: Diagnostic[], code: string) => diagnostics.filter((d) => d.code === code);

describe('initialize', () => {
  it('announces every feature and incremental sync', async () => {
    client = startInProcess();
    const result = await client.initialize();
    const caps = result.capabilities;
    expect(result.serverInfo?.name).toBe('lightsop-language-server');
    expect(caps.textDocumentSync).toMatchObject({ openClose: true, change: 2 });
    expect(caps.completionProvider?.triggerCharacters).toEqual(expect.arrayContaining(['$', '@']));
    expect(caps).toMatchObject({
      hoverProvider: true,
      definitionProvider: true,
      referencesProvider: true,
      renameProvider: { prepareProvider: true },
      documentHighlightProvider: true,
      documentSymbolProvider: true,
      foldingRangeProvider: true,
      documentFormattingProvider: true,
      selectionRangeProvider: true,
      codeActionProvider: { codeActionKinds: ['quickfix'] },
    });
    expect(caps.semanticTokensProvider?.legend.tokenTypes).toContain('comment');
    await client.shutdown();
  });
});

describe('diagnostics', () => {
  it('reports syntax codes with 0-based ranges', async () => {
    const text = [
      'stray text',
      '@ emit x',
      '@nocommand',
      '@s emit "open',
      '@e emit abc\\',
      '@doc assign',
      '--begin-A--',
      'body',
      '@after assign',
      '--begin-B--',
      'x',
      '--end-B--',
      'trailing',
      '',
    ].join('\n');
    ({ client } = await openPlan(text));
    const { diagnostics } = await client.diagnosticsFor('file:///plans/test.sop', 1);
    const codes = new Set(diagnostics.map((d) => d.code));
    for (const code of ['expected-declaration', 'missing-variable-name', 'missing-command', 'unterminated-string', 'unterminated-heredoc', 'heredoc-trailing-content']) {
      expect(codes, code).toContain(code);
    }
    const stray = byCode(diagnostics, 'expected-declaration')[0]!;
    expect(stray.range).toEqual({ start: { line: 0, character: 0 }, end: { line: 0, character: 10 } });
    expect(stray.severity).toBe(DiagnosticSeverity.Error);
    expect(stray.source).toBe('lightsop');
    expect(textOf(text, byCode(diagnostics, 'missing-command')[0]!.range)).toBe('@nocommand');
    expect(textOf(text, byCode(diagnostics, 'unterminated-string')[0]!.range)).toBe('"open');
  });

  it('reports invalid-escape on the final backslash of a quoted token', async () => {
    const text = '@e emit "abc\\\n@lastAnswer final_answer $e\n';
    ({ client } = await openPlan(text));
    const { diagnostics } = await client.diagnosticsFor('file:///plans/test.sop', 1);
    const escape = byCode(diagnostics, 'invalid-escape')[0]!;
    expect(textOf(text, escape.range)).toBe('\\');
  });

  it('reports topology codes; a cycle carries related information on the other members', async () => {
    const text = [
      '@a emit $c',
      '@b emit $a',
      '@c emit $b',
      '@a emit again',
      '@d emit $missing $b',
      '@lastAnswer final_answer $d',
      '',
    ].join('\n');
    ({ client } = await openPlan(text));
    const { diagnostics } = await client.diagnosticsFor('file:///plans/test.sop', 1);
    const cycle = byCode(diagnostics, 'cycle');
    expect(cycle).toHaveLength(1);
    expect(cycle[0]!.message).toContain('a -> c -> b -> a');
    expect(textOf(text, cycle[0]!.range)).toBe('$c');
    const related = cycle[0]!.relatedInformation ?? [];
    expect(related.map((r) => textOf(text, r.location.range)).sort()).toEqual(['@b', '@c']);
    expect(related.every((r) => r.location.uri === 'file:///plans/test.sop')).toBe(true);
    const dup = byCode(diagnostics, 'duplicate-declaration')[0]!;
    expect(dup.range.start.line).toBe(3);
    expect(dup.relatedInformation?.[0]?.location.range.start.line).toBe(0);
    const undef = byCode(diagnostics, 'undefined-variable')[0]!;
    expect(textOf(text, undef.range)).toBe('$missing');
  });

  it('tags unused-variable Unnecessary, a warning for assign and Information otherwise', async () => {
    const text = '@local assign "x"\n@step fetch "u"\n@lastAnswer final_answer done\n';
    ({ client } = await openPlan(text));
    const { diagnostics } = await client.diagnosticsFor('file:///plans/test.sop', 1);
    const unused = byCode(diagnostics, 'unused-variable');
    expect(unused.map((d) => textOf(text, d.range))).toEqual(['@local', '@step']);
    expect(unused.map((d) => d.severity)).toEqual([DiagnosticSeverity.Warning, DiagnosticSeverity.Information]);
    expect(unused.every((d) => d.tags?.includes(DiagnosticTag.Unnecessary))).toBe(true);
    expect(unused[0]!.data).toEqual({ name: 'local' });
  });

  it('does not check commands without a skills description', async () => {
    ({ client } = await openPlan('@x whatever 1\n@lastAnswer final_answer $x\n'));
    const { diagnostics } = await client.diagnosticsFor('file:///plans/test.sop', 1);
    expect(diagnostics).toEqual([]);
  });

  it('re-publishes after incremental edits, with the version, and only for the latest version', async () => {
    const uri = 'file:///plans/test.sop';
    ({ client } = await openPlan('@a emit 1\n@lastAnswer final_answer $a\n', uri));
    // Three quick edits: rename the reference, then fix it again, then break it.
    await client.change(uri, [{ range: { start: { line: 1, character: 26 }, end: { line: 1, character: 27 } }, text: 'b' }]);
    await client.change(uri, [{ range: { start: { line: 1, character: 26 }, end: { line: 1, character: 27 } }, text: 'a' }]);
    const last = await client.change(uri, [{ range: { start: { line: 1, character: 26 }, end: { line: 1, character: 27 } }, text: 'zz' }]);
    const published = await client.diagnosticsFor(uri, last);
    expect(published.diagnostics.map((d) => d.code)).toEqual(['undefined-variable', 'unused-variable']);
    expect(published.diagnostics[0]!.message).toContain("'zz'");
    // Versions only ever go up: nothing stale is published after a newer version.
    const versions = client.diagnosticsLog.filter((p) => p.uri === uri).map((p) => p.version!);
    expect(versions).toEqual([...versions].sort((x, y) => x - y));
    expect(versions[versions.length - 1]).toBe(last);
  });

  it('clears diagnostics when a plan is closed, and ignores documents that are not plans', async () => {
    const uri = 'file:///plans/test.sop';
    ({ client } = await openPlan('@a emit $nope\n', uri));
    const mark = client.diagnosticsLog.length;
    await client.close(uri);
    const cleared = await client.diagnostics(uri, () => true, mark);
    expect(cleared.diagnostics).toEqual([]);
    await client.open('file:///plans/notes.md', 'stray text that is not a plan', 'markdown');
    const hover = await client.request('textDocument/hover', { textDocument: { uri: 'file:///plans/notes.md' }, position: { line: 0, character: 1 } });
    expect(hover).toBeNull();
    expect(client.diagnosticsLog.some((p) => p.uri === 'file:///plans/notes.md')).toBe(false);
  });

  it('treats a lone carriage return as an LSP line break when converting positions', async () => {
    // For the language the CR is whitespace inside one line (spec 1.1); LSP counts it as a break.
    const text = '@a emit x\r@b emit $missing\n';
    ({ client } = await openPlan(text));
    const { diagnostics } = await client.diagnosticsFor('file:///plans/test.sop', 1);
    expect(byCode(diagnostics, 'undefined-variable')[0]!.range).toEqual({ start: { line: 1, character: 8 }, end: { line: 1, character: 16 } });
  });

  it('coalesces a burst of edits into one analysis with the diagnosticsDelay setting', async () => {
    const started = startInProcessWithStreams();
    client = started.client;
    await client.initialize({ initializationOptions: { diagnosticsDelay: 200 } });
    const uri = 'file:///plans/burst.sop';
    await client.open(uri, '@a emit 1\n');
    await client.diagnosticsFor(uri, 1);
    // Three edits in one write: the server reads them all before its timer can fire.
    const frame = (version: number, text: string) => {
      const json = JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/didChange', params: { textDocument: { uri, version }, contentChanges: [{ text }] } });
      return `Content-Length: ${Buffer.byteLength(json, 'utf8')}\r\n\r\n${json}`;
    };
    started.toServer.write(frame(2, '@a emit $x\n') + frame(3, '@a emit $y\n') + frame(4, '@a emit $z\n'));
    const last = await client.diagnosticsFor(uri, 4);
    expect(last.diagnostics[0]!.message).toContain("'z'");
    expect(client.diagnosticsLog.filter((p) => p.uri === uri).map((p) => p.version)).toEqual([1, 4]);
  });
});
