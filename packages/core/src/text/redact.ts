/**
 * Redaction of secrets from text that is about to be shown or logged: the configured API key
 * values, the credentials part of any URL (`scheme://user:password@host`) and bearer tokens.
 * This is the one redaction function of the toolchain (pure, so it lives in core): the
 * OpenAI-compatible client applies it to its errors and logs, the CLI at its output edge, and the
 * distributed workers and coordinator to everything they log.
 */

/** Keys shorter than this are not looked for: replacing every "abc" in a text would hide more than it protects. */
const MIN_SECRET_LENGTH = 4;

/** `scheme://` followed by a userinfo part up to the `@` (no slash, space or quote in between). */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>`]+@/gi;
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/g;

/** The text with each secret value, URL credentials and bearer tokens replaced by `***`. */
export function redactSecrets(text: string, secrets: Iterable<string | undefined> = []): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret || secret.length < MIN_SECRET_LENGTH) continue;
    if (out.includes(secret)) out = out.split(secret).join('***');
    // The key may also appear percent-encoded, e.g. inside a URL of an error message.
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret && out.includes(encoded)) out = out.split(encoded).join('***');
  }
  // Each pattern needs its literal ("://", "Bearer"): text without it is not scanned by the regex
  // (lint writes megabytes of diagnostics through here).
  if (out.includes('://')) out = out.replace(URL_CREDENTIALS, '$1***@');
  return out.includes('Bearer') ? out.replace(BEARER, '$1***') : out;
}

/** True when a URL carries a user name or password (`http://user:key@host`). */
export function hasUrlCredentials(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== '' || parsed.password !== '';
  } catch {
    return false;
  }
}
