/**
 * The Run Timeline page: one `webviewPage` document like the graph page (the strict Content
 * Security Policy, the nonce on the one style block and the one script), so the page runs nothing
 * but timeline-webview.js. Pure function, no `vscode` import, so the webview tests load exactly
 * this page.
 */
import { STATUS_PAGE_STYLE } from '../status-page-style';
import { webviewPage, type WebviewPageOrigin } from '../webview-page';

export type TimelineHtmlOptions = WebviewPageOrigin;

const STYLE = `${STATUS_PAGE_STYLE}  :root {
    --lsop-critical: var(--vscode-charts-purple, #8a3ffc);
    --lsop-grid: var(--vscode-editorIndentGuide-background, #e4e4e4);
  }
  #source { opacity: 0.8; }
  #summary { white-space: normal; }
  .legend { flex-wrap: wrap; gap: 0.2em 0.8em; }
  header > .legend { white-space: normal; }
  .legend .critical::before { background: none; border: 2px solid var(--lsop-critical); box-sizing: border-box; }
  .legend .critical { color: var(--vscode-foreground, #333); }
  #chart { padding: 8px 12px 16px; }
  .row { display: grid; grid-template-columns: minmax(5em, min(16em, 35%)) minmax(0, 1fr); align-items: center; min-height: 24px; }
  .row .label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; padding-right: 8px; }
  .row .label .command { color: var(--vscode-descriptionForeground, #717171); font-family: var(--vscode-editor-font-family, monospace); margin-left: 0.4em; }
  .track { position: relative; height: 20px; min-width: 120px;
           background-image: linear-gradient(to right, var(--lsop-grid) 1px, transparent 1px); }
  .axis { position: relative; height: 18px; font-size: 0.85em; opacity: 0.75; min-width: 120px; }
  .axis span { position: absolute; transform: translateX(-50%); white-space: nowrap; }
  .axis span:first-child { transform: none; }
  .axis span.end { transform: translateX(-100%); }
  .bar { position: absolute; top: 3px; height: 14px; min-width: 3px; border-radius: 3px; cursor: pointer; border: 0; padding: 0; }
  .bar:focus-visible { outline: 2px solid var(--vscode-focusBorder, #0090f1); outline-offset: 1px; }
  .bar.status-success { background: var(--lsop-success); }
  .bar.status-fail { background: var(--lsop-fail); }
  .bar.status-canceled { background: var(--lsop-canceled); }
  .bar.status-undefined { background: var(--lsop-undefined); }
  .bar.status-running { background: repeating-linear-gradient(45deg, var(--lsop-running), var(--lsop-running) 4px, transparent 4px, transparent 7px); }
  .bar.critical { box-shadow: 0 0 0 2px var(--lsop-critical); }
  .row.critical .label .name { font-weight: 600; }
  .row.critical .label .name::after { content: " ◆"; color: var(--lsop-critical); }
`;

const BODY = `<header><h1 id="title">Run Timeline</h1><span id="summary"></span><span id="source"></span>
  <span class="legend"><span class="success">success</span><span class="fail">fail</span><span class="canceled">canceled</span><span class="undefined">undefined</span><span class="running">unfinished</span><span class="critical">critical path</span></span>
</header>
<div id="note" hidden></div>
<div id="chart"></div>
`;

export function timelineHtml(o: TimelineHtmlOptions): string {
  return webviewPage({ ...o, title: 'Run Timeline', style: STYLE, body: BODY });
}
