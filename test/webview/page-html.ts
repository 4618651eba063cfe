/**
 * What every page of the extension must be as it is served, checked on its HTML without a browser
 * (`npm test`): a `webviewPage` document whose policy allows nothing by default, scripts and
 * styles only with the page's nonce, and whose one script is the page's own. The Chromium page
 * tests (page-harness.ts) check that a browser enforces it.
 */
import { expect } from 'vitest';
import type { WebviewPageOrigin } from '../../extension/src/webview-page';

const ORIGIN = 'https://x.vscode-cdn.net';

/** Checks the HTML that `html` makes for the page whose script is dist/`script`. */
export function expectLockedDownPage(html: (origin: WebviewPageOrigin) => string, script: string): void {
  const page = html({ cspSource: ORIGIN, scriptUri: `${ORIGIN}/dist/${script}?"a"`, nonce: 'N0nce' });
  const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(page)?.[1] ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("script-src 'nonce-N0nce'");
  expect(csp).toContain(`style-src ${ORIGIN} 'nonce-N0nce'`);
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('unsafe-eval');
  expect(csp).not.toContain('connect-src');
  // The script's URI is escaped in its attribute.
  expect(page).toContain(`<script nonce="N0nce" src="${ORIGIN}/dist/${script}?&quot;a&quot;"></script>`);
  expect(page.match(/<script/g)).toHaveLength(1);
  expect(page).not.toMatch(/\son[a-z]+=/i);
}
