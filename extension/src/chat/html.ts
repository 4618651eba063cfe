/**
 * The chat page: a strict Content Security Policy (nothing by default; the one script and the
 * one style block must carry the nonce; no inline handlers, no eval), so the page runs nothing
 * but chat-webview.js. Pure function, no `vscode` import, so the page tests load exactly this.
 */
import { webviewPage, type WebviewPageOrigin } from '../webview-page';

export type ChatHtmlOptions = WebviewPageOrigin;

const STYLE = `  :root {
    --ok: var(--vscode-testing-iconPassed, #388a34);
    --bad: var(--vscode-testing-iconFailed, #e51400);
    --warn: var(--vscode-charts-orange, #d18616);
    --run: var(--vscode-charts-blue, #1a85ff);
    --muted: var(--vscode-descriptionForeground, #717171);
    --border: var(--vscode-panel-border, var(--vscode-editorWidget-border, #c8c8c8));
    --card: var(--vscode-editorWidget-background, #f3f3f3);
    --code-bg: var(--vscode-textCodeBlock-background, rgba(127,127,127,0.12));
  }
  * { box-sizing: border-box; }
  html, body { margin: 0; padding: 0; height: 100%; }
  body { display: flex; flex-direction: column; font-family: var(--vscode-font-family, sans-serif); font-size: var(--vscode-font-size, 13px);
         color: var(--vscode-foreground, #333); background: var(--vscode-editor-background, #fff); }
  button { font: inherit; color: var(--vscode-button-foreground, #fff); background: var(--vscode-button-background, #0e639c); border: 1px solid transparent;
           border-radius: 2px; padding: 2px 9px; cursor: pointer; }
  button:hover { background: var(--vscode-button-hoverBackground, #1177bb); }
  button.secondary { color: var(--vscode-button-secondaryForeground, #333); background: var(--vscode-button-secondaryBackground, #ddd); }
  button.secondary:hover { background: var(--vscode-button-secondaryHoverBackground, #ccc); }
  button.link { background: none; color: var(--vscode-textLink-foreground, #006ab1); padding: 0 4px; }
  button.link:hover { text-decoration: underline; }
  button:disabled { opacity: 0.5; cursor: default; }
  select, input, textarea { font: inherit; color: var(--vscode-input-foreground, #333); background: var(--vscode-input-background, #fff);
                            border: 1px solid var(--vscode-input-border, var(--border)); border-radius: 2px; }
  textarea { resize: vertical; }
  :focus-visible { outline: 1px solid var(--vscode-focusBorder, #0090f1); outline-offset: -1px; }
  #bar { display: flex; align-items: stretch; gap: 4px; border-bottom: 1px solid var(--border); padding: 4px 6px 0; flex-wrap: wrap; }
  #tabs { display: flex; gap: 2px; flex-wrap: wrap; flex: 1; min-width: 0; }
  .tab { display: flex; align-items: center; gap: 5px; padding: 3px 6px 4px 8px; border: 1px solid var(--border); border-bottom: none;
         border-radius: 4px 4px 0 0; background: var(--vscode-tab-inactiveBackground, transparent); color: inherit; cursor: pointer; max-width: 420px; min-width: 0; }
  .tab[aria-selected="true"] { background: var(--vscode-tab-activeBackground, var(--card)); border-top: 2px solid var(--vscode-focusBorder, #0090f1); font-weight: 600; }
  .tab .title { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 5em; flex: 0 1 auto; }
  .tab .meta { color: var(--muted); font-size: 0.85em; font-weight: normal; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; min-width: 0; flex: 0 3 auto; }
  .tab .close { background: none; color: var(--muted); padding: 0 3px; }
  .tab.child { margin-left: 14px; }
  .badge { white-space: nowrap; flex: none; border-radius: 8px; padding: 0 6px; font-size: 0.8em; font-weight: 600; background: var(--vscode-badge-background, #4d4d4d); color: var(--vscode-badge-foreground, #fff); }
  .badge.approval { background: var(--warn); color: #fff; }
  .dot { width: 8px; height: 8px; border-radius: 50%; background: var(--muted); flex: none; }
  .dot.running { background: var(--run); animation: pulse 1s ease-in-out infinite alternate; }
  .dot.idle { background: var(--ok); } .dot.closing, .dot.exited { background: var(--bad); }
  @keyframes pulse { from { opacity: 1; } to { opacity: 0.3; } }
  #bar .actions { display: flex; gap: 4px; align-items: center; padding-bottom: 4px; }
  .banner { margin: 6px 10px 0; padding: 6px 10px; border-left: 3px solid var(--warn); background: var(--card); }
  .banner.error { border-left-color: var(--bad); }
  .banner.info { border-left-color: var(--run); }
  .banner button { margin-left: 6px; }
  #transcript { flex: 1; overflow: auto; padding: 8px 12px 16px; }
  .empty { color: var(--muted); margin: 2em auto; max-width: 36em; text-align: center; }
  .restored { border: 1px dashed var(--border); border-radius: 4px; padding: 4px 10px; margin-bottom: 12px; }
  .restored > .note { color: var(--muted); font-size: 0.9em; }
  .turn { margin: 10px 0 16px; }
  .user { display: flex; gap: 8px; align-items: baseline; justify-content: flex-end; }
  .bubble { background: var(--vscode-inputOption-activeBackground, rgba(0,127,212,0.15)); border-radius: 8px; padding: 6px 10px; white-space: pre-wrap;
            word-break: break-word; max-width: 85%; }
  .user.queued .bubble { opacity: 0.6; border: 1px dashed var(--border); }
  .user.cancelled .bubble { opacity: 0.5; text-decoration: line-through; }
  .chip { color: var(--muted); font-size: 0.85em; white-space: nowrap; }
  .regime { font-size: 0.75em; text-transform: uppercase; letter-spacing: 0.05em; color: var(--muted); margin: 4px 0; }
  details.plan { border: 1px solid var(--border); border-radius: 4px; margin: 6px 0; background: var(--card); }
  details.plan > summary { padding: 4px 8px; cursor: pointer; display: flex; gap: 8px; align-items: center; }
  details.plan > summary .grow { flex: 1; }
  .plan-body { display: flex; gap: 10px; flex-wrap: wrap; padding: 0 8px 8px; }
  .plan-body > * { flex: 1 1 280px; min-width: 0; }
  pre.code { margin: 0; padding: 6px 8px; background: var(--code-bg); border-radius: 3px; overflow: auto;
             font-family: var(--vscode-editor-font-family, monospace); font-size: var(--vscode-editor-font-size, 12px); }
  .tok-name { color: var(--vscode-symbolIcon-variableForeground, #001080); font-weight: 600; }
  .tok-command { color: var(--vscode-symbolIcon-functionForeground, #795e26); }
  .tok-ref { color: var(--vscode-symbolIcon-fieldForeground, #0070c1); }
  .tok-string { color: var(--vscode-debugTokenExpression-string, #a31515); }
  .tok-comment { color: var(--vscode-editorLineNumber-foreground, #008000); font-style: italic; }
  .tok-text { color: var(--muted); }
  .diff .added { background: color-mix(in srgb, var(--ok) 20%, transparent); }
  .diff .removed { background: color-mix(in srgb, var(--bad) 20%, transparent); text-decoration: line-through; }
  .diff .changed { background: color-mix(in srgb, var(--warn) 20%, transparent); }
  .diff .mark { display: inline-block; width: 5.5em; color: var(--muted); }
  table.vars { border-collapse: collapse; width: 100%; font-size: 0.95em; }
  table.vars td, table.vars th { text-align: left; padding: 2px 6px; border-bottom: 1px solid var(--border); vertical-align: top; }
  table.vars th { color: var(--muted); font-weight: normal; }
  table.vars .name { font-family: var(--vscode-editor-font-family, monospace); white-space: nowrap; }
  table.vars .value { cursor: pointer; white-space: pre-wrap; word-break: break-word; }
  table.vars .value.collapsed { max-height: 3.2em; overflow: hidden; }
  .state { white-space: nowrap; }
  .state.success { color: var(--ok); } .state.fail { color: var(--bad); } .state.canceled { color: var(--warn); }
  .state.running { color: var(--run); } .state.undefined, .state.pending { color: var(--muted); } .state.awaiting_input { color: var(--run); }
  ul.failures { margin: 4px 0; padding-left: 20px; color: var(--bad); }
  ul.progress { list-style: none; margin: 4px 0; padding: 0; color: var(--muted); }
  ul.progress li::before { content: "→ "; }
  ol.steps { margin: 4px 0; padding-left: 22px; }
  ol.steps li { margin: 3px 0; }
  ol.steps .tool { font-weight: 600; }
  ol.steps .input, ol.steps .preview { font-family: var(--vscode-editor-font-family, monospace); font-size: 0.95em; color: var(--muted); white-space: pre-wrap; word-break: break-word; }
  .card { border: 1px solid var(--warn); border-radius: 4px; padding: 8px 10px; margin: 8px 0; background: var(--card); }
  .card h3 { margin: 0 0 6px; font-size: 1em; }
  .card .fields { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin-bottom: 6px; }
  .card .fields .k { color: var(--muted); }
  .card pre { margin: 0; white-space: pre-wrap; word-break: break-word; font-family: var(--vscode-editor-font-family, monospace); }
  .card pre.whole { max-height: 16em; overflow: auto; padding: 2px 4px; background: var(--code-bg); border-radius: 3px; }
  .card ol.args { margin: 0; padding-left: 2em; }
  .card ol.args li + li { margin-top: 4px; }
  .card .esc { color: var(--vscode-errorForeground, #f14c4c); border: 1px solid currentColor; border-radius: 2px; padding: 0 1px; }
  .card .empty { color: var(--muted); font-style: italic; }
  .card .buttons { display: flex; gap: 6px; flex-wrap: wrap; align-items: center; margin-top: 6px; }
  .card .buttons input { flex: 1; min-width: 10em; padding: 2px 4px; }
  .closed-card { color: var(--muted); margin: 4px 0; font-size: 0.95em; }
  .answer { border-left: 3px solid var(--ok); padding: 2px 10px; margin: 6px 0; word-break: break-word; }
  .answer.failed, .answer.error, .answer.cannot_complete { border-left-color: var(--bad); }
  .answer.interrupted { border-left-color: var(--warn); }
  .answer.awaiting_input { border-left-color: var(--run); }
  .answer .head { font-size: 0.85em; color: var(--muted); }
  .answer .link-dest { color: var(--muted); word-break: break-all; }
  .answer pre { background: var(--code-bg); padding: 6px 8px; border-radius: 3px; overflow: auto; }
  .answer code { font-family: var(--vscode-editor-font-family, monospace); background: var(--code-bg); padding: 0 3px; border-radius: 3px; }
  .answer pre code { background: none; padding: 0; }
  .answer p { margin: 4px 0; }
  .note { color: var(--muted); font-size: 0.9em; }
  .stopping { color: var(--warn); }
  footer { border-top: 1px solid var(--border); padding: 6px 10px 8px; }
  #toolbar { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; margin-bottom: 6px; }
  #toolbar label { display: flex; gap: 4px; align-items: center; color: var(--muted); }
  #toolbar .grow { flex: 1; }
  #picker-status.error { color: var(--bad); }
  #tab-notice { margin-bottom: 6px; }
  #usage { color: var(--muted); font-size: 0.85em; }
  #tab-notice.error { color: var(--bad); }
  #composer { display: flex; gap: 6px; align-items: stretch; }
  #input { flex: 1; min-height: 3.2em; padding: 4px 6px; }
`;

