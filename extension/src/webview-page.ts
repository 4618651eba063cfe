/**
 * What every webview page of the extension shares: the Content Security Policy (nothing but the
 * extension's own resources, styles and scripts only with the page's nonce), the nonce itself, and
 * attribute escaping, and the document around each page's own style and body.
 */

/** Escapes a value for a double-quoted HTML attribute. */
export const escapeAttr = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** A nonce: 32 characters from [A-Za-z0-9], from a cryptographic source. */
export function makeNonce(random: (bytes: number) => Uint8Array): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(random(32), (b) => chars[b % chars.length]).join('');
}

/** The policy of a page served from `cspSource` whose style and script carry `nonce`. */
export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource} data:`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
}

/** Where a page is served from: what each page's HTML function takes. */
export interface WebviewPageOrigin {
  /** `webview.cspSource`: the origin that serves the extension's local resources. */
  readonly cspSource: string;
  /** `asWebviewUri` of the page's one script (dist/NAME-webview.js). */
  readonly scriptUri: string;
  /** A fresh random nonce per page (`makeNonce`). */
  readonly nonce: string;
}

/** What a page of the extension is made of; `webviewPage` wraps it in the shared document. */
export interface WebviewPageParts extends WebviewPageOrigin {
  readonly title: string;
  /** The page's CSS, put in the one style block that carries the nonce. */
  readonly style: string;
  /** The page's markup, before its script. */
  readonly body: string;
}

/**
 * A whole page: the strict Content Security Policy, the nonce on the one style block and the one
 * script, and nothing else that could run (no inline handlers, no eval).
 */
export function webviewPage(p: WebviewPageParts): string {
  const csp = contentSecurityPolicy(p.cspSource, p.nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${escapeAttr(p.title)}</title>
<style nonce="${p.nonce}">
${p.style}</style>
</head>
<body>
${p.body}<script nonce="${p.nonce}" src="${escapeAttr(p.scriptUri)}"></script>
</body>
</html>
`;
}
