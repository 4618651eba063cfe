/**
 * Automatic cancellation (6.8): the built-in heuristic that recognises cancellations in command
 * output, and the normalisation of the reason it reports. Quirks are kept on purpose (Q17): it
 * misses `cancellation` and fires on `not canceled`.
 */
import type { CancelHeuristic } from './skills/registry';
import { normalizeCancelReason } from './values';

const STRING_PATTERNS = [/^cancel(?:led|ation)?\b/i, /^cancled\b/i, /^cancel:\s*/i, /^stop\b/i, /^abort\b/i, /^halt\b/i];
const STATUS_KEYWORDS = new Set(['cancel', 'canceled', 'cancelled', 'cancled', 'cancelation']);
const PREFIX = /^cancel(?:led|ation|ed)?[:\s-]*/i;

export interface HeuristicAnswer {
  reason?: unknown;
  source?: string;
  raw?: unknown;
  [key: string]: unknown;
}

function fromString(raw: string): HeuristicAnswer | null {
  const text = raw.trim();
  if (!text) return null;
  const lower = text.toLowerCase();
  if (STRING_PATTERNS.some((p) => p.test(lower))) {
    return { reason: text.replace(PREFIX, '').trim() || text, source: 'string-prefix' };
  }
  if (lower.includes('cancelled') || lower.includes('canceled')) return { reason: text, source: 'string-contains' };
  return null;
}

function fromObject(value: Record<string, unknown>): HeuristicAnswer | null {
  const status = value.status ?? value.state ?? value.result;
  if (status !== null && status !== undefined) {
    const keyword = String(status).trim().toLowerCase();
    if (STATUS_KEYWORDS.has(keyword)) {
      const reason = value.reason ?? value.message ?? value.detail ?? '';
      return { reason: reason ? String(reason) : keyword, source: 'object-status' };
    }
  }
  if (value.cancel === true || value.cancelled === true || value.canceled === true) {
    const reason = value.reason ?? value.message ?? '';
    return { reason: reason ? String(reason) : 'canceled', source: 'object-flag' };
  }
  return null;
}

/** The built-in heuristic (the reference's `cancelEuristic`). */
export const cancelHeuristic: CancelHeuristic = function cancelHeuristic(output: unknown): HeuristicAnswer | null {
  if (output === null || output === undefined) return null;
  if (typeof output === 'string') {
    const answer = fromString(output);
    return answer ? { ...answer, raw: output } : null;
  }
  if (typeof output === 'object') {
    const answer = fromObject(output as Record<string, unknown>);
    if (answer) return { ...answer, raw: output };
    const text = typeof (output as { toString?: unknown }).toString === 'function' ? String(output) : null;
    return text !== null && (text as unknown) !== output ? cancelHeuristic(text) as HeuristicAnswer | null : null;
  }
  return cancelHeuristic(String(output)) as HeuristicAnswer | null;
};

/** The reason of an automatic cancellation: normalised, with a leading cancel word removed. */
export function autoCancelReason(reason: unknown): string {
  const normalised = normalizeCancelReason(reason);
  return normalised.replace(PREFIX, '').trim() || normalised;
}