const BODY = `<header id="bar">
  <div id="tabs" role="tablist" aria-label="Conversations"></div>
  <div class="actions">
    <button id="new" class="secondary" title="New conversation">+ New</button>
    <button id="stop-all" class="secondary" title="Stop every running conversation">Stop all</button>
  </div>
</header>
<div id="banners"></div>
<main id="transcript" aria-live="polite"></main>
<footer>
  <div id="toolbar">
    <label>Mode <select id="mode" title="How the next message runs: sop (a plan, with the loop as fallback), loop (one tool at a time), plan (write the plan only)"></select></label>
    <label>Model <select id="model"></select></label>
    <label>Effort <select id="effort"></select></label>
    <span id="picker-status"></span>
    <span class="grow"></span>
    <span id="usage" hidden></span>
    <span id="status"></span>
    <button id="stop" hidden>Stop</button>
  </div>
  <div id="tab-notice" hidden></div>
  <form id="composer">
    <textarea id="input" rows="3" placeholder="Ask for something. Enter sends, Shift+Enter starts a new line." aria-label="Message"></textarea>
    <button id="send" type="submit">Send</button>
  </form>
</footer>
`;

export function chatHtml(o: ChatHtmlOptions): string {
  return webviewPage({ ...o, title: 'LightSOPLang Chat', style: STYLE, body: BODY });
}
