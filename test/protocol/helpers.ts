/**
 * Test client for protocol tests: runs the real server in-process (`createServer` on two
 * PassThrough streams) or talks to a spawned one, over a vscode-jsonrpc connection. Every
 * notification the server sends is recorded from the start, so a test can wait for an event
 * that may already have arrived; waits race a timeout and never sleep.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach } from 'vitest';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import type {
  ClientCapabilities,
  InitializeResult,
  Position,
  PublishDiagnosticsParams,
  Range,
  TextDocumentContentChangeEvent,
  WorkspaceFolder,
} from 'vscode-languageserver';
import { createServer } from '@lightsop/language-server';

export const DEFAULT_TIMEOUT_MS = 15000;

/** Rejects when `promise` has not settled after `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Text with a `<|>` cursor marker: the text without it and the marker's LSP position. */
export function withCursor(marked: string): { text: string; position: Position } {
  const at = marked.indexOf('<|>');
  if (at === -1) throw new Error('no <|> marker in the text');
  const text = marked.slice(0, at) + marked.slice(at + 3);
  const before = text.slice(0, at).split('\n');
  return { text, position: { line: before.length - 1, character: before[before.length - 1]!.length } };
}

/** The LSP position of the first occurrence of `needle` in `text` (plus `delta` characters). */
export function positionOf(text: string, needle: string, delta = 0, occurrence = 0): Position {
  let at = -1;
  for (let k = 0; k <= occurrence; k++) {
    at = text.indexOf(needle, at + 1);
    if (at === -1) throw new Error(`'${needle}' not found`);
  }
  const before = text.slice(0, at + delta).split('\n');
  return { line: before.length - 1, character: before[before.length - 1]!.length };
}

/** The text a range covers (LSP positions; lines split at \n only, as the tests' texts are plain). */
export function textOf(text: string, range: Range): string {
  const lines = text.split('\n');
  const offset = (p: Position) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
  return text.slice(offset(range.start), offset(range.end));
}

/** Capabilities of a capable client (VS Code-like). */
export const RICH_CAPABILITIES: ClientCapabilities = {
  textDocument: {
    completion: { completionItem: { snippetSupport: true } },
    publishDiagnostics: { relatedInformation: true, tagSupport: { valueSet: [1, 2] }, versionSupport: true },
    hover: { contentFormat: ['markdown', 'plaintext'] },
    rename: { prepareSupport: true },
    semanticTokens: {
      requests: { full: true, range: true },
      tokenTypes: [],
      tokenModifiers: [],
      formats: ['relative'],
    },
  },
  workspace: {
    workspaceFolders: true,
    configuration: true,
    didChangeConfiguration: { dynamicRegistration: false },
    didChangeWatchedFiles: { dynamicRegistration: true, relativePatternSupport: true },
  },
};

export interface StartOptions {
  readonly capabilities?: ClientCapabilities;
  readonly initializationOptions?: unknown;
  readonly workspaceFolders?: WorkspaceFolder[] | null;
}

export class TestClient {
  /** Every publishDiagnostics the server sent, in order. */
  readonly diagnosticsLog: PublishDiagnosticsParams[] = [];
  /** Every window/showMessage the server sent. */
  readonly messages: { type: number; message: string }[] = [];
  /** Every window/logMessage the server sent (the server logs exceptions it turned into results). */
  readonly logs: { type: number; message: string }[] = [];
  /** Every client/registerCapability request the server sent. */
  readonly registrations: { id: string; method: string; registerOptions?: unknown }[] = [];
  private readonly versions = new Map<string, number>();
  private readonly waiters: (() => void)[] = [];

