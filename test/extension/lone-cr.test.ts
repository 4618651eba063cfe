// A plan with a lone carriage return: the language breaks lines only at LF (spec 1.1), VS Code
// and LSP also at a lone CR. The same diagnostic must point at the same place whoever reports
// it: `lightsop lint` (in the language's line:column, which must be the same offset), the
// language server, Lint Workspace, the inline results, the CodeLens, the graph and the debugger
// (in VS Code's positions, which must be identical).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Diagnostic, Position } from 'vscode-languageserver';
import type { CommandPayload, Responder } from '@lightsop/runtime';
import type { PlanGraphResult, PlanOutlineResult } from '@lightsop/language-server';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { graphFromServer } from '../../extension/src/graph/graph-data';
import { lintPlanText } from '../../extension/src/lint-plans';
import { codeLensLine, declarationAt, errorLines, inlineResultLines } from '../../extension/src/plan-outline';
import { ensureBuilt, lightsop, tempTree } from '../helpers/cli';
import { testRegistry } from '../helpers/registry';
import { openPlan, type TestClient } from '../protocol/helpers';
import { DapClient, FakeHost, PLAN_PATH } from '../debug/dap-client';

/** The example: `$zz` is on the language's line 1, and on VS Code's line 2. */
const BROKEN = '@a emit x\r@b emit $zz\n';
/**
 * A plan that runs. The language sees a comment line, `@a` (whose header runs on after the lone
 * CR: `@b assign y` are arguments of it) and `@c`; VS Code sees five lines.
 */
const RUNS = '# note\r# more\n@a assign x\r@b assign y\n@c assign $a\n';

/** The offset of an LSP position (lines broken at LF, CRLF and a lone CR). */
function lspOffset(text: string, p: Position): number {
  return TextDocument.create('x:y', 'lightsoplang', 0, text).offsetAt(p);
}

/** The offset of a 1-based line:column as the language counts lines (at LF only). */
function languageOffset(text: string, line: number, column: number): number {
  const lines = text.split('\n');
  let offset = 0;
  for (let i = 0; i < line - 1; i++) offset += lines[i]!.length + 1;
  return offset + column - 1;
}

const servers: TestClient[] = [];
async function server(text: string): Promise<{ client: TestClient; uri: string; diagnostics: Diagnostic[] }> {
  const opened = await openPlan(text);
  servers.push(opened.client);
  return { client: opened.client, uri: opened.uri, diagnostics: opened.diagnostics.diagnostics };
}
afterAll(() => {
  for (const c of servers) c.dispose();
});

let broken: Diagnostic;
let unusedC: Diagnostic;
let outline: PlanOutlineResult;
let graph: PlanGraphResult;
beforeAll(async () => {
  const b = await server(BROKEN);
  broken = b.diagnostics.find((d) => d.code === 'undefined-variable')!;
  const r = await server(RUNS);
  unusedC = r.diagnostics.find((d) => d.code === 'unused-variable' && d.message.includes("'c'"))!;
  outline = (await r.client.request<PlanOutlineResult>('lightsop/planOutline', { textDocument: { uri: r.uri } }));
  graph = (await r.client.request<PlanGraphResult>('lightsop/planGraph', { textDocument: { uri: r.uri } }));
});

