// MCP servers in a REAL VS Code (code-server), with fixtures/mcp-workspace, whose
// lightsop.config.json names server-everything (started through start-everything.mjs, which
// appends its pid to mcp-started.txt first). Trusted: completion lists the everything.* tools with
// their descriptions, Run Plan shows the echo tool's result and the long-running tool's progress.
// Untrusted: no server starts (mcp-started.txt never appears, not even after Run Plan), and the
// user is told why (a toast and a warning on the config in the Problems panel).
//
// extension.e2e.mjs calls `mcpE2e`; `node test/e2e/mcp.e2e.mjs --vsix FILE` runs it alone.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { closeAll, closeSuggest, launch, log, waitFor } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const WORKSPACE = path.join(here, 'fixtures', 'mcp-workspace');
// What the config's ${env:...} values name: this Node, and server-everything from node_modules.
process.env.LIGHTSOP_E2E_NODE = process.execPath;
process.env.LIGHTSOP_E2E_EVERYTHING = path.join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** The inline result (the `after` decoration text) on the editor line holding `lineText`. */
function inlineResultOn(editor, lineText) {
  return editor.locator('.view-line', { hasText: lineText }).first().evaluate((l) =>
    [...l.querySelectorAll('span')].map((s) => getComputedStyle(s, '::after').content).filter((c) => c && c !== 'none' && c !== 'normal').join(''));
}

const started = (vs) => {
  const file = path.join(vs.dirs.ws, 'mcp-started.txt');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : [];
};

