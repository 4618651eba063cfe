/**
 * The custom messages the extension sends to the language server. The server declares them in
 * packages/language-server/src/shared-protocol.ts; that module imports the server library
 * (vscode-languageserver, which starts an exit timer when loaded), so the extension takes only
 * its types and repeats the method name here. test/webview/messages.test.ts checks that both
 * agree.
 */
export type { LightsopInitializationOptions, SetSkillsParams, SetTrustedParams } from '../../packages/language-server/src/shared-protocol';

/** `lightsop/setTrusted`: the workspace became trusted. */
export const SET_TRUSTED_METHOD = 'lightsop/setTrusted';

/** `lightsop/setSkills`: the `lightsop.skills` setting changed (null: use lightsop.config.json). */
export const SET_SKILLS_METHOD = 'lightsop/setSkills';