describe('a plan with a lone CR', () => {
  it('the server puts the diagnostic on the line after the CR, as VS Code shows it', () => {
    expect(broken.range).toEqual({ start: { line: 1, character: 8 }, end: { line: 1, character: 11 } });
    expect(unusedC.range.start).toEqual({ line: 4, character: 0 });
  });

  it('lightsop lint reports it in the language\'s lines, at the same offset as the server', () => {
    ensureBuilt();
    const dir = tempTree({});
    const file = path.join(dir, 'lonecr.sop');
    writeFileSync(file, BROKEN);
    const run = lightsop(['lint', '--format', 'json', file], { cwd: dir });
    expect(run.code).toBe(1);
    const found = (JSON.parse(run.stdout) as { diagnostics: { code: string; line: number; column: number; endLine: number; endColumn: number }[] }[])[0]!
      .diagnostics.find((d) => d.code === 'undefined-variable')!;
    // The language's line 1 (the CR is an ordinary character), and VS Code's line 2: one place.
    expect([found.line, found.column]).toEqual([1, 19]);
    expect(languageOffset(BROKEN, found.line, found.column)).toBe(lspOffset(BROKEN, broken.range.start));
    expect(languageOffset(BROKEN, found.endLine, found.endColumn)).toBe(lspOffset(BROKEN, broken.range.end));
  });

  it('Lint Workspace gives the same VS Code range as the server, for every diagnostic', async () => {
    const lint = lintPlanText(BROKEN, null);
    const zz = lint.find((d) => d.code === 'undefined-variable')!;
    expect(zz.range).toEqual(broken.range);
    expect(zz.message).toBe(broken.message);
    // And every diagnostic of the runnable plan, in order.
    const served = (await server(RUNS)).diagnostics;
    expect(lintPlanText(RUNS, null).map((d) => [d.code, d.range])).toEqual(served.map((d) => [d.code, d.range]));
  });

  it('the inline results of @a and @c go on the lines the server gives their declarations', () => {
    const lines = inlineResultLines(outline);
    expect(lines.get('c')).toBe(unusedC.range.start.line);
    expect(lines.get('a')).toBe(2);
    expect([...lines.keys()]).toEqual(['a', 'c']);
  });

  it('the CodeLens goes on the line of the first declaration, and Run up to Here finds the declaration under the cursor', () => {
    expect(codeLensLine(outline)).toBe(2);
    // Line 3 is `@b assign y`: in the language, part of @a's header.
    expect(declarationAt(outline, 3)?.name).toBe('a');
    expect(declarationAt(outline, 4)?.name).toBe('c');
    expect(declarationAt(outline, 0)?.name).toBe('a');
  });

  it('Run Plan reports an error at the editor\'s line:column', async () => {
    const b = await server(BROKEN);
    const o = await b.client.request<PlanOutlineResult>('lightsop/planOutline', { textDocument: { uri: b.uri } });
    expect(errorLines('lonecr.sop', o)).toEqual([`lonecr.sop:2:9: ${broken.message} [undefined-variable]`]);
  });

  it('the graph\'s nodes show and reveal the lines the server gives', () => {
    const page = graphFromServer(graph);
    expect(page.nodes.map((n) => [n.name, n.line])).toEqual([['a', 3], ['c', 5]]);
    expect([...page.reveal]).toEqual([['a', 2], ['c', 4]]);
  });
});

describe('the debugger on a plan with a lone CR', () => {
  const registry = () => testRegistry({ upper: (p: CommandPayload, r: Responder) => r.success(p.args.map(String).join(' ').toUpperCase()) });
  let client: DapClient | null = null;
  afterAll(async () => {
    if (client) await client.request('disconnect', {}).catch(() => undefined);
  });

  it('places breakpoints on VS Code\'s lines and stops on the line the editor shows', async () => {
    client = new DapClient(new FakeHost('# note\r# more\n@a assign x\r@b assign y\n@c upper $a\n', registry()));
    // Lines 1-based as VS Code sends them: 4 is `@b assign y` (part of @a's header), 5 is @c, 2 a comment.
    const bps = await client.start({}, [4, 5, 2]);
    expect(bps.body.breakpoints.map((b) => [b.verified, b.line])).toEqual([[true, 3], [true, 5], [false, 2]]);
    const stop = await client.stoppedAt();
    expect(stop).toMatchObject({ reason: 'breakpoint', frame: { name: '@a assign', line: 3 } });
    await client.ok('continue', { threadId: 1 });
    const next = await client.stoppedAt();
    expect(next).toMatchObject({ reason: 'breakpoint', frame: { name: '@c upper', line: 5 } });
    await client.ok('continue', { threadId: 1 });
    await client.nextEvent('terminated');
    const logged = client.events.filter((e): e is DebugProtocol.OutputEvent => e.event === 'output' && (e as DebugProtocol.OutputEvent).body.output.startsWith('… @c'));
    expect(logged[0]?.body.line).toBe(5);
  });

  it('refuses a plan with an error, naming it at the editor\'s line:column', async () => {
    const c = new DapClient(new FakeHost(BROKEN, registry()));
    await c.ok('initialize', { adapterID: 'lightsoplang', pathFormat: 'path', linesStartAt1: true, columnsStartAt1: true });
    const launch = await c.request('launch', { program: PLAN_PATH });
    expect(launch.success).toBe(false);
    expect(launch.message).toBe(`plan.sop:2:9: ${broken.message} [undefined-variable]: nothing was run.`);
  });
});
