/**
 * The VS Code side of the chat panel: "LightSOPLang: Open Chat" opens (or reveals) one webview
 * panel per window, driven by one ChatController, which owns the window's session registry.
 * Here live the editor's parts of the ChatEnvironment: the provider (the OpenAI-compatible
 * endpoint from settings with the key from SecretStorage, or VS Code's language model API), the
 * workspace's skills under Run Plan's trust rule, the chat settings, workspaceState for saved
 * conversations, and editors for plans. The page is locked down like the graph's: a nonce CSP,
 * `localResourceRoots` limited to dist/, the script through `asWebviewUri`, and every message
 * from it checked (protocol.ts). Disposing the panel stops nothing; deactivation shuts the
 * registry down (shutdown()).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as vscode from 'vscode';
import { OpenAiCompatibleAgent, redactSecrets } from '@lightsop/runtime';
import { getApiKey, setApiKey } from '../api-key';
import { webviewOrigin } from '../webview-panel';
import { DISPLAY_NAME, LANGUAGE_ID } from '../language';
import { EMPTY_REGISTRY, loadPlanRegistry } from '../run/plan-skills';
import { planSettings } from '../settings';
import { ChatController, type ChatEnvironment, type ChatSettings, type ChatSkills, type ProviderResolution } from './controller';
import { chatHtml } from './html';
import { NO_VSCODE_MODEL, VsCodeLmAgent, type LmApi } from './lm-agent';
import { DEFAULT_MODEL } from './model';

export const CHAT_VIEW_TYPE = 'lightsop.chat';
export const CHAT_COMMANDS = { open: 'lightsop.openChat', stopAll: 'lightsop.chat.stopAll', newConversation: 'lightsop.chat.newConversation' } as const;
const RUNNING_CONTEXT = 'lightsop.chatRunning';

function folder(): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
}

function chatConfig(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('lightsop', folder()?.uri);
}

/** The chat settings (read when used, so changes apply to the next call). */
export function readChatSettings(): ChatSettings {
  const cfg = chatConfig();
  const review = cfg.get<string>('chat.reviewPlans');
  return {
    reviewPlans: review === 'always' || review === 'sideEffects' ? review : 'off',
    autoApproveReadOnly: cfg.get<boolean>('chat.autoApproveReadOnly') !== false,
    standardSkills: cfg.get<boolean>('chat.standardSkills') !== false,
  };
}

function lmApi(): LmApi {
  return {
    selectChatModels: (selector) => vscode.lm.selectChatModels(selector),
    user: (text) => vscode.LanguageModelChatMessage.User(text),
    assistant: (text) => vscode.LanguageModelChatMessage.Assistant(text),
    tokenSource: () => new vscode.CancellationTokenSource(),
  };
}

/** The provider the chat uses now: `lightsop.chat.provider` picks VS Code's language models or the endpoint. */
async function resolveProvider(secrets: vscode.SecretStorage): Promise<ProviderResolution> {
  const cfg = chatConfig();
  if (cfg.get<string>('chat.provider') === 'vscode-lm') {
    if (!vscode.lm || typeof vscode.lm.selectChatModels !== 'function') return { ok: false, message: NO_VSCODE_MODEL };
    const family = (cfg.get<string>('chat.vscodeLmFamily') ?? '').trim();
    const agent = new VsCodeLmAgent(lmApi(), family ? { family } : {});
    const models = await agent.models();
    if (models.length === 0) return { ok: false, message: family ? `${NO_VSCODE_MODEL} (lightsop.chat.vscodeLmFamily is "${family}".)` : NO_VSCODE_MODEL };
    return {
      ok: true, agent, label: `VS Code language model: ${models[0]!.name}`, defaultModel: models[0]!.name,
      models: models.map((m) => ({ name: m.id, label: `${m.name} (${m.vendor})` })),
    };
  }
  const f = folder();
  const llm = f ? planSettings(f.uri).llm : { baseUrl: cfg.get<string>('llm.baseUrl')?.trim() || undefined, model: cfg.get<string>('llm.model')?.trim() || undefined };
  const baseUrl = llm.baseUrl || process.env.LIGHTSOP_LLM_BASE_URL;
  const model = llm.model || process.env.LIGHTSOP_LLM_MODEL;
  if (!baseUrl || !model) {
    const where = vscode.workspace.isTrusted
      ? 'Set lightsop.llm.baseUrl and lightsop.llm.model (an OpenAI-compatible endpoint such as http://127.0.0.1:11434/v1 and a model name), and run "LightSOPLang: Set LLM API Key" if the endpoint needs a key;'
      : 'This workspace is not trusted, so the endpoint is only taken from your user settings (lightsop.llm.baseUrl and lightsop.llm.model), never from the workspace: your API key is sent to it. Set them in your user settings,';
    return { ok: false, message: `No language model is configured for the chat. ${where} or set lightsop.chat.provider to "vscode-lm" to use VS Code's language models.` };
  }
  try {
    new URL(baseUrl);
  } catch {
    return { ok: false, message: `lightsop.llm.baseUrl is not a URL: ${redactSecrets(baseUrl)}` };
  }
  const apiKey = await getApiKey(secrets);
  const extra = (cfg.get<unknown[]>('chat.models') ?? []).filter((m): m is string => typeof m === 'string' && m.trim() !== '' && m !== DEFAULT_MODEL);
  return {
    ok: true,
    agent: new OpenAiCompatibleAgent({ baseUrl, model, apiKey }),
    // Shown in the panel: never the credentials a URL may carry.
    label: `${model} at ${redactSecrets(baseUrl)}`,
    defaultModel: model,
    models: [...new Set([model, ...extra])].map((m) => ({ name: m, label: m })),
  };
}

