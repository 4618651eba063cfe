/**
 * The last known state of every variable of every plan that was run, per document. The runner
 * writes it; the inline results, the Plan Variables view and the graph panel read it and listen
 * for changes. Values are the public text (5.3), kept in full; views shorten them.
 */
import * as vscode from 'vscode';
import type { NodeStatus } from '../graph/protocol';

export interface VariableState {
  readonly name: string;
  readonly status: NodeStatus;
  readonly value: string;
}

export interface ResultsChange {
  readonly uri: string;
  /** The states that changed; all of the document's states when `reset` is true. */
  readonly states: readonly VariableState[];
  readonly reset: boolean;
}

export class ResultsStore implements vscode.Disposable {
  private readonly byDoc = new Map<string, Map<string, VariableState>>();
  private readonly emitter = new vscode.EventEmitter<ResultsChange>();
  readonly onDidChange = this.emitter.event;

  get(uri: string): ReadonlyMap<string, VariableState> | undefined {
    return this.byDoc.get(uri);
  }

  /** Updates some variables of a document. */
  update(uri: string, states: readonly VariableState[]): void {
    let map = this.byDoc.get(uri);
    if (!map) {
      map = new Map();
      this.byDoc.set(uri, map);
    }
    for (const s of states) map.set(s.name, s);
    this.emitter.fire({ uri, states, reset: false });
  }

  /** Replaces every state of a document. */
  reset(uri: string, states: readonly VariableState[]): void {
    this.byDoc.set(uri, new Map(states.map((s) => [s.name, s])));
    this.emitter.fire({ uri, states, reset: true });
  }

  clear(uri: string): void {
    if (this.byDoc.delete(uri)) this.emitter.fire({ uri, states: [], reset: true });
  }

  dispose(): void {
    this.emitter.dispose();
  }
}

export { oneLine, STATUS_GLYPH } from './format';
