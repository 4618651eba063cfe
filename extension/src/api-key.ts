/**
 * The LLM API key for `#!english` plans. It is kept in VS Code's SecretStorage only: never in
 * settings, never in the output channel, never in a message. The environment variables of the
 * contract (LIGHTSOP_LLM_API_KEY, then OPENAI_API_KEY) are the fallback.
 */
import * as vscode from 'vscode';

const SECRET_KEY = 'lightsop.llm.apiKey';

/** The command "LightSOPLang: Set LLM API Key": stores, replaces or (with an empty entry) deletes the key. */
export async function setApiKey(secrets: vscode.SecretStorage): Promise<void> {
  const existing = await secrets.get(SECRET_KEY);
  const value = await vscode.window.showInputBox({
    title: 'LightSOPLang: Set LLM API Key',
    prompt: existing
      ? 'A key is stored. Enter a new key to replace it, or leave the box empty to delete it. It is kept in VS Code secret storage, not in settings.'
      : 'API key for the LLM endpoint of #!english plans. It is kept in VS Code secret storage, not in settings.',
    password: true,
    ignoreFocusOut: true,
    placeHolder: 'API key',
  });
  if (value === undefined) return;
  if (value.trim() === '') {
    if (existing) {
      await secrets.delete(SECRET_KEY);
      void vscode.window.showInformationMessage('LightSOPLang: the LLM API key was deleted from secret storage.');
    }
    return;
  }
  await secrets.store(SECRET_KEY, value.trim());
  void vscode.window.showInformationMessage('LightSOPLang: the LLM API key is stored in secret storage.');
}

/** The key to use: secret storage first, then the environment. */
export async function getApiKey(secrets: vscode.SecretStorage): Promise<string | undefined> {
  return (await secrets.get(SECRET_KEY)) || process.env.LIGHTSOP_LLM_API_KEY || process.env.OPENAI_API_KEY || undefined;
}
