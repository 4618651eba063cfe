/**
 * MCP tools in the language server, with real servers from npm started from node_modules:
 * completion (description and parameters), hover, signature help and the argument-count
 * diagnostic for server-filesystem's tools; an untrusted workspace starts no server, and trusting
 * it does; a server that fails gives one diagnostic on its config field, and completion still answers.
 */
import { existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CompletionList, Hover, PublishDiagnosticsParams, SignatureHelp } from 'vscode-languageserver';
import { repoRoot } from '../helpers/cli';
import { FILESYSTEM_SERVER } from '../helpers/mcp';
import { waitFor } from '../helpers/sync';
import { startInProcess, type TestClient } from '../protocol/helpers';

let client: TestClient | undefined;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'lightsop-mcp-ls-'));
  mkdirSync(path.join(dir, 'data'));
  writeFileSync(path.join(dir, 'data', 'a.txt'), 'alpha\n');
});
afterEach(async () => {
  try {
    await client?.shutdown();
  } catch {
    // Already gone.
  }
  client?.dispose();
  client = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const MARKER_SERVER = path.join(repoRoot, 'test/mcp/fixtures/marker-server.mjs');
const uriOf = (name: string) => pathToFileURL(path.join(dir, name)).href;
const codes = (p: PublishDiagnosticsParams) => p.diagnostics.filter((d) => d.code !== 'unused-variable').map((d) => [d.code, d.range.start.line, d.message]);

async function start(trusted: boolean): Promise<TestClient> {
  client = startInProcess();
  await client.initialize({ workspaceFolders: [{ uri: pathToFileURL(dir).href, name: 'ws' }], initializationOptions: { trusted } });
  return client;
}

function config(servers: Record<string, unknown>): void {
  writeFileSync(path.join(dir, 'lightsop.config.json'), JSON.stringify({ mcpServers: servers }, null, 2));
}

describe('MCP tools in the language server', { timeout: 120_000 }, () => {
  it('completion, hover, signature help and argument-count for server-filesystem tools', async () => {
    const marker = path.join(dir, 'started');
    config({ fs: { command: process.execPath, args: [MARKER_SERVER, marker, FILESYSTEM_SERVER, '${workspaceFolder}/data'] } });
    const c = await start(true);
    const plan = uriOf('plan.sop');
    const text = '@a fs.read_text_file data/a.txt\n@b fs.red_file x\n@c fs.read_text_file\n@d fs.read_text_file \n';
    await c.open(plan, text);
    // Once the server has listed its tools: the typo is unknown (with did-you-mean), the missing argument is argument-count.
    const listed = await c.diagnostics(plan, (p) => p.diagnostics.some((d) => d.code === 'unknown-command'));
    expect(codes(listed)).toEqual(expect.arrayContaining([
      ['unknown-command', 1, expect.stringContaining("Did you mean 'fs.read_file'")],
      ['argument-count', 2, expect.stringContaining("'fs.read_text_file' takes 1 to 3 arguments")],
    ]));
    expect(listed.diagnostics.filter((d) => d.range.start.line === 0 && d.code !== 'unused-variable')).toEqual([]);

    const completion = await c.request<CompletionList>('textDocument/completion', { textDocument: { uri: plan }, position: { line: 0, character: 5 } });
    const item = completion.items.find((i) => i.label === 'fs.read_text_file')!;
    expect(item.detail).toBe('MCP tool (server fs)');
    const doc = (item.documentation as { value: string }).value;
    expect(doc).toContain('Read the complete contents of a file');
    expect(doc).toMatch(/`path` \(required\)/);
    expect(doc).toMatch(/`head` \(optional\) — number/);
    expect(completion.items.map((i) => i.label)).toEqual(expect.arrayContaining(['fs.write_file', 'fs.list_directory']));

    const hover = await c.request<Hover>('textDocument/hover', { textDocument: { uri: plan }, position: { line: 0, character: 6 } });
    expect((hover.contents as { value: string }).value).toContain('`fs.read_text_file path tail? head?`');

    const help = await c.request<SignatureHelp>('textDocument/signatureHelp', { textDocument: { uri: plan }, position: { line: 3, character: 21 } });
    expect(help.signatures[0]!.label).toBe('fs.read_text_file path tail? head?');
    expect(help.activeParameter).toBe(0);
    await c.change(plan, text.replace('@d fs.read_text_file \n', '@d fs.read_text_file a.txt 3 \n'));
    const second = await c.request<SignatureHelp>('textDocument/signatureHelp', { textDocument: { uri: plan }, position: { line: 3, character: 29 } });
    expect(second.activeParameter).toBe(2);
  });

  it('an untrusted workspace starts no server and says so on the config; trusting it starts it', async () => {
    const marker = path.join(dir, 'started');
    config({ fs: { command: process.execPath, args: [MARKER_SERVER, marker, FILESYSTEM_SERVER, path.join(dir, 'data')] } });
    const c = await start(false);
    const configUri = uriOf('lightsop.config.json');
    const warned = await c.diagnostics(configUri, (p) => p.diagnostics.length > 0);
    expect(warned.diagnostics[0]!.message).toContain('MCP server "fs" was not started');
    expect(existsSync(marker)).toBe(false);
    const plan = uriOf('plan.sop');
    await c.open(plan, '@a fs.read_text_file x\n');
    expect(codes(await c.diagnosticsFor(plan, 1))).toEqual([]);
    expect(existsSync(marker)).toBe(false);

    await c.connection.sendNotification('lightsop/setTrusted', { trusted: true });
    await waitFor('the server to start once trusted', () => existsSync(marker), 60_000);
    const cleared = await c.diagnostics(configUri, (p) => p.diagnostics.length === 0);
    expect(cleared.diagnostics).toEqual([]);
  });

  it('a server that fails to start gives one diagnostic on its field and a log line; completion still answers', async () => {
    config({ broken: { command: process.execPath, args: ['-e', 'console.error("cannot open the database"); process.exit(2)'] } });
    const c = await start(true);
    const configUri = uriOf('lightsop.config.json');
    const failed = await c.diagnostics(configUri, (p) => p.diagnostics.length > 0);
    expect(failed.diagnostics).toHaveLength(1);
    expect(failed.diagnostics[0]!.message).toMatch(/MCP server "broken": cannot start .*cannot open the database/);
    expect(failed.diagnostics[0]!.range.start.line).toBe(2);
    await waitFor('the log line', () => c.logs.some((l) => l.message.includes('MCP server "broken"')), 60_000);
    const plan = uriOf('plan.sop');
    await c.open(plan, '@a broken.tool x\n@b ');
    // The failed server's tools are not reported unknown; completion answers with the built-ins.
    expect(codes(await c.diagnosticsFor(plan, 1)).filter((d) => d[1] === 0)).toEqual([]);
    const completion = await c.request<CompletionList>('textDocument/completion', { textDocument: { uri: plan }, position: { line: 1, character: 3 } });
    expect(completion.items.map((i) => i.label)).toContain('assign');
  });
});
