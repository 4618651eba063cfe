/**
 * Messages between the Plan Graph webview and the extension, declared once for both sides. The
 * extension sends the graph of the plan (after every edit) and live statuses (during a run); the
 * webview asks to reveal a declaration when a node is clicked. Nothing here imports `vscode`.
 */

/** A variable's state as the graph shows it: the four runtime statuses, plus running and not run yet. */
export type NodeStatus = 'pending' | 'running' | 'success' | 'fail' | 'undefined' | 'canceled';

export interface GraphNodeData {
  readonly name: string;
  readonly command: string | null;
  /** 1-based line of the declaration. */
  readonly line: number;
  readonly comment: string;
}

export interface GraphEdgeData {
  /** The dependency's variable name. */
  readonly from: string;
  /** The variable that uses it. */
  readonly to: string;
}

export interface NodeState {
  readonly name: string;
  readonly status: NodeStatus;
  /** Public text of the value (or the reason), shortened by the sender. */
  readonly value?: string;
}

/** Extension → webview. */
export type ToWebview =
  | {
      readonly type: 'graph';
      /** The plan file's name, for the heading. */
      readonly title: string;
      readonly nodes: readonly GraphNodeData[];
      readonly edges: readonly GraphEdgeData[];
      /** Shown instead of an empty graph (an english script, a plan without declarations). */
      readonly note?: string;
      /** Known states; nodes not listed are `pending`. */
      readonly states: readonly NodeState[];
    }
  | { readonly type: 'states'; readonly states: readonly NodeState[]; readonly reset?: boolean };

/** Webview → extension. */
export type FromWebview =
  | { readonly type: 'ready' }
  | { readonly type: 'reveal'; readonly name: string; readonly line: number };

/** Runtime-checks a message from the webview (it is untrusted input). */
export function isFromWebview(x: unknown): x is FromWebview {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as Record<string, unknown>;
  if (m.type === 'ready') return true;
  return m.type === 'reveal' && typeof m.name === 'string' && typeof m.line === 'number' && Number.isInteger(m.line) && m.line >= 1;
}
