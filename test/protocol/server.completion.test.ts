// Completion over JSON-RPC: snippets at an empty line, commands in the command position,
// `$` variables in argument positions, nothing inside strings or comments, and a client
// without snippet support.
import { afterEach, describe, expect, it } from 'vitest';
import { CompletionItemKind, InsertTextFormat, type CompletionItem, type CompletionList, type TextEdit } from 'vscode-languageserver';
import { startInProcess, withCursor, type TestClient } from './helpers';

let client: TestClient | undefined;
afterEach(() => {
  client?.dispose();
  client = undefined;
});

const uri = 'file:///plans/complete.sop';

/** Opens `marked` (with a `<|>` cursor) and requests completion there. */
async function complete(marked: string, capabilities?: Parameters<TestClient['initialize']>[0]): Promise<CompletionList> {
  const { text, position } = withCursor(marked);
  client = startInProcess();
  await client.initialize(capabilities);
  await client.open(uri, text);
  return client.request<CompletionList>('textDocument/completion', { textDocument: { uri }, position });
}

const labels = (list: CompletionList) => list.items.map((i) => i.label);
const newText = (item: CompletionItem) => (item.textEdit as TextEdit).newText;

const PLAN = [
  '# Fetch the page first',
  '@page fetch "https://example.org"',
  '@summary summarize $page',
  'Keep it short.',
];

describe('completion', () => {
  it('offers the built-in commands (and those the plan uses) in the command position', async () => {
    const list = await complete([...PLAN, '@words wo<|>'].join('\n'));
    expect(labels(list)).toEqual(expect.arrayContaining(['assign', 'final_answer', 'cannot_complete', 'fetch', 'summarize']));
    const assign = list.items.find((i) => i.label === 'assign')!;
    expect(assign.kind).toBe(CompletionItemKind.Function);
    expect(assign.documentation).toMatchObject({ kind: 'markdown' });
    expect(JSON.stringify(assign.documentation)).toContain('Joins its arguments');
    // The edit replaces the partial word.
    expect((assign.textEdit as TextEdit).range).toEqual({ start: { line: 4, character: 7 }, end: { line: 4, character: 9 } });
  });

  it('offers declared variables after `$`, with their command, nearest first, never the declaration itself', async () => {
    const list = await complete([...PLAN, '', '@words word_count $<|>'].join('\n'));
    expect(labels(list)).toEqual(['$summary', '$page', '$input']);
    const summary = list.items[0]!;
    expect(summary.kind).toBe(CompletionItemKind.Variable);
    expect(summary.detail).toBe('summarize $page');
    expect(newText(summary)).toBe('$summary');
    expect(list.items[1]!.documentation).toMatchObject({ value: 'Fetch the page first' });
    expect(labels(await completeAgain('@self assign $<|>'))).not.toContain('$self');
  });

  it('filters variables by what was typed after `$`', async () => {
    const list = await complete([...PLAN, '@x emit $pa<|>'].join('\n'));
    expect(labels(list)).toEqual(['$page']);
    expect((list.items[0]!.textEdit as TextEdit).range.start.character).toBe(8);
  });

  it('offers snippets for a declaration, a here-doc and a final answer at an empty line', async () => {
    const list = await complete([...PLAN, '', '<|>'].join('\n'));
    expect(labels(list)).toEqual(['@name command', '@name assign here-doc', '@lastAnswer final_answer']);
    expect(list.items.every((i) => i.kind === CompletionItemKind.Snippet && i.insertTextFormat === InsertTextFormat.Snippet)).toBe(true);
    expect(newText(list.items[1]!)).toBe('@${1:name} assign\n--begin-${2:TEXT}--\n$0\n--end-${2:TEXT}--');
    // The final answer points at the last value declared above.
    expect(newText(list.items[2]!)).toBe('@${1:lastAnswer} final_answer \\$${2:summary}$0');
  });

  it('offers snippets and undeclared names after `@`', async () => {
    const list = await complete(['@a emit $later', '@<|>'].join('\n'));
    expect(labels(list)).toContain('@later');
    expect(labels(list)).toContain('@name command');
    expect(newText(list.items.find((i) => i.label === '@later')!)).toBe('@later ');
    // Renaming the name of an existing header: no snippets, and no extra space.
    const inHeader = await completeAgain('@a emit $later\n@la<|> emit 1');
    expect(labels(inHeader)).toEqual(['@later']);
    expect(newText(inHeader.items[0]!)).toBe('@later');
  });

  it('offers nothing inside a string, a comment, continuation text or after a literal', async () => {
    expect(labels(await complete('@a emit "half <|>'))).toEqual([]);
    expect(labels(await completeAgain('@a emit x # note $<|>'))).toEqual([]);
    expect(labels(await completeAgain('@a emit x\nsome text $<|>'))).toEqual([]);
    expect(labels(await completeAgain('@a emit lit<|>'))).toEqual([]);
    expect(labels(await completeAgain('# comment <|>'))).toEqual([]);
  });

  it('follows the comment scan: an apostrophe in a bare word hides a later `#` (quirk Q1)', async () => {
    const list = await complete(['@page fetch x', "@b emit don't # $<|>"].join('\n'));
    expect(labels(list)).toContain('$page');
  });

  it('answers from the current text right after an edit of a large plan', async () => {
    // On a plan this size the server may answer from the previous analysis (analysing takes
    // longer than its completion budget); either way the cursor context and the edit range
    // must come from the text as it is now.
    const lines = ['@v0 emit start'];
    for (let i = 1; i < 20000; i++) lines.push(`@v${i} step $v${i - 1} "arg ${i}"`);
    const text = lines.join('\n') + '\n';
    client = startInProcess();
    await client.initialize();
    await client.open(uri, text);
    await client.diagnosticsFor(uri, 1);
    const end = { line: lines.length, character: 0 };
    await client.change(uri, [{ range: { start: end, end }, text: '@last final_answer $' }]);
    const list = await client.request<CompletionList>('textDocument/completion', { textDocument: { uri }, position: { line: lines.length, character: 20 } });
    expect(list.isIncomplete).toBe(true);
    expect(list.items[0]!.label).toBe('$v19999');
    expect(list.items).toHaveLength(200);
    expect((list.items[0]!.textEdit as TextEdit).range).toEqual({ start: { line: lines.length, character: 19 }, end: { line: lines.length, character: 20 } });
  });

  it('sends plain text instead of snippets to a client without snippet support', async () => {
    const list = await complete('<|>', { capabilities: {} });
    expect(list.items.every((i) => i.insertTextFormat === InsertTextFormat.PlainText)).toBe(true);
    expect(newText(list.items[0]!)).toBe('@name command ');
  });
});

/** Completion on a new document of the running client. */
let counter = 0;
async function completeAgain(marked: string): Promise<CompletionList> {
  const { text, position } = withCursor(marked);
  const other = `file:///plans/other-${counter++}.sop`;
  await client!.open(other, text);
  return client!.request<CompletionList>('textDocument/completion', { textDocument: { uri: other }, position });
}
