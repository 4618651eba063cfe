/**
 * The style the Plan Graph and the Run Timeline pages share, so that a status has one colour in
 * both: the status colour variables (from VS Code's theme, with light-theme fallbacks), the page's
 * font and colours, the header with its title and summary, the legend's swatches and the note. Each
 * page's own CSS follows it and adds or overrides what is its own. Pure text, no `vscode` import.
 */
export const STATUS_PAGE_STYLE = `  :root {
    --lsop-success: var(--vscode-testing-iconPassed, #388a34);
    --lsop-fail: var(--vscode-testing-iconFailed, #e51400);
    --lsop-canceled: var(--vscode-charts-orange, #d18616);
    --lsop-running: var(--vscode-charts-blue, #1a85ff);
    --lsop-undefined: var(--vscode-disabledForeground, #8c8c8c);
    --lsop-border: var(--vscode-editorWidget-border, #c8c8c8);
  }
  html, body { margin: 0; padding: 0; }
  body { font-family: var(--vscode-font-family, sans-serif); font-size: var(--vscode-font-size, 13px);
         color: var(--vscode-foreground, #333); background: var(--vscode-editor-background, #fff); }
  header { display: flex; flex-wrap: wrap; gap: 0.3em 1em; align-items: baseline; padding: 6px 12px;
           border-bottom: 1px solid var(--lsop-border); }
  header > * { white-space: nowrap; }
  header h1 { font-size: 1.05em; margin: 0; font-weight: 600; }
  #summary { opacity: 0.8; }
  .legend { margin-left: auto; display: flex; gap: 0.8em; font-size: 0.9em; }
  .legend span { white-space: nowrap; }
  .legend span::before { content: ""; display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.3em;
                         border-radius: 2px; vertical-align: -0.05em; background: currentColor; }
  .legend .success { color: var(--lsop-success); } .legend .fail { color: var(--lsop-fail); }
  .legend .running { color: var(--lsop-running); } .legend .canceled { color: var(--lsop-canceled); }
  .legend .undefined { color: var(--lsop-undefined); }
  #note { padding: 1em 12px; opacity: 0.85; }
`;