  constructor(readonly connection: MessageConnection, private readonly onDispose: () => void) {
    connection.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
      this.diagnosticsLog.push(p);
      this.wake();
    });
    connection.onNotification('window/showMessage', (p: { type: number; message: string }) => {
      this.messages.push(p);
      this.wake();
    });
    connection.onNotification('window/logMessage', (p: { type: number; message: string }) => {
      this.logs.push(p);
    });
    connection.onRequest('client/registerCapability', (p: { registrations: { id: string; method: string; registerOptions?: unknown }[] }) => {
      this.registrations.push(...p.registrations);
      this.wake();
      return null;
    });
    connection.onRequest('client/unregisterCapability', () => null);
    connection.onRequest('workspace/configuration', (p: { items: unknown[] }) => p.items.map(() => null));
    connection.listen();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves with the first value `probe` returns that is not undefined, re-checking after each event. */
  waitUntil<T>(probe: () => T | undefined, what: string, ms = DEFAULT_TIMEOUT_MS): Promise<T> {
    return withTimeout(new Promise<T>((resolve) => {
      const check = () => {
        const value = probe();
        if (value !== undefined) resolve(value);
        else this.waiters.push(check);
      };
      check();
    }), ms, what);
  }

  async initialize(options: StartOptions = {}): Promise<InitializeResult> {
    const result = await this.connection.sendRequest<InitializeResult>('initialize', {
      processId: null,
      rootUri: null,
      capabilities: options.capabilities ?? RICH_CAPABILITIES,
      initializationOptions: options.initializationOptions,
      workspaceFolders: options.workspaceFolders ?? null,
    });
    await this.connection.sendNotification('initialized', {});
    // With folders, the server registers file watchers; wait for that, so that no test ends
    // (and closes the streams) while the server's request is still on its way.
    const caps = options.capabilities ?? RICH_CAPABILITIES;
    if (options.workspaceFolders?.length && caps.workspace?.didChangeWatchedFiles?.dynamicRegistration) {
      await this.waitUntil(() => this.registrations.find((r) => r.method === 'workspace/didChangeWatchedFiles'), 'file watcher registration');
    }
    return result;
  }

  async open(uri: string, text: string, languageId = 'lightsoplang'): Promise<void> {
    this.versions.set(uri, 1);
    await this.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text } });
  }

  /** Sends a full-text or incremental change; returns the new version. */
  async change(uri: string, change: string | TextDocumentContentChangeEvent[]): Promise<number> {
    const version = (this.versions.get(uri) ?? 0) + 1;
    this.versions.set(uri, version);
    const contentChanges = typeof change === 'string' ? [{ text: change }] : change;
    await this.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version }, contentChanges });
    return version;
  }

  async close(uri: string): Promise<void> {
    await this.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  }

  /** The first diagnostics published for `uri` at log index `after` or later that satisfy `accept`. */
  diagnostics(uri: string, accept: (p: PublishDiagnosticsParams) => boolean = () => true, after = 0): Promise<PublishDiagnosticsParams> {
    return this.waitUntil(() => this.diagnosticsLog.slice(after).find((p) => p.uri === uri && accept(p)), `diagnostics for ${uri}`);
  }

  /** The diagnostics published for a given version of `uri`. */
  diagnosticsFor(uri: string, version: number): Promise<PublishDiagnosticsParams> {
    return this.diagnostics(uri, (p) => p.version === version);
  }

  request<R>(method: string, params: unknown): Promise<R> {
    return withTimeout(this.connection.sendRequest<R>(method, params), DEFAULT_TIMEOUT_MS, method);
  }

  async shutdown(): Promise<void> {
    await this.request('shutdown', undefined);
  }

  dispose(): void {
    this.connection.dispose();
    this.onDispose();
  }
}

/**
 * Starts the server in-process on two PassThrough streams. The server gets message readers and
 * writers rather than raw streams, so closing them never exits the test process.
 */
export function startInProcess(): TestClient {
  return startInProcessWithStreams().client;
}

/** Like startInProcess, and also returns the raw streams, for tests that write bytes themselves. */
export function startInProcessWithStreams(): { client: TestClient; toServer: PassThrough; toClient: PassThrough } {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const serverConnection = createConnection(ProposedFeatures.all, new StreamMessageReader(toServer), new StreamMessageWriter(toClient));
  const server = createServer(serverConnection);
  serverConnection.listen();
  const client = createMessageConnection(new StreamMessageReader(toClient), new StreamMessageWriter(toServer));
  const testClient = new TestClient(client, () => {
    server.dispose();
    serverConnection.dispose();
  });
  return { client: testClient, toServer, toClient };
}

/** Starts, initializes and opens one plan; returns the client and the first diagnostics. */
export async function openPlan(text: string, uri = 'file:///plans/test.sop', options: StartOptions = {}) {
  const client = startInProcess();
  await client.initialize(options);
  await client.open(uri, text);
  const diagnostics = await client.diagnosticsFor(uri, 1);
  return { client, uri, diagnostics };
}

/** A real workspace folder on disk for one test, and the server started on it. */
export interface TestWorkspace {
  /** The folder (fresh for each test). */
  readonly dir: string;
  /** The folder as the client names it to the server. */
  readonly folder: WorkspaceFolder;
  /** The path of `name` in the folder. */
  file(name: string): string;
  /** The file URI of `name` in the folder. */
  uriOf(name: string): string;
  /** Writes `name`: a string as it is, anything else as indented JSON. */
  write(name: string, content: unknown): void;
  /** Starts the server in-process and initializes it with the folder (unless `options` says otherwise). */
  start(options?: StartOptions): Promise<TestClient>;
}

/**
 * Registers the file's hooks: before each test a fresh temporary folder; after it the server the
 * test started is disposed and the folder removed.
 */
export function useTestWorkspace(prefix: string): TestWorkspace {
  let dir = '';
  let client: TestClient | undefined;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), prefix));
  });
  afterEach(() => {
    client?.dispose();
    client = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
  const file = (name: string) => path.join(dir, name);
  const folder = (): WorkspaceFolder => ({ uri: pathToFileURL(dir).href, name: 'ws' });
  return {
    get dir() {
      return dir;
    },
    get folder() {
      return folder();
    },
    file,
    uriOf: (name) => pathToFileURL(file(name)).href,
    write: (name, content) => writeFileSync(file(name), typeof content === 'string' ? content : JSON.stringify(content, null, 2)),
    async start(options = {}) {
      client = startInProcess();
      await client.initialize({ workspaceFolders: [folder()], ...options });
      return client;
    },
  };
}
