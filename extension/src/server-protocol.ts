/**
 * The custom messages between the extension and the language server. The server declares them
 * in packages/language-server/src/shared-protocol.ts; that module imports the server library
 * (vscode-languageserver, which starts an exit timer when loaded), so the extension takes only
 * its types and repeats the method names here. test/webview/messages.test.ts checks that both
 * agree.
 */
export type {
  LightsopInitializationOptions, PlanGraphParams, PlanGraphResult, PlanOutlineDeclaration, PlanOutlineError, PlanOutlineParams,
  PlanOutlineResult, SetSkillsParams, SetTrustedParams,
} from '../../packages/language-server/src/shared-protocol';

/** `lightsop/setTrusted`: the workspace became trusted. */
export const SET_TRUSTED_METHOD = 'lightsop/setTrusted';

/** `lightsop/setSkills`: the `lightsop.skills` setting changed (null: use lightsop.config.json). */
export const SET_SKILLS_METHOD = 'lightsop/setSkills';

/** `lightsop/planGraph`: the dependency graph of an open plan, for the Plan Graph panel. */
export const PLAN_GRAPH_METHOD = 'lightsop/planGraph';

/** `lightsop/planOutline`: an open plan's declarations, `#!english` header and errors. */
export const PLAN_OUTLINE_METHOD = 'lightsop/planOutline';
