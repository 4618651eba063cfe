/**
 * Text helpers shared by Run Plan, the views and the plan debugger. Nothing here imports
 * `vscode`, so the debug adapter (and its tests) can use it outside the extension host.
 */
import type { NodeStatus } from '../graph/protocol';

/** One line, at most `max` characters, for inline display. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export const STATUS_GLYPH: Record<NodeStatus, string> = {
  pending: '○',
  running: '…',
  success: '✓',
  fail: '✗',
  undefined: '○',
  canceled: '⊘',
};

/**
 * `file:line:col: message [code]`, the way Run Plan and the debugger report an invalid plan. The
 * line and column are the editor's (positions.ts), so VS Code links the text to that place.
 */
export function diagnosticLine(file: string, at: { readonly line: number; readonly column: number }, d: { readonly message: string; readonly code: string }): string {
  return `${file}:${at.line}:${at.column}: ${d.message} [${d.code}]`;
}
