// Quick fixes over JSON-RPC: did-you-mean for undefined-variable and unknown-command, declaring
// a missing variable, removing an unused assign; applying a fix makes its diagnostic go away.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CodeAction, Diagnostic, Range, TextEdit } from 'vscode-languageserver';
import { openPlan, positionOf, startInProcess, type TestClient } from './helpers';

let client: TestClient | undefined;
afterEach(() => {
  client?.dispose();
  client = undefined;
});

function applyEdits(text: string, edits: TextEdit[]): string {
  const lines = text.split('\n');
  const offset = (p: { line: number; character: number }) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
  let out = text;
  for (const e of [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start))) {
    out = out.slice(0, offset(e.range.start)) + e.newText + out.slice(offset(e.range.end));
  }
  return out;
}

async function actionsAt(uri: string, range: Range, diagnostics: Diagnostic[] = []): Promise<CodeAction[]> {
  return client!.request<CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range, context: { diagnostics } });
}

const point = (text: string, needle: string, delta = 1): Range => {
  const p = positionOf(text, needle, delta);
  return { start: p, end: p };
};

describe('code actions', () => {
  it('suggests a declared name for an undefined variable, and the fix removes the error', async () => {
    const text = '@summary emit x\n@lastAnswer final_answer $sumary\n';
    let uri: string;
    ({ client, uri } = await openPlan(text));
    const actions = await actionsAt(uri, point(text, '$sumary'));
    const titles = actions.map((a) => a.title);
    expect(titles).toEqual(["Change to '$summary'", "Declare 'sumary' with assign"]);
    expect(actions[0]!.isPreferred).toBe(true);
    expect(actions[0]!.kind).toBe('quickfix');
    expect(actions[0]!.diagnostics?.[0]?.code).toBe('undefined-variable');
    const fixed = applyEdits(text, actions[0]!.edit!.changes![uri]!);
    expect(fixed).toBe('@summary emit x\n@lastAnswer final_answer $summary\n');
    const version = await client.change(uri, fixed);
    expect((await client.diagnosticsFor(uri, version)).diagnostics).toEqual([]);
  });

  it('declares a missing variable above the block that uses it (above its comments)', async () => {
    const text = '@a emit 1\n# uses it\n@b emit $a $todo\n@lastAnswer final_answer $b\n';
    let uri: string;
    ({ client, uri } = await openPlan(text));
    const declare = (await actionsAt(uri, point(text, '$todo'))).find((a) => a.title.startsWith('Declare'))!;
    const fixed = applyEdits(text, declare.edit!.changes![uri]!);
    expect(fixed).toBe('@a emit 1\n@todo assign ""\n# uses it\n@b emit $a $todo\n@lastAnswer final_answer $b\n');
    const version = await client.change(uri, fixed);
    expect((await client.diagnosticsFor(uri, version)).diagnostics).toEqual([]);
  });

  it('removes an unused assign with its comments and text, but offers nothing for other unused steps', async () => {
    const text = '@a emit 1\n# scratch\n@tmp assign\n--begin-X--\nbody\n--end-X--\n@lastAnswer final_answer $a\n@side fetch x\n';
    let uri: string;
    ({ client, uri } = await openPlan(text));
    const actions = await actionsAt(uri, point(text, '@tmp'));
    expect(actions.map((a) => a.title)).toEqual(["Remove unused 'tmp'"]);
    expect(applyEdits(text, actions[0]!.edit!.changes![uri]!)).toBe('@a emit 1\n@lastAnswer final_answer $a\n@side fetch x\n');
    expect(await actionsAt(uri, point(text, '@side'))).toEqual([]);
  });

  it('honours context.only and sends versioned edits when the client supports them', async () => {
    const text = '@summary emit x\n@lastAnswer final_answer $sumary\n';
    client = startInProcess();
    await client.initialize({ capabilities: { workspace: { workspaceEdit: { documentChanges: true } } } });
    const uri = 'file:///plans/versioned.sop';
    await client.open(uri, text);
    const range = point(text, '$sumary');
    const none = await client.request<CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range, context: { diagnostics: [], only: ['source'] } });
    expect(none).toEqual([]);
    const [first] = await client.request<CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range, context: { diagnostics: [], only: ['quickfix'] } });
    expect(first!.edit!.documentChanges).toEqual([
      { textDocument: { uri, version: 1 }, edits: [{ range: { start: { line: 1, character: 26 }, end: { line: 1, character: 32 } }, newText: 'summary' }] },
    ]);
  });
});

describe('unknown-command fixes', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'lightsop-ca-'));
    writeFileSync(path.join(dir, 'lightsop.config.json'), JSON.stringify({ skills: './skills.json' }));
    writeFileSync(path.join(dir, 'skills.json'), JSON.stringify({ summarize: 'Summarizes text', 'word count': 'Counts words' }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('offers the closest commands of the skills description, quoting names that need it', async () => {
    const text = '@a sumarize x\n@b "word cont" $a\n@lastAnswer final_answer $b\n';
    const uri = pathToFileURL(path.join(dir, 'plan.sop')).href;
    ({ client } = await openPlan(text, uri, { workspaceFolders: [{ uri: pathToFileURL(dir).href, name: 'w' }] }));
    const first = await client.diagnosticsFor(uri, 1);
    expect(first.diagnostics.filter((d) => d.code === 'unknown-command')).toHaveLength(2);
    const fix = (await actionsAt(uri, point(text, 'sumarize')))[0]!;
    expect(fix.title).toBe("Change to 'summarize'");
    const quoted = (await actionsAt(uri, point(text, 'word cont')))[0]!;
    expect(quoted.title).toBe("Change to 'word count'");
    const fixed = applyEdits(applyEdits(text, fix.edit!.changes![uri]!), quoted.edit!.changes![uri]!);
    expect(fixed).toBe('@a summarize x\n@b "word count" $a\n@lastAnswer final_answer $b\n');
    const version = await client.change(uri, fixed);
    expect((await client.diagnosticsFor(uri, version)).diagnostics).toEqual([]);
  });
});
