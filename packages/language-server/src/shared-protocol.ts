/**
 * Custom messages between LightSOPLang clients (the VS Code extension, or any client that wants
 * them) and the server, declared once with their method names and parameter types. Standard
 * LSP covers everything else; these only add what LSP has no word for.
 */
import { NotificationType, RequestType, type Range } from 'vscode-languageserver';

/** Initialization options the server reads (all optional). */
export interface LightsopInitializationOptions {
  /** Whether the workspace is trusted, so a skills module may be imported (it runs code). Default false. */
  readonly trusted?: boolean;
  /** Diagnostics delay after an edit, in milliseconds, or "auto" (the default; see docs/language-server.md). */
  readonly diagnosticsDelay?: number | 'auto';
  /** A skills file used instead of each folder config's `skills` (relative to the folder). */
  readonly skills?: string | null;
}

/** `lightsop/setSkills`: the client's skills override changed (null: use the configs again). */
export interface SetSkillsParams {
  readonly skills: string | null;
}
export const SetSkillsNotification = new NotificationType<SetSkillsParams>('lightsop/setSkills');

/** `lightsop/setTrusted`: the client's trust decision changed (VS Code: workspace trust granted). */
export interface SetTrustedParams {
  readonly trusted: boolean;
}
export const SetTrustedNotification = new NotificationType<SetTrustedParams>('lightsop/setTrusted');

/** `lightsop/planGraph`: the dependency graph of an open plan, or null for a document that is not one. */
export interface PlanGraphParams {
  readonly textDocument: { readonly uri: string };
}
export interface PlanGraphNode {
  readonly id: string;
  readonly name: string;
  readonly command: string | null;
  /** 1-based line of the declaration, as the CLI prints it. */
  readonly line: number;
  readonly comment: string;
  /** The `@name` token, in LSP positions. */
  readonly range: Range;
}
export interface PlanGraphResult {
  /** The document version the graph was computed from. */
  readonly version: number;
  readonly nodes: readonly PlanGraphNode[];
  /** From a dependency to the declaration that uses it, by variable name. */
  readonly edges: readonly { readonly from: string; readonly to: string }[];
}
export const PlanGraphRequest = new RequestType<PlanGraphParams, PlanGraphResult | null, void>('lightsop/planGraph');

/**
 * `lightsop/planOutline`: what a client needs to know about an open plan to place its own UI
 * (CodeLens, inline results, a variables view, "run up to here") and to refuse running it, in
 * the client's positions: its declarations, whether it is an `#!english` script, and its errors.
 * Null for a document that is not an open plan.
 */
export interface PlanOutlineParams {
  readonly textDocument: { readonly uri: string };
}
export interface PlanOutlineDeclaration {
  readonly name: string;
  readonly command: string | null;
  /** The `@name` token. */
  readonly nameRange: Range;
  /** The whole block: the header to the last line of its continuation or here-doc. */
  readonly range: Range;
}
export interface PlanOutlineError {
  readonly code: string;
  readonly message: string;
  readonly range: Range;
}
export interface PlanOutlineResult {
  /** The document version the outline was computed from. */
  readonly version: number;
  /** The `#!english` header line of an english script (whose plan a model writes), else null. */
  readonly english: Range | null;
  /** The declarations that can run: the first of each name (spec 4.3), in source order. */
  readonly declarations: readonly PlanOutlineDeclaration[];
  /** The plan's errors, as its diagnostics report them, in check order. */
  readonly errors: readonly PlanOutlineError[];
}
export const PlanOutlineRequest = new RequestType<PlanOutlineParams, PlanOutlineResult | null, void>('lightsop/planOutline');
