/**
 * What every webview page of the extension shares: the Content Security Policy (nothing but the
 * extension's own resources, styles and scripts only with the page's nonce), the nonce itself, and
 * attribute escaping. The graph and chat pages build their HTML on these.
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
