/**
 * The language server: `createServer(connection)` wires documents, the workspace model, the
 * analysis cache and the debounced diagnostics to a connection, and registers every feature
 * handler through one wrapper. The wrapper finds the analysed document, answers a request the
 * client has already cancelled with RequestCancelled, and turns an exception into an empty
 * result (logged), so a half-typed plan never produces an error response. Handlers run to
 * completion synchronously against the version the request was sent for: messages are handled
 * in order, so no edit can slip in between. Stdio and tests share this function; only
 * `main.ts` knows about process streams.
 */
import {
  RegistrationRequest,
  UnregistrationRequest,
  CodeActionKind,
  CodeActionRequest,
  CompletionRequest,
  DefinitionRequest,
  DocumentFormattingRequest,
  DocumentHighlightRequest,
  DocumentSymbolRequest,
  FoldingRangeRequest,
  HoverRequest,
  SignatureHelpRequest,
  type SignatureHelp,
  PrepareRenameRequest,
  ReferencesRequest,
  RenameRequest,
  SelectionRangeRequest,
  SemanticTokensRangeRequest,
  SemanticTokensRequest,
  DidChangeWatchedFilesNotification,
  LSPErrorCodes,
  ResponseError,
  ShowMessageNotification,
  MessageType,
  TextDocumentSyncKind,
  TextDocuments,
  type CancellationToken,
  type ClientCapabilities,
  type Connection,
  type Disposable,
  type InitializeResult,
  type Position,
  type Range,
  type RequestType,
  type TextDocumentIdentifier,
} from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import packageJson from '../package.json';
import { AnalysisCache, isPlanDocument, type AnalyzedDocument } from './documents';
import { getCodeActions } from './features/code-actions';
import { getCompletions, type CompletionInput } from './features/completion';
import { getDefinition } from './features/definition';
import { getDiagnostics } from './features/diagnostics';
import { getDocumentSymbols } from './features/document-symbols';
import { getFoldingRanges } from './features/folding';
import { getFormattingEdits } from './features/formatting';
import { getDocumentHighlights } from './features/highlights';
import { getHover } from './features/hover';
import { getSignatureHelp } from './features/signature-help';
import { getPlanGraph } from './features/plan-graph';
import { getPlanOutline } from './features/plan-outline';
import { getReferences } from './features/references';
import { getRenameEdits, prepareRename, RenameRefusedError } from './features/rename';
import { getSelectionRanges } from './features/selection-ranges';
import { getSemanticTokens, SEMANTIC_TOKENS_LEGEND } from './features/semantic-tokens';
import { autoDelay, DebounceTimers } from './scheduler';
import { PlanGraphRequest, PlanOutlineRequest, SetSkillsNotification, SetTrustedNotification, type LightsopInitializationOptions } from './shared-protocol';
import { PositionMap, toLspConfigDiagnostic } from './to-lsp';
import { Workspace } from './workspace';

/** Completion on a plan whose last analysis took longer than this reuses that analysis for variables. */
const COMPLETION_REANALYSIS_BUDGET_MS = 8;

export interface LightsopServer {
  /** Stops timers and forgets documents; the connection itself belongs to the caller. */
  dispose(): void;
}

/** Reads the server's settings from initialization options or a configuration change (`{ lightsop: {...} }` or flat). */
function readSettings(raw: unknown): LightsopInitializationOptions {
  if (typeof raw !== 'object' || raw === null) return {};
  const obj = raw as Record<string, unknown>;
  const section = typeof obj.lightsop === 'object' && obj.lightsop !== null ? (obj.lightsop as Record<string, unknown>) : obj;
  const out: { trusted?: boolean; diagnosticsDelay?: number | 'auto'; skills?: string | null } = {};
  if (typeof section.trusted === 'boolean') out.trusted = section.trusted;
  if (typeof section.skills === 'string' || section.skills === null) out.skills = section.skills;
  const delay = section.diagnosticsDelay;
  if (delay === 'auto' || (typeof delay === 'number' && Number.isFinite(delay) && delay >= 0)) out.diagnosticsDelay = delay;
  return out;
}

