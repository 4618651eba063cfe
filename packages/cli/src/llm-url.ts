/**
 * The check of an LLM base URL, apart from `llm.ts`: the option parser of `run` and `chat` calls
 * it while the program is built, and that must not load the LLM client.
 */
import { hasUrlCredentials } from '@lightsop/core';

/** Why a base URL cannot be used (not http(s), or carries credentials), or null when it can. */
export function baseUrlProblem(url: string): string | null {
  let parsed: URL | null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) return 'expected an http(s) URL such as http://127.0.0.1:11434/v1';
  if (hasUrlCredentials(url)) return 'the URL must not contain a user name or password: give the API key in LIGHTSOP_LLM_API_KEY';
  return null;
}
