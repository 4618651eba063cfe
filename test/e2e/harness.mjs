// Harness: start a REAL VS Code (code-server = VS Code server + workbench) with a
// local extension installed, and drive it headlessly with playwright-core through
// Debian's chromium. Copied from ../shared/vscode-harness (where it is proven) and adapted for
// this project: `trust: false` starts VS Code with workspace trust on and the folder untrusted,
// `completions()` reads the suggest widget, and `waitFor` and `closeSuggest` serve every e2e
// file. The project's test is extension.e2e.mjs.
//
//   import { launch } from './harness.mjs';
//   const vs = await launch({ extDir: 'path/to/extension', files: { 'a.demo': 'text' } });
//   try { await vs.openFile('a.demo'); await vs.runCommand('Demo: Hello'); ... }
//   finally { await vs.close(); }
//
// Environment (all optional):
//   VSCODE_HARNESS_CACHE   install dir made by setup.sh   (default /tmp/vscode-harness-cache)
//   VSCODE_HARNESS_SHOTS   where screenshots go           (default /tmp/vscode-harness-shots)
//   VSCODE_HARNESS_RUN     scratch dir for this run, kept (default: fresh mkdtemp under os.tmpdir(), removed)
//   CHROMIUM               browser binary                 (default: `chromium` on PATH, from Debian's package)
//   HEADED=1               show the browser (needs a display, e.g. under xvfb-run; untested)

import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const CACHE = process.env.VSCODE_HARNESS_CACHE || '/tmp/vscode-harness-cache';
export const SHOTS = process.env.VSCODE_HARNESS_SHOTS || '/tmp/vscode-harness-shots';
// Debian's chromium package puts `chromium` on PATH; CHROMIUM overrides
function onPath(names) {
  for (const n of names) {
    for (const d of (process.env.PATH || '').split(path.delimiter)) {
      const p = path.join(d, n);
      try { fs.accessSync(p, fs.constants.X_OK); return p; } catch {}
    }
  }
  return names[0];
}
export const CHROMIUM = process.env.CHROMIUM || onPath(['chromium', 'chromium-browser']);
const CODE_SERVER = path.join(CACHE, 'code-server', 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const VSCE = path.join(CACHE, 'tools', 'node_modules', '@vscode', 'vsce', 'vsce');

const t0 = Date.now();
export const log = (...a) => console.log(`[e2e +${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `fn` every `every` ms until it returns a truthy value that is not an Error, or `timeout` ms
 * pass; returns that value. A thrown error or a returned Error is kept as the last reason, which
 * the timeout's message names with `what`.
 */
export async function waitFor(what, fn, timeout = 30000, every = 200) {
  const until = Date.now() + timeout;
  let last;
  while (Date.now() < until) {
    try {
      last = await fn();
      if (last && !(last instanceof Error)) return last;
    } catch (e) {
      last = e;
    }
    await sleep(every);
  }
  throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

/** Closes the suggest widget if it is open (typing opens it asynchronously) and waits until it is gone. */
export async function closeSuggest(page) {
  const widget = page.locator('.editor-widget.suggest-widget.visible');
  for (let i = 0; i < 5 && (await widget.count()) > 0; i++) {
    await page.keyboard.press('Escape');
    await widget.first().waitFor({ state: 'hidden', timeout: 2000 }).catch(() => {});
  }
}

// Every launch() registers its close() here as soon as it starts anything, so
// closeAll() (e.g. from a watchdog or a signal handler) also stops a launch that
// is still in progress.
const openHarnesses = new Set();
export async function closeAll() {
  await Promise.all([...openHarnesses].map((c) => c()));
}

// signal a process we started: its whole group when it leads one, else just the pid
function signal(p, sig) {
  if (p.group) { try { process.kill(-p.pid, sig); return; } catch {} }
  try { process.kill(p.pid, sig); } catch {}
}

function alive(pid) {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

function run(cmd, args, opts = {}, timeoutMs = 60000) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  if (r.status !== 0) {
    throw new Error(`${path.basename(cmd)} ${args.join(' ')} failed (status ${r.status}, signal ${r.signal})\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitHttp(url, timeoutMs, isDead) {
  const until = Date.now() + timeoutMs;
  let last;
  while (Date.now() < until) {
    if (isDead()) throw new Error('code-server exited before it answered');
    try {
      const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(2000) });
      if (res.status < 500) return res.status;
      last = `HTTP ${res.status}`;
    } catch (e) { last = e.message; }
    await sleep(250);
  }
  throw new Error(`server not ready at ${url} after ${timeoutMs} ms (${last})`);
}

