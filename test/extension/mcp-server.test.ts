/**
 * The extension offers `lightsop mcp` to VS Code's agent mode (VS Code 1.101+). The launch it
 * gives VS Code starts the CLI bundled in the extension (dist/cli) and serves the folder; the
 * registration (with a stand-in for the 1.101 API) happens only in a trusted workspace.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { MCP_PROVIDER_ID, mcpLaunches } from '../../extension/src/mcp-definitions';
import { ensureBuilt, repoRoot, tempTree } from '../helpers/cli';

const extensionPath = path.join(repoRoot, 'extension');

// A stand-in for the parts of the vscode API the registration uses, with the 1.101 additions.
const fake = vi.hoisted(() => {
  const state = { trusted: false, refuse: null as string | null, registered: [] as { id: string; provider: { provideMcpServerDefinitions(): unknown[] } }[], grant: [] as (() => void)[] };
  class Emitter {
    event = () => ({ dispose() {} });
    fire() {}
    dispose() {}
  }
  class McpStdioServerDefinition {
    cwd?: unknown;
    constructor(readonly label: string, readonly command: string, readonly args: string[], readonly env: Record<string, string>, readonly version: string) {}
  }
  const vscode = {
    EventEmitter: Emitter,
    McpStdioServerDefinition,
    Uri: { file: (p: string) => ({ fsPath: p, scheme: 'file' }) },
    lm: {
      registerMcpServerDefinitionProvider(id: string, provider: { provideMcpServerDefinitions(): unknown[] }) {
        if (state.refuse) throw new Error(state.refuse);
        state.registered.push({ id, provider });
        return { dispose() {} };
      },
    },
    workspace: {
      get isTrusted() {
        return state.trusted;
      },
      workspaceFolders: [{ name: 'ws', uri: { scheme: 'file', fsPath: '/tmp/ws' } }],
      onDidChangeWorkspaceFolders: () => ({ dispose() {} }),
      onDidGrantWorkspaceTrust: (handler: () => void) => {
        state.grant.push(handler);
        return { dispose() {} };
      },
    },
  };
  return { state, vscode };
});
vi.mock('vscode', () => fake.vscode);

const context = () => ({ subscriptions: [] as unknown[], extension: { packageJSON: { version: '9.9.9' } }, extensionUri: { fsPath: extensionPath } });
const output = () => ({ lines: [] as string[], appendLine(line: string) { this.lines.push(line); } });

describe('the extension registers lightsop mcp for agent mode', () => {
  afterEach(() => {
    fake.state.registered.length = 0;
    fake.state.grant.length = 0;
  });

  it('declares the provider id it registers', () => {
    const pkg = JSON.parse(readFileSync(path.join(extensionPath, 'package.json'), 'utf8')) as { contributes: { mcpServerDefinitionProviders: { id: string }[] }; activationEvents: string[] };
    expect(pkg.contributes.mcpServerDefinitionProviders.map((p) => p.id)).toEqual([MCP_PROVIDER_ID]);
    expect(pkg.activationEvents).toContain(`onMcpCollection:${MCP_PROVIDER_ID}`);
  });

  it('registers nothing in an untrusted workspace, and registers once trust is granted', async () => {
    const { registerMcpServer } = await import('../../extension/src/mcp-server');
    fake.state.trusted = false;
    const log = output();
    registerMcpServer(context() as never, log as never);
    expect(fake.state.registered).toEqual([]);
    expect(log.lines.join('\n')).toMatch(/not trusted/);
    fake.state.trusted = true;
    for (const grant of fake.state.grant) grant();
    expect(fake.state.registered.map((r) => r.id)).toEqual([MCP_PROVIDER_ID]);
    const [definition] = fake.state.registered[0]!.provider.provideMcpServerDefinitions() as { label: string; command: string; args: string[]; env: Record<string, string>; version: string }[];
    expect(definition).toMatchObject({ label: 'LightSOPLang plans', command: process.execPath, env: { ELECTRON_RUN_AS_NODE: '1' }, version: '9.9.9' });
    expect(definition!.args).toEqual([path.join(extensionPath, 'dist/cli/main.js'), 'mcp', '--root', '/tmp/ws']);
    // Trust revoked later (a new window): the provider offers nothing.
    fake.state.trusted = false;
    expect(fake.state.registered[0]!.provider.provideMcpServerDefinitions()).toEqual([]);
  });

  it('registers at once in a trusted workspace', async () => {
    const { registerMcpServer } = await import('../../extension/src/mcp-server');
    fake.state.trusted = true;
    registerMcpServer(context() as never, output() as never);
    expect(fake.state.registered.map((r) => r.id)).toEqual([MCP_PROVIDER_ID]);
  });

  it('a VS Code whose registration throws (code-server 4.100 wants another contribution) leaves activation going and says why', async () => {
    const { registerMcpServer } = await import('../../extension/src/mcp-server');
    fake.state.trusted = true;
    fake.state.refuse = 'MCP configuration providers must be registered in the contributes.modelContextServerCollections array';
    try {
      const log = output();
      expect(() => registerMcpServer(context() as never, log as never)).not.toThrow();
      expect(log.lines.join('\n')).toContain('not registered for agent mode: MCP configuration providers must be registered');
      expect(fake.state.registered).toEqual([]);
    } finally {
      fake.state.refuse = null;
    }
  });
});

describe('the launch VS Code is given starts a working server', () => {
  beforeAll(() => ensureBuilt());

  it('serves the folder with the CLI bundled in the extension', async () => {
    const root = tempTree({ 'plans/a.sop': '@a assign x\n@lastAnswer assign $a\n' });
    const [launch] = mcpLaunches(extensionPath, [{ name: 'ws', fsPath: root }], process.execPath);
    const client = new Client({ name: 'vscode-stand-in', version: '1' });
    await client.connect(new StdioClientTransport({ command: launch!.command, args: launch!.args, cwd: launch!.cwd, env: { ...process.env, ...launch!.env } as Record<string, string>, stderr: 'ignore' }));
    try {
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toContain('lightsop://plans/plans/a.sop');
      const result = await client.callTool({ name: 'run_plan', arguments: { path: 'plans/a.sop' } });
      expect(result.structuredContent).toMatchObject({ variables: { lastAnswer: { status: 'success', value: 'x' } } });
    } finally {
      await client.close();
    }
  }, 60_000);
});