async function trusted({ vsix, keep, check, track }) {
  const vs = await launch({ vsix, workspaceFrom: WORKSPACE, name: 'mcp-trusted', keep, settings: { 'workbench.editor.enablePreview': false } });
  track(vs);
  const { page, editor } = vs;
  await vs.openFile('plans/mcp.sop');
  await editor.locator('.codelens-decoration', { hasText: 'Run plan' }).first().waitFor({ state: 'visible', timeout: 60000 });
  // The language server starts the server in the background; completion answers once it listed its tools.
  await waitFor('the language server to start server-everything', () => started(vs).length > 0, 60000);

  // Completion: the everything.* tools, with the echo tool's description in the details.
  await editor.locator('.view-line', { hasText: '@lastAnswer' }).first().click();
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await page.keyboard.type('@x everything.', { delay: 15 });
  await closeSuggest(page);
  const rows = await waitFor('the everything.* tools in completion', async () => {
    const items = await vs.completions('everything.', 15000).catch(() => []);
    await closeSuggest(page);
    return items.filter((i) => i.startsWith('everything.')).length >= 5 && items.some((i) => i.startsWith('everything.echo')) ? items : null;
  }, 60000, 500);
  log('mcp completion:', JSON.stringify(rows.slice(0, 8)));
  await page.keyboard.type('echo', { delay: 15 });
  await vs.completions('everything.echo');
  // Ctrl+Space again toggles the focused item's details: the tool's description and parameters.
  const details = page.locator('.suggest-details', { hasText: 'Echoes back the input string' }).first();
  await waitFor('the echo tool\'s details in the suggest widget', async () => {
    if (await details.isVisible().catch(() => false)) return true;
    if ((await page.locator('.editor-widget.suggest-widget.visible').count()) === 0) await vs.completions('everything.echo');
    await page.keyboard.press('Control+Space');
    await details.waitFor({ state: 'visible', timeout: 3000 }).catch(() => {});
    return details.isVisible().catch(() => false);
  }, 30000, 100);
  const detailText = (await details.innerText()).replace(/\s+/g, ' ').trim();
  log('mcp completion details:', JSON.stringify(detailText));
  if (!detailText.includes('message')) throw new Error(`the details lack the parameter "message": ${JSON.stringify(detailText)}`);
  await vs.shot('mcp-completion');
  await closeSuggest(page);
  check('completion lists the everything.* tools of the configured MCP server, the echo tool with its description and parameter');
  // Undo the typed line: the plan runs as it is on disk.
  for (let i = 0; i < 30; i++) await page.keyboard.press('Control+Z');
  await waitFor('the typed line to be undone', async () => (await editor.locator('.view-line', { hasText: '@x everything' }).count()) === 0, 15000);

  // Run Plan: the progress notification follows the long-running tool; the echo result shows inline.
  await vs.runCommand('LightSOPLang: Run Plan');
  const progress = await waitFor('the progress of the long-running tool in the notification', async () => {
    const texts = (await page.locator('.notifications-toasts .notification-toast').allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
    return texts.find((t) => /running mcp\.sop.*@slow everything\.trigger-long-running-operat.* \d\/4 \(\d+%\)/.test(t)) ?? (texts.length > 0 ? new Error(`toasts: ${JSON.stringify(texts)}`) : null);
  }, 60000, 100);
  log('mcp progress:', JSON.stringify(progress));
  await vs.shot('mcp-progress');
  check(`Run Plan shows the MCP tool's progress in its notification (${progress.match(/\d\/4 \(\d+%\)/)[0]})`);
  await vs.notification('mcp.sop: 3 variables: 3 succeeded', 60000);
  const echoed = await waitFor('the echo result inline', async () => {
    const t = await inlineResultOn(editor, '@said everything.echo');
    return t.includes('Echo: hello from VS Code') ? t : null;
  });
  log('mcp inline result:', JSON.stringify(echoed));
  await vs.shot('mcp-run-result');
  check('Run Plan runs the plan with the MCP tools: @said shows "Echo: hello from VS Code" inline');
  await vs.close();
}

async function untrusted({ vsix, keep, check, track }) {
  const vs = await launch({ vsix, workspaceFrom: WORKSPACE, name: 'mcp-untrusted', trust: false, keep, settings: { 'workbench.editor.enablePreview': false } });
  track(vs);
  await vs.openFile('plans/mcp.sop');
  const toast = await vs.notification('MCP servers of lightsop.config.json are not started: this workspace is not trusted', 60000);
  log('mcp untrusted toast:', JSON.stringify(toast));
  const rows = await vs.problems('was not started: it would run code, and this workspace is not trusted', 60000);
  log('mcp untrusted problems:', JSON.stringify(rows.filter((r) => r.includes('MCP'))));
  await vs.shot('mcp-untrusted');
  // Run Plan too: the extension host starts no server either.
  await vs.runCommand('LightSOPLang: Run Plan');
  await vs.notification('mcp.sop', 60000);
  await vs.shot('mcp-untrusted-run');
  // No pause to wait for a start: the server's decision is on screen (the toast and the warning
  // above), Run Plan's is made before its notification, and a start writes the marker first thing.
  if (started(vs).length > 0) throw new Error(`a server was started in the untrusted workspace: ${started(vs).join(', ')}`);
  check('in an untrusted workspace no MCP server starts (no mcp-started.txt, even after Run Plan) and a toast and a warning on lightsop.config.json say why');
  await vs.close();
}

/** Both workspaces; `check(name)` counts a passed step, `track(vs)` names the launch for failure logs. */
export async function mcpE2e(o) {
  await trusted(o);
  await untrusted(o);
}

// Alone: node test/e2e/mcp.e2e.mjs --vsix FILE [--keep]
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const vsix = argv[argv.indexOf('--vsix') + 1];
  let passed = 0;
  let current = null;
  const watchdog = setTimeout(() => void closeAll().then(() => process.exit(1)), Number(process.env.VSCODE_HARNESS_TIMEOUT || 240) * 1000);
  mcpE2e({ vsix, keep: argv.includes('--keep'), check: (name) => log(`ok ${++passed} - ${name}`), track: (vs) => (current = vs) }).then(
    async () => {
      clearTimeout(watchdog);
      await closeAll();
      console.log(`${passed} passed, 0 failed`);
      process.exit(0);
    },
    async (e) => {
      clearTimeout(watchdog);
      console.error(`FAIL: ${(e && e.stack) || e}`);
      if (current) {
        await current.shot('failure').catch(() => {});
        console.error(current.extHostLog().split('\n').slice(-40).join('\n'));
      }
      await closeAll();
      console.log(`${passed} passed, 1 failed`);
      process.exit(1);
    },
  );
}
