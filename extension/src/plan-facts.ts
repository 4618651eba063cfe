/**
 * Asks the language server what the extension needs to know about an open plan, instead of
 * parsing it again: its outline (`lightsop/planOutline`: declarations, `#!english` header,
 * errors) and its graph (`lightsop/planGraph`), both in editor positions and for the version the
 * editor holds. Outlines are cached per document version.
 *
 * The server knows the document only once the client has sent it, and a request can overtake an
 * edit that VS Code reported to this extension before the client: an answer for another version
 * is asked again (the client has sent the edit by then). Without a server (it failed to start,
 * or the document is not one the client syncs) the answer is null, and callers show less: no
 * CodeLens or inline results, while Run Plan and Debug Plan rely on the runtime's own check.
 */
import type * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { PLAN_GRAPH_METHOD, PLAN_OUTLINE_METHOD, type PlanGraphResult, type PlanOutlineResult } from './server-protocol';

/** How often a request is repeated when the server answers for another version than the editor's. */
const ATTEMPTS = 3;

export class PlanFacts {
  private setReady!: (client: LanguageClient | null) => void;
  private readonly client = new Promise<LanguageClient | null>((resolve) => {
    this.setReady = resolve;
  });
  private readonly outlines = new Map<string, { readonly version: number; readonly outline: Promise<PlanOutlineResult | null> }>();

  /** The started client, or null when the server did not start. Requests made before wait for it. */
  started(client: LanguageClient | null): void {
    this.setReady(client);
  }

  /** Whether the language server runs (waits until it has started or failed to). */
  async available(): Promise<boolean> {
    return (await this.client) !== null;
  }

  /**
   * The outline of `doc`'s current version, or null when the server cannot say. `fresh` asks
   * again even for a version already asked about: its errors also depend on the skills, which
   * may have changed since (Run Plan asks fresh).
   */
  outline(doc: vscode.TextDocument, fresh = false): Promise<PlanOutlineResult | null> {
    const key = doc.uri.toString();
    const hit = this.outlines.get(key);
    if (hit && hit.version === doc.version && !fresh) return hit.outline;
    const outline = this.ask<PlanOutlineResult>(doc, PLAN_OUTLINE_METHOD);
    this.outlines.set(key, { version: doc.version, outline });
    // A failed or stale answer is not kept: the next caller asks again.
    void outline.then((o) => {
      if (!o && this.outlines.get(key)?.outline === outline) this.outlines.delete(key);
    });
    return outline;
  }

  /** The dependency graph of `doc`'s current version, or null when the server cannot say. */
  graph(doc: vscode.TextDocument): Promise<PlanGraphResult | null> {
    return this.ask<PlanGraphResult>(doc, PLAN_GRAPH_METHOD);
  }

  forget(uri: vscode.Uri): void {
    this.outlines.delete(uri.toString());
  }

  private async ask<R extends { readonly version: number }>(doc: vscode.TextDocument, method: string): Promise<R | null> {
    const client = await this.client;
    if (!client) return null;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const version = doc.version;
      let result: R | null;
      try {
        result = await client.sendRequest<R | null>(method, { textDocument: { uri: doc.uri.toString() } });
      } catch {
        // The client stopped, or the server failed the request: nothing to show.
        return null;
      }
      // An edit arrived meanwhile: whoever shows this will ask again for the new version.
      if (doc.isClosed || doc.version !== version) return null;
      if (result && result.version === version) return result;
    }
    return null;
  }
}
