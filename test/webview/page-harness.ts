/**
 * What the Chromium page tests share: bundling a page script the way scripts/build.mjs does,
 * launching Debian's Chromium with the flags these machines need, and opening a page as the
 * extension serves it (its exact HTML and nonce CSP, a stub `acquireVsCodeApi` that records what
 * the page posts). Each test file keeps only what is its own page's.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import type { WebviewPageOrigin } from '../../extension/src/webview-page';

const root = path.resolve(__dirname, '../..');

/** Where the test pages are served from; the page's `cspSource`. */
const ORIGIN = 'https://webview.test';
const NONCE = 'TestNonce0123456789abcdefABCDEF0';

declare global {
  interface Window {
    /** What the page posted through `acquireVsCodeApi().postMessage`, in order. */
    __posted: { type: string }[];
    /** The Content Security Policy violations the page reported, as "directive blocked-URI". */
    __violations: string[];
    /** Set by an inline script, if one ever runs. */
    __inline?: number;
  }
}

function findChromium(): string {
  if (process.env.CHROMIUM) return process.env.CHROMIUM;
  for (const p of ['/usr/bin/chromium', '/usr/bin/chromium-browser']) if (existsSync(p)) return p;
  try {
    return execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('Chromium not found: run `bash test/e2e/setup.sh` (installs Debian\'s chromium) or set CHROMIUM');
  }
}

/** Bundles a page script (relative to the repository root) as a browser IIFE. */
export async function bundlePage(entry: string): Promise<string> {
  const out = await build({
    entryPoints: [path.join(root, entry)],
    bundle: true, write: false, format: 'iife', platform: 'browser', target: 'es2022', logLevel: 'silent',
    mainFields: ['browser', 'module', 'main'],
  });
  return out.outputFiles[0]!.text;
}

/** Debian's Chromium, headless, without the background networking this machine refuses. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: findChromium(),
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

export interface WebviewPageOptions {
  /** The page script, relative to the repository root (extension/src/NAME/webview.ts). */
  readonly entry: string;
  /** The page's HTML function, as the extension's panel calls it (graphHtml, timelineHtml, chatHtml). */
  readonly html: (origin: WebviewPageOrigin) => string;
  readonly viewport: { readonly width: number; readonly height: number };
  /** Playwright's default timeout for the page's actions and waits, when not its own. */
  readonly timeout?: number;
}

export interface WebviewPages {
  /**
   * A fresh page in a new browser context: served at ORIGIN with the page's exact HTML (the nonce
   * CSP) and its bundled script; resolves once the page has posted `ready`.
   */
  open(): Promise<Page>;
}

/**
 * Registers the file's hooks (the page script bundled and Chromium launched once before its tests,
 * closed after them) and returns what opens a page per test.
 */
export function useWebviewPages(options: WebviewPageOptions): WebviewPages {
  let browser: Browser | undefined;
  let script = '';
  const scriptPath = `/dist/${path.basename(path.dirname(options.entry))}-webview.js`;
  beforeAll(async () => {
    script = await bundlePage(options.entry);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    async open() {
      if (!browser) throw new Error('useWebviewPages: Chromium is not launched (open() runs in a test or beforeEach)');
      const page = await (await browser.newContext({ viewport: { ...options.viewport } })).newPage();
      if (options.timeout !== undefined) page.setDefaultTimeout(options.timeout);
      await page.addInitScript(() => {
        window.__posted = [];
        window.__violations = [];
        document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
        let saved: unknown;
        (window as unknown as { acquireVsCodeApi: () => unknown }).acquireVsCodeApi = () => ({
          postMessage: (m: { type: string }) => window.__posted.push(m),
          getState: () => saved,
          setState: (s: unknown) => void (saved = s),
        });
      });
      await page.route(`${ORIGIN}/**`, (route) => {
        const url = new URL(route.request().url());
        if (url.pathname === '/index.html') {
          return route.fulfill({ contentType: 'text/html', body: options.html({ cspSource: ORIGIN, scriptUri: `${ORIGIN}${scriptPath}`, nonce: NONCE }) });
        }
        if (url.pathname === scriptPath) return route.fulfill({ contentType: 'text/javascript', body: script });
        return route.fulfill({ status: 404, body: '' });
      });
      await page.goto(`${ORIGIN}/index.html`);
      await page.waitForFunction(() => window.__posted.some((m) => m.type === 'ready'), undefined, { timeout: 10000 });
      return page;
    },
  };
}

/**
 * What every page must show first: its script loaded under the nonce CSP and said `ready` (and
 * nothing else), and an inline script added afterwards is reported as a `script-src` violation and
 * never runs.
 */
export async function expectOnlyTheNoncedScriptRuns(page: Page): Promise<void> {
  expect(await page.evaluate(() => window.__posted)).toEqual([{ type: 'ready' }]);
  await page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__inline = 1';
    document.body.appendChild(s);
  });
  await page.waitForFunction(() => window.__violations.length > 0, undefined, { timeout: 5000 });
  expect(await page.evaluate(() => window.__inline)).toBeUndefined();
  expect(await page.evaluate(() => window.__violations)).toEqual([expect.stringMatching(/^script-src/)]);
}
