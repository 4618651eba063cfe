/**
 * Starts the bundled language server (dist/server.cjs, built from packages/language-server)
 * and tells it whether the workspace is trusted: only then does it import a skills module to
 * learn the commands (completion, unknown-command). When the user grants trust later, the
 * server hears it through `lightsop/setTrusted`.
 */
import * as vscode from 'vscode';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { LANGUAGE_ID } from './language';
import { SET_SKILLS_METHOD, SET_TRUSTED_METHOD, type LightsopInitializationOptions, type SetSkillsParams, type SetTrustedParams } from './server-protocol';

export async function startClient(context: vscode.ExtensionContext): Promise<LanguageClient> {
  const module = context.asAbsolutePath('dist/server.cjs');
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc },
    debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6009'] } },
  };
  // The lightsop.skills setting overrides the config's skills for completion and diagnostics too,
  // as it does for Run Plan. A module it names is still only imported in a trusted workspace.
  const skillsSetting = (): string | null => (vscode.workspace.getConfiguration('lightsop').get<string>('skills') ?? '').trim() || null;
  const initializationOptions: LightsopInitializationOptions = { trusted: vscode.workspace.isTrusted, skills: skillsSetting() };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: LANGUAGE_ID },
      { scheme: 'untitled', language: LANGUAGE_ID },
    ],
    initializationOptions,
    // No configuration sync: the server also reads `trusted` from didChangeConfiguration, and
    // workspace settings of an untrusted folder must not be able to claim trust.
  };
  const client = new LanguageClient('lightsoplang', 'LightSOPLang Language Server', serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      const params: SetTrustedParams = { trusted: true };
      void client.sendNotification(SET_TRUSTED_METHOD, params);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('lightsop.skills')) return;
      const params: SetSkillsParams = { skills: skillsSetting() };
      void client.sendNotification(SET_SKILLS_METHOD, params);
    }),
  );
  await client.start();
  return client;
}
