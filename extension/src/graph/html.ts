/**
 * The Plan Graph page: a strict Content Security Policy (no inline script; the one script must
 * carry the nonce; the one style block too), so the page runs nothing but graph-webview.js. Pure function, no `vscode` import,
 * so the webview tests can load exactly this page.
 */
import { STATUS_PAGE_STYLE } from '../status-page-style';
import { webviewPage, type WebviewPageOrigin } from '../webview-page';

export type GraphHtmlOptions = WebviewPageOrigin;

const STYLE = `${STATUS_PAGE_STYLE}  :root { --lsop-node-bg: var(--vscode-editorWidget-background, #f3f3f3); }
  html, body { height: 100%; }
  body { display: flex; flex-direction: column; }
  #canvas { overflow: auto; flex: 1; }
  svg { display: block; margin: 12px auto; }
  .node { cursor: pointer; }
  .node rect { fill: var(--lsop-node-bg); stroke: var(--lsop-border); stroke-width: 1.5; }
  .node:hover rect, .node:focus rect { stroke: var(--vscode-focusBorder, #0090f1); stroke-width: 2.5; }
  .node:focus { outline: none; }
  .node .name { font-weight: 600; fill: var(--vscode-foreground, #333); }
  .node .command { fill: var(--vscode-descriptionForeground, #717171); font-family: var(--vscode-editor-font-family, monospace); }
  .node.status-success rect { stroke: var(--lsop-success); fill: color-mix(in srgb, var(--lsop-success) 18%, var(--lsop-node-bg)); }
  .node.status-fail rect { stroke: var(--lsop-fail); fill: color-mix(in srgb, var(--lsop-fail) 18%, var(--lsop-node-bg)); }
  .node.status-canceled rect { stroke: var(--lsop-canceled); fill: color-mix(in srgb, var(--lsop-canceled) 18%, var(--lsop-node-bg)); }
  .node.status-undefined rect { stroke: var(--lsop-undefined); stroke-dasharray: 5 3; }
  .node.status-running rect { stroke: var(--lsop-running); stroke-width: 3; animation: pulse 1s ease-in-out infinite alternate; }
  @keyframes pulse { from { stroke-opacity: 1; } to { stroke-opacity: 0.35; } }
  .edge { fill: none; stroke: var(--vscode-editorLineNumber-foreground, #999); stroke-width: 1.4; }
  .arrow { fill: var(--vscode-editorLineNumber-foreground, #999); }
`;

const BODY = `<header><h1 id="title">Plan Graph</h1><span id="summary"></span>
  <span class="legend"><span class="success">success</span><span class="fail">fail</span><span class="running">running</span><span class="canceled">canceled</span><span class="undefined">undefined</span></span>
</header>
<div id="note" hidden></div>
<div id="canvas"></div>
`;

export function graphHtml(o: GraphHtmlOptions): string {
  return webviewPage({ ...o, title: 'Plan Graph', style: STYLE, body: BODY });
}
