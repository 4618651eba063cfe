/**
 * Messages between the Run Timeline webview and the extension, declared once for both sides. The
 * extension sends a timeline (timeline-data.ts); the page asks to reveal a bar's declaration.
 * Nothing here imports `vscode`.
 */
import type { Timeline } from './timeline-data';

/** Extension → webview. */
export type ToTimelineWebview =
  | { readonly type: 'timeline'; readonly timeline: Timeline; readonly source: string }
  | { readonly type: 'empty'; readonly note: string };

/** Webview → extension. */
export type FromTimelineWebview =
  | { readonly type: 'ready' }
  | { readonly type: 'reveal'; readonly seq: number };

/** Runtime-checks a message from the webview (it is untrusted input). */
export function isFromTimelineWebview(x: unknown): x is FromTimelineWebview {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as Record<string, unknown>;
  if (m.type === 'ready') return true;
  return m.type === 'reveal' && typeof m.seq === 'number' && Number.isInteger(m.seq) && m.seq >= 0;
}
