/**
 * @lightsop/language-server: the LightSOPLang language server. The VS Code extension and the
 * tests use `createServer` with their own connection; the custom protocol between extension and
 * server is declared in `shared-protocol.ts` and re-exported here.
 */
export { createServer, type LightsopServer } from './server';
export * from './shared-protocol';
export { SEMANTIC_TOKENS_LEGEND } from './features/semantic-tokens';
export { LANGUAGE_ID } from './documents';
