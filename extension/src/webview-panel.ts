/**
 * Serving a page of the extension in a VS Code webview the one locked-down way: scripts on, the
 * extension's dist/ as the only local resource root, the page's one script through
 * `asWebviewUri`, and a fresh nonce for its `webviewPage` document. What the page says and is told
 * stays with each panel (graph/panel.ts, timeline/panel.ts, chat/panel.ts).
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { makeNonce, type WebviewPageOrigin } from './webview-page';

/** The origin of a page in `webview` whose one script is `script` in `dist`, with a fresh nonce. */
export function webviewOrigin(webview: vscode.Webview, dist: vscode.Uri, script: string): WebviewPageOrigin {
  return {
    cspSource: webview.cspSource,
    scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, script)).toString(),
    nonce: makeNonce((n) => randomBytes(n)),
  };
}

export interface PagePanelOptions {
  readonly viewType: string;
  readonly title: string;
  /** The page's script in dist/ (NAME-webview.js). */
  readonly script: string;
  /** The page's HTML function (graphHtml, timelineHtml). */
  readonly html: (origin: WebviewPageOrigin) => string;
}

/**
 * Opens a page in a new panel beside the editor, leaving the focus where it is, with the plan
 * icon; the page is not kept alive while hidden (it says `ready` again when shown).
 */
export function openPagePanel(extensionUri: vscode.Uri, o: PagePanelOptions): vscode.WebviewPanel {
  const dist = vscode.Uri.joinPath(extensionUri, 'dist');
  const panel = vscode.window.createWebviewPanel(o.viewType, o.title, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
    enableScripts: true,
    localResourceRoots: [dist],
    retainContextWhenHidden: false,
  });
  panel.iconPath = vscode.Uri.joinPath(extensionUri, 'images', 'sop-file.svg');
  panel.webview.html = o.html(webviewOrigin(panel.webview, dist, o.script));
  return panel;
}