export const DEFAULT_SETTINGS = {
  'telemetry.telemetryLevel': 'off',
  'workbench.startupEditor': 'none',
  'workbench.enableExperiments': false,
  'workbench.tips.enabled': false,
  'security.workspace.trust.enabled': false,
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'chat.commandCenter.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  // The web workbench defaults to 'afterDelay' (desktop VS Code to 'off'): an edit would be
  // written to disk a second after the last key, whenever the machine gets round to it, and a
  // test that types and then reverts would race that save.
  'files.autoSave': 'off',
};

/**
 * Start code-server with the extension installed, open the workspace in chromium.
 * @param {object} o
 * @param {string} [o.extDir]   extension folder (packaged with vsce unless install === 'copy')
 * @param {string} [o.vsix]     a ready .vsix instead of extDir
 * @param {'vsix'|'copy'} [o.install='vsix']
 * @param {string[]} [o.vsceArgs] vsce package flags (default: --no-dependencies --skip-license --allow-missing-repository;
 *                              drop --no-dependencies when the extension ships an unbundled node_modules)
 * @param {string} [o.workspaceFrom] fixture folder copied into the (fresh) workspace
 * @param {Record<string,string>} [o.files]  workspace files to create (relative path -> content)
 * @param {object} [o.settings] extra user settings
 * @param {boolean} [o.keep]    keep the run dir
 * @param {string} [o.name]     prefix for this launch's screenshot files (when a process launches several)
 * @param {boolean} [o.trust=true] false: workspace trust is enabled and the folder is not trusted (Restricted Mode)
 */