type CompletionResult = ReturnType<typeof getCompletions>;

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isDocumentId(x: unknown): x is TextDocumentIdentifier {
  return isRecord(x) && typeof x.uri === 'string';
}

function isPosition(x: unknown): x is Position {
  return isRecord(x) && Number.isSafeInteger(x.line) && Number.isSafeInteger(x.character) && (x.line as number) >= 0 && (x.character as number) >= 0;
}

function isRange(x: unknown): x is Range {
  return isRecord(x) && isPosition(x.start) && isPosition(x.end);
}

/** Registers the LightSOPLang language server on `connection` and returns a handle to stop it. */
export function createServer(connection: Connection): LightsopServer {
  const documents = new TextDocuments(TextDocument);
  let capabilities: ClientCapabilities = {};
  let diagnosticsDelay: number | 'auto' = 'auto';
  let watcherRegistration: Disposable | null = null;
  let watcherKey = '';
  let disposed = false;
  /** The (version, skills) last published per document, so nothing is published twice. */
  const published = new Map<string, { version: number; key: number }>();

  /** Logs to the client; never throws, since it also runs while a connection is going away. */
  const logError = (message: string) => {
    if (disposed) return;
    try {
      connection.console.error(message);
    } catch {
      // The connection is closed: there is nobody left to tell.
    }
  };

  /** Sends a notification; a connection that is already gone is not an error worth raising. */
  const send = (notify: () => Promise<void>) => {
    if (disposed) return;
    try {
      notify().catch(() => undefined);
    } catch {
      // Closed or disposed connection.
    }
  };

  const workspace = new Workspace({
    configProblems(configUri, text, problems) {
      const positions = new PositionMap(text);
      send(() => connection.sendDiagnostics({ uri: configUri, diagnostics: problems.map((p) => toLspConfigDiagnostic(p, positions)) }));
    },
    notify(severity, message) {
      send(() => connection.sendNotification(ShowMessageNotification.type, {
        type: severity === 'error' ? MessageType.Error : MessageType.Warning,
        message,
      }));
    },
    skillsChanged() {
      for (const doc of documents.all()) if (isPlanDocument(doc) && !cache.isCurrent(doc)) timers.schedule(doc.uri, 0);
    },
    log: logError,
  });
  const cache = new AnalysisCache((uri) => workspace.skillsFor(uri));

  const publish = async (uri: string): Promise<void> => {
    await workspace.ready(uri);
    const doc = documents.get(uri);
    if (disposed || !doc || !isPlanDocument(doc)) return;
    // Always the current version: a timer that fires late never publishes a stale one.
    const analyzed = cache.analyze(doc);
    const last = published.get(uri);
    if (last && last.version === analyzed.version && last.key === analyzed.skills.key) return;
    published.set(uri, { version: analyzed.version, key: analyzed.skills.key });
    send(() => connection.sendDiagnostics({ uri, version: analyzed.version, diagnostics: getDiagnostics(analyzed) }));
  };
  const timers = new DebounceTimers((uri) => {
    publish(uri).catch((error: unknown) => logError(`lightsop: diagnostics for ${uri} failed: ${(error as Error)?.stack ?? String(error)}`));
  });
  const delayFor = (uri: string) => (diagnosticsDelay === 'auto' ? autoDelay(cache.latest(uri)?.millis) : diagnosticsDelay);

  const applySettings = (settings: LightsopInitializationOptions) => {
    if (settings.diagnosticsDelay !== undefined) diagnosticsDelay = settings.diagnosticsDelay;
    if (settings.trusted !== undefined) workspace.setTrusted(settings.trusted);
    if (settings.skills !== undefined) workspace.setSkillsOverride(settings.skills);
  };

  /** The analysed current version of a plan document, or null for unknown or non-plan documents. */
  const analyzed = (id: TextDocumentIdentifier): AnalyzedDocument | null => {
    const doc = documents.get(id.uri);
    return doc && isPlanDocument(doc) ? cache.analyze(doc) : null;
  };

  /**
   * Completion must stay fast on very large plans: when the current version is not analysed
   * yet and analysing takes long, the latest analysis supplies variables and commands while the
   * cursor context comes from the current text.
   */
  const completionInput = (id: TextDocumentIdentifier): CompletionInput | null => {
    const doc = documents.get(id.uri);
    if (!doc || !isPlanDocument(doc)) return null;
    const skills = workspace.skillsFor(doc.uri);
    let latest = cache.latest(doc.uri);
    if (!latest || latest.skills.key !== skills.key || (latest.version !== doc.version && latest.millis < COMPLETION_REANALYSIS_BUDGET_MS)) {
      latest = cache.analyze(doc);
    }
    if (latest.version === doc.version) return { text: latest.text, positions: latest.positions, analyzed: latest, skills };
    const text = doc.getText();
    return { text, positions: new PositionMap(text), analyzed: latest, skills };
  };

  const cancelled = () => new ResponseError<void>(LSPErrorCodes.RequestCancelled, 'The request was cancelled.');

  /**
   * The one wrapper every request goes through: params that do not have the shape the request
   * needs get the empty result (a client's bad params are no reason for an error response, and
   * are not the server's failure to log), then cancellation, and exceptions turned into results.
   */
  function guard<P, R>(method: string, fallback: R, valid: (params: unknown) => boolean, handler: (params: P) => R) {
    return (params: unknown, token: CancellationToken): R | ResponseError<void> => {
      if (token.isCancellationRequested) return cancelled();
      if (!valid(params)) return fallback;
      try {
        const result = handler(params as P);
        return token.isCancellationRequested ? cancelled() : result;
      } catch (error) {
        if (error instanceof RenameRefusedError) return new ResponseError<void>(LSPErrorCodes.RequestFailed, error.message);
        logError(`lightsop: ${method} failed: ${(error as Error)?.stack ?? String(error)}`);
        return fallback;
      }
    };
  }

  /**
   * Registers a request about one document through `guard`, with the request type itself rather
   * than `connection.onHover` and the like: those read progress tokens from the params before
   * any handler runs, so `params: null` became an internal error. No plan document means the
   * fallback.
   */
  function onDocument<P extends { textDocument: TextDocumentIdentifier }, R>(
    type: RequestType<P, R, unknown>, fallback: R, valid: (params: Record<string, unknown>) => boolean, run: (doc: AnalyzedDocument, params: P) => R,
  ): void {
    const check = (params: unknown) => isRecord(params) && isDocumentId(params.textDocument) && valid(params);
    connection.onRequest(type, guard<P, R>(type.method, fallback, check, (params) => {
      const doc = analyzed(params.textDocument);
      return doc ? run(doc, params) : fallback;
    }));
  }

  const versionedEdits = () => capabilities.workspace?.workspaceEdit?.documentChanges === true;

  async function updateWatchers(): Promise<void> {
    if (disposed || !capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration) return;
    const targets = workspace.watchTargets();
    const key = JSON.stringify(targets);
    if (key === watcherKey) return;
    watcherKey = key;
    if (targets.length === 0) {
      watcherRegistration?.dispose();
      watcherRegistration = null;
      return;
    }
    const relative = capabilities.workspace.didChangeWatchedFiles.relativePatternSupport === true;
    const watchers = targets.map((t) => ({ globPattern: relative ? { baseUri: t.baseUri, pattern: t.pattern } : `**/${t.pattern}` }));
    const previous = watcherRegistration;
    watcherRegistration = await registerWatchers(watchers);
    if (!disposed) previous?.dispose();
  }
  /**
   * Registers file watchers with plain protocol requests rather than `connection.client.register`,
   * whose disposer logs a failed unregistration on the connection and so throws (an unhandled
   * rejection) when the client has already gone away.
   */
  let registrationCounter = 0;
  async function registerWatchers(watchers: unknown[]): Promise<Disposable> {
    const id = `lightsop-watchers-${++registrationCounter}`;
    const method = DidChangeWatchedFilesNotification.type.method;
    await connection.sendRequest(RegistrationRequest.type, { registrations: [{ id, method, registerOptions: { watchers } }] });
    return {
      dispose: () => {
        if (disposed) return;
        try {
          connection.sendRequest(UnregistrationRequest.type, { unregisterations: [{ id, method }] }).catch(() => undefined);
        } catch {
          // The connection is closed; the client forgets its registrations with it.
        }
      },
    };
  }
  const refreshWatchers = () => {
    updateWatchers().catch((error: unknown) => logError(`lightsop: registering file watchers failed: ${(error as Error)?.message ?? String(error)}`));
  };

  connection.onInitialize((params): InitializeResult => {
    capabilities = params.capabilities;
    applySettings(readSettings(params.initializationOptions));
    const folders = params.workspaceFolders ?? (params.rootUri ? [{ uri: params.rootUri, name: 'root' }] : []);
    workspace.updateFolders(folders);
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
        completionProvider: { triggerCharacters: ['$', '@'] },
        hoverProvider: true,
        signatureHelpProvider: { triggerCharacters: [' '], retriggerCharacters: [' '] },
        definitionProvider: true,
        referencesProvider: true,
        renameProvider: { prepareProvider: true },
        documentHighlightProvider: true,
        documentSymbolProvider: true,
        semanticTokensProvider: { legend: SEMANTIC_TOKENS_LEGEND, full: true, range: true },
        foldingRangeProvider: true,
        documentFormattingProvider: true,
        selectionRangeProvider: true,
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
        workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
      },
      serverInfo: { name: 'lightsop-language-server', version: packageJson.version },
    };
  });

  connection.onInitialized(() => {
    if (capabilities.workspace?.workspaceFolders) {
      connection.workspace.onDidChangeWorkspaceFolders((event) => {
        workspace.updateFolders(event.added, event.removed);
        void workspace.allReady().then(refreshWatchers);
      });
    }
    void workspace.allReady().then(refreshWatchers);
  });

  connection.onShutdown(async () => {
    timers.dispose();
    // MCP servers stop with the workspace.
    await workspace.dispose();
  });

  // Watched files are handled whether or not we registered for them: a client may watch on its own.
  connection.onDidChangeWatchedFiles((params) => {
    void workspace.filesChanged(params.changes.map((c) => c.uri)).then(refreshWatchers);
  });
  connection.onNotification(SetSkillsNotification, (params) => {
    if (params && (typeof params.skills === 'string' || params.skills === null)) workspace.setSkillsOverride(params.skills);
  });
  connection.onNotification(SetTrustedNotification, (params) => {
    if (typeof params?.trusted === 'boolean') workspace.setTrusted(params.trusted);
  });
  // Settings may come from a workspace's own files (clients sync them), so a configuration change
  // can revoke trust but never grant it: only initializationOptions and lightsop/setTrusted can.
  connection.onDidChangeConfiguration((params) => {
    const settings = readSettings(params.settings);
    applySettings({ ...settings, trusted: settings.trusted === false ? false : undefined });
  });

  // Fires on open and on every edit. A document's first diagnostics are not delayed.
  documents.onDidChangeContent((e) => {
    if (!isPlanDocument(e.document)) return;
    timers.schedule(e.document.uri, published.has(e.document.uri) ? delayFor(e.document.uri) : 0);
  });
  documents.onDidClose((e) => {
    timers.cancel(e.document.uri);
    cache.delete(e.document.uri);
    published.delete(e.document.uri);
    if (isPlanDocument(e.document)) send(() => connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] }));
  });

  const any = () => true;
  const atPosition = (p: Record<string, unknown>) => isPosition(p.position);
  connection.onRequest(CompletionRequest.type, guard<{ textDocument: TextDocumentIdentifier; position: Position }, CompletionResult>(
    CompletionRequest.method, { isIncomplete: false, items: [] },
    (p) => isRecord(p) && isDocumentId(p.textDocument) && isPosition(p.position),
    (params) => {
      const input = completionInput(params.textDocument);
      if (!input) return { isIncomplete: false, items: [] };
      const snippets = capabilities.textDocument?.completion?.completionItem?.snippetSupport === true;
      return getCompletions(input, params.position, { snippets });
    },
  ));
  onDocument(HoverRequest.type, null, atPosition, (doc, p) => getHover(doc, p.position));
  connection.onRequest(SignatureHelpRequest.type, guard<{ textDocument: TextDocumentIdentifier; position: Position }, SignatureHelp | null>(
    SignatureHelpRequest.method, null,
    (p) => isRecord(p) && isDocumentId(p.textDocument) && isPosition(p.position),
    (params) => {
      const input = completionInput(params.textDocument);
      return input ? getSignatureHelp(input, params.position) : null;
    },
  ));
  onDocument(DefinitionRequest.type, null, atPosition, (doc, p) => getDefinition(doc, p.position));
  onDocument(ReferencesRequest.type, [], (p) => atPosition(p) && (p.context === undefined || p.context === null || isRecord(p.context)),
    (doc, p) => getReferences(doc, p.position, p.context?.includeDeclaration ?? true));
  onDocument(DocumentHighlightRequest.type, [], atPosition, (doc, p) => getDocumentHighlights(doc, p.position));
  onDocument(PrepareRenameRequest.type, null, atPosition, (doc, p) => prepareRename(doc, p.position));
  onDocument(RenameRequest.type, null, (p) => atPosition(p) && typeof p.newName === 'string',
    (doc, p) => getRenameEdits(doc, p.position, p.newName, { versioned: versionedEdits() }));
  onDocument(DocumentSymbolRequest.type, [], any, (doc) => getDocumentSymbols(doc));
  onDocument(SemanticTokensRequest.type, { data: [] }, any, (doc) => getSemanticTokens(doc));
  onDocument(SemanticTokensRangeRequest.type, { data: [] }, (p) => isRange(p.range), (doc, p) => getSemanticTokens(doc, p.range));
  onDocument(FoldingRangeRequest.type, [], any, (doc) => getFoldingRanges(doc));
  onDocument(DocumentFormattingRequest.type, [], any, (doc) => getFormattingEdits(doc));
  onDocument(SelectionRangeRequest.type, [], (p) => Array.isArray(p.positions) && p.positions.every(isPosition), (doc, p) => getSelectionRanges(doc, p.positions));
  onDocument(CodeActionRequest.type, [], (p) => isRange(p.range) && (p.context === undefined || p.context === null || isRecord(p.context)),
    (doc, p) => getCodeActions(doc, p.range, { only: Array.isArray(p.context?.only) ? p.context.only : undefined, versioned: versionedEdits() }));
  onDocument(PlanGraphRequest, null, any, (doc) => getPlanGraph(doc));
  onDocument(PlanOutlineRequest, null, any, (doc) => getPlanOutline(doc));

  documents.listen(connection);

  return {
    dispose() {
      // The connection is going away with the server: unregistering the watchers would send a
      // request that can only fail (and vscode-languageserver logs that failure on the closed
      // connection, an unhandled rejection).
      disposed = true;
      timers.dispose();
      watcherRegistration = null;
      // MCP servers stop with the server.
      void workspace.dispose();
    },
  };
}