/** The workspace's skills for the chat, loaded like Run Plan's (a module only in a trusted workspace). */
async function loadChatSkills(): Promise<ChatSkills> {
  const f = folder();
  if (!f) return { registry: null, note: 'No folder is open: the chat has no workspace skills and no file or shell skills.', stamp: 'no-folder' };
  const settings = planSettings(f.uri);
  const loaded = await loadPlanRegistry(settings.skillsPath, settings.skillsOrigin, settings.configFile);
  if (loaded.ok) return { registry: loaded.registry !== EMPTY_REGISTRY ? loaded.registry : null, note: null, stamp: `${loaded.stamp}|${vscode.workspace.isTrusted}` };
  const note = `${loaded.message} The chat uses the standard skills only.`;
  return { registry: null, note, stamp: `${loaded.kind}:${settings.skillsPath}|${vscode.workspace.isTrusted}` };
}

export class ChatPanels implements vscode.Disposable {
  #controller: ChatController | null = null;
  #panel: vscode.WebviewPanel | null = null;
  #attachment: { dispose(): void } | null = null;
  readonly #subscriptions: vscode.Disposable[] = [];
  #reviewFiles = 0;

  constructor(private readonly context: vscode.ExtensionContext, private readonly output: vscode.OutputChannel) {
    this.#subscriptions.push(
      vscode.window.registerWebviewPanelSerializer(CHAT_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel) => {
          this.#adopt(panel);
        },
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!this.#controller) return;
        if (e.affectsConfiguration('lightsop.skills') || e.affectsConfiguration('lightsop.chat.standardSkills')) void this.#controller.reloadSkills();
        if (e.affectsConfiguration('lightsop.chat') || e.affectsConfiguration('lightsop.llm')) void this.#controller.refreshConfig();
      }),
      context.secrets.onDidChange(() => void this.#controller?.refreshConfig()),
      vscode.workspace.onDidGrantWorkspaceTrust(() => void this.#controller?.reloadSkills()),
    );
    if (vscode.lm && typeof vscode.lm.onDidChangeChatModels === 'function') {
      this.#subscriptions.push(vscode.lm.onDidChangeChatModels(() => void this.#controller?.refreshConfig()));
    }
    void vscode.commands.executeCommand('setContext', RUNNING_CONTEXT, false);
  }

  #environment(): ChatEnvironment {
    const secrets = this.context.secrets;
    return {
      projectRoot: folder()?.uri.fsPath ?? null,
      resolveProvider: () => resolveProvider(secrets),
      loadSkills: loadChatSkills,
      settings: readChatSettings,
      storage: this.context.workspaceState,
      openPlan: async (plan) => {
        const doc = await vscode.workspace.openTextDocument({ language: LANGUAGE_ID, content: plan });
        await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, preview: false });
      },
      editPlan: (plan, signal) => this.#editPlan(plan, signal),
      configure: async (what) => {
        if (what === 'apiKey') await setApiKey(secrets);
        else await vscode.commands.executeCommand('workbench.action.openSettings', 'lightsop.');
      },
      onRunningChanged: (running) => void vscode.commands.executeCommand('setContext', RUNNING_CONTEXT, running),
      onAttention: (text) => {
        // The card is in the panel; say so only when nobody can see it.
        if (this.#panel?.visible) return;
        void vscode.window.showInformationMessage(`${DISPLAY_NAME}: ${text}`, 'Open Chat').then((pick) => {
          if (pick) void this.open();
        });
      },
      log: (line) => this.output.appendLine(`[chat] ${line}`),
    };
  }

  /** The window's chat controller (made on first use). */
  controller(): ChatController {
    if (!this.#controller) this.#controller = new ChatController(this.#environment());
    return this.#controller;
  }

  /** "LightSOPLang: Open Chat": reveal the panel, or make it. */
  async open(): Promise<void> {
    if (this.#panel) {
      this.#panel.reveal(undefined, false);
      return;
    }
    const panel = vscode.window.createWebviewPanel(CHAT_VIEW_TYPE, `${DISPLAY_NAME} Chat`, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false }, {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.context.extensionUri, 'dist')],
      retainContextWhenHidden: false,
    });
    this.#adopt(panel);
  }

  #adopt(panel: vscode.WebviewPanel): void {
    if (this.#panel && this.#panel !== panel) {
      // One chat panel per window: a second restored panel is closed.
      panel.dispose();
      this.#panel.reveal(undefined, false);
      return;
    }
    const dist = vscode.Uri.joinPath(this.context.extensionUri, 'dist');
    panel.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    panel.iconPath = vscode.Uri.joinPath(this.context.extensionUri, 'images', 'sop-file.svg');
    this.#panel = panel;
    const controller = this.controller();
    this.#attachment = controller.attach(panel.webview);
    const received = panel.webview.onDidReceiveMessage((message: unknown) => void controller.handleMessage(message));
    panel.webview.html = chatHtml(webviewOrigin(panel.webview, dist, 'chat-webview.js'));
    panel.onDidDispose(() => {
      received.dispose();
      this.#attachment?.dispose();
      this.#attachment = null;
      if (this.#panel === panel) this.#panel = null;
    });
    controller.start().catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      this.output.appendLine(`[chat] the chat did not start: ${message}`);
      void vscode.window.showErrorMessage(`${DISPLAY_NAME}: the chat did not start: ${message}`);
    });
  }

  /** "Stop All Chat Turns": interrupt every running loop. */
  async stopAll(): Promise<void> {
    const stopped = await this.#controller?.stopAll();
    if (!stopped) void vscode.window.setStatusBarMessage(`${DISPLAY_NAME}: no chat turn is running`, 3000);
  }

  async newConversation(): Promise<void> {
    await this.open();
    await this.controller().handleMessage({ type: 'newConversation' });
  }

  /**
   * Plan review "Edit": the plan goes into a file in the extension's workspace storage; saving it
   * sends the saved text back; the card's "Cancel edit" (or the turn being interrupted) gives up.
   */
  async #editPlan(plan: string, signal: AbortSignal): Promise<string | null> {
    const base = this.context.storageUri ?? this.context.globalStorageUri;
    const dir = path.join(base.fsPath, 'chat-review');
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, `plan-${Date.now()}-${++this.#reviewFiles}.sop`);
    await writeFile(file, plan, 'utf8');
    const uri = vscode.Uri.file(file);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, preview: false });
    return new Promise<string | null>((resolve) => {
      const done = (text: string | null) => {
        saved.dispose();
        signal.removeEventListener('abort', onAbort);
        resolve(text);
      };
      const saved = vscode.workspace.onDidSaveTextDocument((d) => {
        if (d.uri.toString() === uri.toString()) done(d.getText());
      });
      const onAbort = () => done(null);
      if (signal.aborted) done(null);
      else signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Window closing or deactivation: every loop is shut down, bounded by the drain deadline. */
  async shutdown(): Promise<void> {
    await this.#controller?.shutdown();
  }

  dispose(): void {
    this.#attachment?.dispose();
    this.#panel?.dispose();
    for (const s of this.#subscriptions) s.dispose();
  }
}