export async function launch(o = {}) {
  for (const [what, p] of [['code-server', CODE_SERVER], ['chromium', CHROMIUM]]) {
    if (!fs.existsSync(p)) throw new Error(`missing ${what} at ${p}: run setup.sh first (VSCODE_HARNESS_CACHE=${CACHE})`);
  }
  const { chromium } = createRequire(path.join(CACHE, 'tools', 'package.json'))('playwright-core');

  const ownRun = !process.env.VSCODE_HARNESS_RUN;
  const RUN = process.env.VSCODE_HARNESS_RUN || fs.mkdtempSync(path.join(os.tmpdir(), 'vscode-harness-run-'));
  fs.mkdirSync(SHOTS, { recursive: true });
  const dirs = {
    ext: path.join(RUN, 'extensions'),
    ud: path.join(RUN, 'user-data'),
    ws: path.join(RUN, 'workspace'),
    xdg: path.join(RUN, 'xdg'),
  };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  fs.mkdirSync(path.join(dirs.ud, 'User'), { recursive: true });
  const trustSettings = o.trust === false
    ? { 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'never', 'security.workspace.trust.banner': 'always', 'security.workspace.trust.untrustedFiles': 'open' }
    : {};
  fs.writeFileSync(path.join(dirs.ud, 'User', 'settings.json'),
    JSON.stringify({ ...DEFAULT_SETTINGS, ...trustSettings, ...(o.settings || {}) }, null, 2));
  if (o.workspaceFrom) fs.cpSync(o.workspaceFrom, dirs.ws, { recursive: true });
  for (const [rel, content] of Object.entries(o.files || {})) {
    fs.mkdirSync(path.dirname(path.join(dirs.ws, rel)), { recursive: true });
    fs.writeFileSync(path.join(dirs.ws, rel), content);
  }
  // code-server's own config: keep it out of $HOME/.config
  const config = path.join(RUN, 'config.yaml');
  fs.writeFileSync(config, 'auth: none\ncert: false\n');
  const env = {
    ...process.env,
    XDG_CONFIG_HOME: dirs.xdg,
    XDG_DATA_HOME: dirs.xdg,
    XDG_CACHE_HOME: dirs.xdg,
  };
  for (const k of ['PASSWORD', 'HASHED_PASSWORD', 'PORT', 'VSCODE_PROXY_URI']) delete env[k];
  const common = ['--config', config, '--user-data-dir', dirs.ud, '--extensions-dir', dirs.ext];

  // everything we start, so that close() kills exactly those pids
  const started = [];
  let context = null; // the playwright Browser once connected
  let browserServer = null;
  let closing = null;
  const close = async () => {
    if (closing) return closing;
    closing = (async () => {
      if (context) await Promise.race([context.close().catch(() => {}), sleep(5000)]);
      if (browserServer) await Promise.race([browserServer.close().catch(() => {}), sleep(5000)]);
      for (const p of started) signal(p, 'SIGTERM');
      const until = Date.now() + 5000;
      while (started.some((p) => alive(p.pid)) && Date.now() < until) await sleep(100);
      for (const p of started) if (alive(p.pid)) signal(p, 'SIGKILL');
      if (ownRun && !o.keep) fs.rmSync(RUN, { recursive: true, force: true });
      openHarnesses.delete(close);
    })();
    return closing;
  };
  openHarnesses.add(close);

  try {
    // 1. install the extension into a fresh extensions dir
    const tInstall = Date.now();
    if (o.install === 'copy') {
      const pkg = JSON.parse(fs.readFileSync(path.join(o.extDir, 'package.json'), 'utf8'));
      const dest = path.join(dirs.ext, `${pkg.publisher}.${pkg.name}-${pkg.version}`.toLowerCase());
      fs.cpSync(o.extDir, dest, { recursive: true, filter: (s) => !/[/\\](\.git|\.vscode-test)([/\\]|$)/.test(s) });
      log('copied extension folder to', dest);
    } else {
      let vsix = o.vsix && path.resolve(o.vsix);
      if (!vsix) {
        vsix = path.join(RUN, 'extension.vsix');
        // note: vsce runs the extension's `vscode:prepublish` script (e.g. tsc) if it has one
        const flags = o.vsceArgs || ['--no-dependencies', '--skip-license', '--allow-missing-repository'];
        run(process.execPath, [VSCE, 'package', ...flags, '--out', vsix], { cwd: o.extDir }, 300000);
      }
      const out = run(process.execPath, [CODE_SERVER, ...common, '--install-extension', vsix, '--force'], { env }, 120000);
      log(`installed ${path.basename(vsix)} in ${((Date.now() - tInstall) / 1000).toFixed(1)}s:`, out.trim().split('\n').pop());
    }

    // 2. the real VS Code server, on a free loopback port, no auth, no telemetry
    const port = await freePort();
    const serverLog = path.join(RUN, 'code-server.log');
    const logFd = fs.openSync(serverLog, 'w');
    const server = spawn(process.execPath, [CODE_SERVER, ...common,
      '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none',
      '--disable-telemetry', '--disable-update-check', ...(o.trust === false ? [] : ['--disable-workspace-trust']),
      '--disable-getting-started-override', '--ignore-last-opened', dirs.ws],
    { env, detached: true, stdio: ['ignore', logFd, logFd] }); // detached: own process group, killed as -pid
    fs.closeSync(logFd);
    started.push({ name: 'code-server', pid: server.pid, group: true });
    if (closing) { await close(); throw new Error('closed while launching'); }
    let serverExit = null;
    server.on('exit', (code, sig) => { serverExit = { code, sig }; });
    log(`code-server pid ${server.pid} on 127.0.0.1:${port} (log ${serverLog})`);
    const tServer = Date.now();
    await waitHttp(`http://127.0.0.1:${port}/healthz`, 60000, () => serverExit !== null);
    log(`server answered after ${((Date.now() - tServer) / 1000).toFixed(1)}s`);

    // 3. chromium: playwright gives it a new empty profile (--user-data-dir in a temp dir,
    //    removed on close); no background networking
    // launchServer (not launch) because it exposes the browser's process, so close() can kill its pid
    browserServer = await chromium.launchServer({
      executablePath: CHROMIUM,
      env, // XDG_* point into the run dir, so crashpad's "Crash Reports" stays out of $HOME/.config
      headless: process.env.HEADED !== '1',
      timeout: 60000,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--disable-dev-shm-usage'],
    });
    const bpid = browserServer.process()?.pid;
    // playwright starts chromium detached, as the leader of its own process group
    if (bpid) started.push({ name: 'chromium', pid: bpid, group: true });
    if (closing) { await close(); throw new Error('closed while launching'); }
    log(`chromium pid ${bpid}`);
    const browser = await chromium.connect(browserServer.wsEndpoint(), { timeout: 30000 });
    context = browser;
    const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
    page.setDefaultTimeout(30000);
    const consoleErrors = [];
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    const badResponses = [];
    page.on('response', (r) => { if (r.status() >= 400) badResponses.push(`${r.status()} ${r.url()}`); });
    page.on('requestfailed', (r) => badResponses.push(`failed ${r.url()} (${r.failure()?.errorText})`));

    const tLoad = Date.now();
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dirs.ws)}`, { waitUntil: 'domcontentloaded', timeout: 60000 });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90000 });
    // the explorer lists the workspace once the workbench is connected to the server
    await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ state: 'visible', timeout: 90000 });
    log(`workbench ready after ${((Date.now() - tLoad) / 1000).toFixed(1)}s`);

    return makeApi({ page, browser, close, dirs, port, serverLog, consoleErrors, badResponses, run: RUN, name: o.name });
  } catch (e) {
    await close();
    throw e;
  }
}

function makeApi(h) {
  const { page } = h;
  const quickInput = page.locator('.quick-input-widget input');
  let shotN = 0;
  const api = {
    ...h,
    editor: page.locator('.editor-instance .monaco-editor').first(),

    /** screenshot into SHOTS, numbered in order */
    async shot(name) {
      const file = path.join(SHOTS, `${h.name ? `${h.name}-` : ''}${String(++shotN).padStart(2, '0')}-${name}.png`);
      await page.screenshot({ path: file, timeout: 15000 }).catch((e) => log('screenshot failed:', e.message));
      log('screenshot', file);
      return file;
    },

    /** Quick Open (Ctrl+P) a workspace file, wait until its text is on screen */
    async openFile(rel, timeout = 30000) {
      await page.keyboard.press('Control+P');
      await quickInput.waitFor({ state: 'visible', timeout });
      await quickInput.fill(rel);
      // Click the matching row: Enter could pick a recently opened file still listed first.
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: path.basename(rel) }).first();
      await row.waitFor({ state: 'visible', timeout });
      await row.click();
      await page.locator('.tabs-container .tab.active', { hasText: path.basename(rel) }).first().waitFor({ state: 'visible', timeout });
      await api.editor.locator('.view-lines').waitFor({ state: 'visible', timeout });
    },

    /** run a command by its title through the command palette (F1) */
    async runCommand(title, timeout = 30000) {
      await page.keyboard.press('F1');
      await quickInput.waitFor({ state: 'visible', timeout });
      await quickInput.fill(`>${title}`);
      await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ state: 'visible', timeout });
      // Enter runs the focused row: wait until the list has been filtered down to the command.
      await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: title }).first().waitFor({ state: 'visible', timeout });
      await page.keyboard.press('Enter');
      // The palette is done when its widget hides, or when it shows something else: a command
      // may open its own input box in the same widget at once (Set LLM API Key does), so waiting
      // for the widget to hide would race that box.
      await page.waitForFunction((typed) => {
        const widget = document.querySelector('.quick-input-widget');
        const input = widget?.querySelector('input');
        const shown = widget instanceof HTMLElement && getComputedStyle(widget).display !== 'none' && widget.getBoundingClientRect().height > 0;
        return !shown || !input || input.value !== typed;
      }, `>${title}`, { timeout });
    },

    /** wait for a notification toast containing text; returns its message once it has settled */
    async notification(text, timeout = 30000) {
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
      await toast.waitFor({ state: 'visible', timeout });
      // let the slide-in animation finish so a screenshot shows it
      let last = null;
      for (let i = 0; i < 20; i++) {
        const box = await toast.boundingBox();
        if (box && last && box.y === last.y) break;
        last = box;
        await sleep(100);
      }
      return (await toast.locator('.notification-list-item-message').first().innerText()).replace(/\s+/g, ' ').trim();
    },

    /** open the Problems panel and wait for a row containing text; returns all row texts */
    async problems(text, timeout = 30000) {
      const panel = page.locator('.markers-panel');
      if (!(await panel.isVisible().catch(() => false))) await page.keyboard.press('Control+Shift+M');
      await panel.waitFor({ state: 'visible', timeout });
      if (text) await panel.locator('.monaco-list-row', { hasText: text }).first().waitFor({ state: 'visible', timeout });
      return (await panel.locator('.monaco-list-row').allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim());
    },

    /** hover over the first occurrence of `word` on the editor line containing `lineText`; returns the hover text */
    async hover(lineText, word, expect, timeout = 30000) {
      const line = api.editor.locator('.view-line', { hasText: lineText }).first();
      const hover = page.locator('.monaco-hover', expect ? { hasText: expect } : {}).first();
      // exact screen rectangle of the word, from a DOM Range over the line's text nodes
      const r = await line.evaluate((el, w) => {
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const i = n.textContent.indexOf(w);
          if (i < 0) continue;
          const range = document.createRange();
          range.setStart(n, i);
          range.setEnd(n, i + w.length);
          const b = range.getBoundingClientRect();
          return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
        }
        return null;
      }, word);
      if (!r) throw new Error(`'${word}' not on screen in a line with '${lineText}'`);
      await page.mouse.move(r.x, r.y);
      try {
        await hover.waitFor({ state: 'visible', timeout: 8000 });
      } catch {
        // keyboard fallback: put the cursor on the word and run "Show or Focus Hover" (Ctrl+K Ctrl+I)
        await page.mouse.click(r.x, r.y);
        await page.keyboard.press('Control+K');
        await page.keyboard.press('Control+I');
        await hover.waitFor({ state: 'visible', timeout });
      }
      return (await hover.innerText()).replace(/\s+/g, ' ').trim();
    },

    /** trigger suggestions (Ctrl+Space) at the cursor; waits for a row containing `text`; returns the rows' texts */
    async completions(text, timeout = 30000) {
      const widget = page.locator('.editor-widget.suggest-widget');
      await page.keyboard.press('Control+Space');
      await widget.waitFor({ state: 'visible', timeout });
      await widget.locator('.monaco-list-row', { hasText: text }).first().waitFor({ state: 'visible', timeout });
      return (await widget.locator('.monaco-list-row').allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim());
    },

    /** text of the extension host log(s) of this run ('' when none yet) */
    extHostLog() {
      const root = path.join(h.dirs.ud, 'logs');
      let out = '';
      const walk = (d) => {
        for (const e of fs.existsSync(d) ? fs.readdirSync(d, { withFileTypes: true }) : []) {
          const p = path.join(d, e.name);
          if (e.isDirectory()) walk(p);
          else if (e.name === 'remoteexthost.log') out += fs.readFileSync(p, 'utf8');
        }
      };
      walk(root);
      return out;
    },
  };
  return api;
}
