/**
 * Messages between the chat webview page and the extension host, declared once for both sides.
 * The host sends the whole view model when the page (re)loads and then every panel event, which
 * the page applies with the shared reducer (model.ts). The page sends intents: what the user
 * asked for, never an object of the session library. Every message from the page is untrusted
 * input and is checked here before the host looks at it. Nothing here imports `vscode`.
 */
import { EFFORTS, type ChatState, type Effort, type PanelEvent } from './model';

/** Extension → page. */
export type ToChatWebview =
  | { readonly type: 'state'; readonly state: ChatState }
  | { readonly type: 'events'; readonly events: readonly PanelEvent[] };

/** Page → extension: the user's intents. */
export type FromChatWebview =
  | { readonly type: 'ready' }
  | { readonly type: 'send'; readonly loopId: string; readonly text: string }
  | { readonly type: 'cancelQueued'; readonly loopId: string; readonly commandId: string }
  | { readonly type: 'stop'; readonly loopId: string }
  | { readonly type: 'stopAll' }
  | { readonly type: 'selectTab'; readonly loopId: string }
  | { readonly type: 'newConversation' }
  | { readonly type: 'closeTab'; readonly loopId: string }
  | { readonly type: 'setMode'; readonly loopId: string; readonly mode: string }
  | { readonly type: 'setInference'; readonly loopId: string; readonly model?: string; readonly effort?: Effort }
  | { readonly type: 'approval'; readonly id: string; readonly decision: 'approve' | 'alwaysApprove' | 'deny'; readonly reason?: string }
  | { readonly type: 'review'; readonly id: string; readonly decision: 'run' | 'edit' | 'cancelEdit' | 'reject'; readonly reason?: string }
  | { readonly type: 'continueInLoop'; readonly loopId: string; readonly commandId: string }
  | { readonly type: 'retry'; readonly loopId: string; readonly commandId: string }
  | { readonly type: 'openPlan'; readonly loopId: string; readonly commandId: string; readonly attempt: number }
  | { readonly type: 'configure'; readonly what: 'settings' | 'apiKey' };

export const MAX_MESSAGE_LENGTH = 100_000;
export const MAX_REASON_LENGTH = 2_000;

const ID = /^[A-Za-z0-9_-]{1,100}$/;
const isId = (x: unknown): x is string => typeof x === 'string' && ID.test(x);
const isText = (x: unknown, max: number): x is string => typeof x === 'string' && x.length <= max;
const isName = (x: unknown): x is string => typeof x === 'string' && x.trim() !== '' && x.length <= 200 && !/[\u0000-\u001f]/.test(x);
const optionalReason = (x: unknown) => x === undefined || isText(x, MAX_REASON_LENGTH);

/** Checks a message from the page; returns it typed, or null when it is not one of ours. */
export function parseFromChatWebview(x: unknown): FromChatWebview | null {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return null;
  const m = x as Record<string, unknown>;
  switch (m.type) {
    case 'ready':
    case 'stopAll':
    case 'newConversation':
      return { type: m.type };
    case 'send':
      return isId(m.loopId) && isText(m.text, MAX_MESSAGE_LENGTH) && m.text.trim() !== '' ? { type: 'send', loopId: m.loopId, text: m.text } : null;
    case 'cancelQueued':
    case 'continueInLoop':
    case 'retry':
      return isId(m.loopId) && isId(m.commandId) ? { type: m.type, loopId: m.loopId, commandId: m.commandId } : null;
    case 'stop':
    case 'selectTab':
    case 'closeTab':
      return isId(m.loopId) ? { type: m.type, loopId: m.loopId } : null;
    case 'setMode':
      return isId(m.loopId) && isName(m.mode) ? { type: 'setMode', loopId: m.loopId, mode: m.mode } : null;
    case 'setInference': {
      if (!isId(m.loopId)) return null;
      if (m.model !== undefined && !isName(m.model)) return null;
      if (m.effort !== undefined && !(EFFORTS as readonly unknown[]).includes(m.effort)) return null;
      if (m.model === undefined && m.effort === undefined) return null;
      return { type: 'setInference', loopId: m.loopId, ...(m.model !== undefined ? { model: m.model as string } : {}), ...(m.effort !== undefined ? { effort: m.effort as Effort } : {}) };
    }
    case 'approval':
      if (!isId(m.id) || !optionalReason(m.reason)) return null;
      if (m.decision !== 'approve' && m.decision !== 'alwaysApprove' && m.decision !== 'deny') return null;
      return { type: 'approval', id: m.id, decision: m.decision, ...(typeof m.reason === 'string' ? { reason: m.reason } : {}) };
    case 'review':
      if (!isId(m.id) || !optionalReason(m.reason)) return null;
      if (m.decision !== 'run' && m.decision !== 'edit' && m.decision !== 'cancelEdit' && m.decision !== 'reject') return null;
      return { type: 'review', id: m.id, decision: m.decision, ...(typeof m.reason === 'string' ? { reason: m.reason } : {}) };
    case 'openPlan':
      return isId(m.loopId) && isId(m.commandId) && typeof m.attempt === 'number' && Number.isInteger(m.attempt) && m.attempt >= 1
        ? { type: 'openPlan', loopId: m.loopId, commandId: m.commandId, attempt: m.attempt }
        : null;
    case 'configure':
      return m.what === 'settings' || m.what === 'apiKey' ? { type: 'configure', what: m.what } : null;
    default:
      return null;
  }
}
