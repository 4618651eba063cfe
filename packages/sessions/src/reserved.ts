/**
 * Reserved tools and commands (sessions.md 1.2): names the runtime owns, the normalisation of
 * their arguments, and the preparation-only `clarify_context` answerer.
 */
import { CANNOT_COMPLETE, CLARIFY_CONTEXT, FINAL_ANSWER, RESERVED_NAMES, isReservedName } from '@lightsop/core';
import { ReservedNameError } from './errors';
import type { CallOptions, SessionAgent } from './types';

// The names themselves are core's (one definition for the validator, the runtime and sessions).
export { CANNOT_COMPLETE, CLARIFY_CONTEXT, FINAL_ANSWER, RESERVED_NAMES, isReservedName };
export const CLARIFY_UNAVAILABLE = 'The requested information is not available in the parent context.';
export const DEFAULT_CANNOT_COMPLETE = 'The agent cannot complete the task.';

/** Throws ReservedNameError for the first reserved key of a caller-supplied map. */
export function assertNoReservedNames(names: Iterable<string>): void {
  for (const name of names) if (isReservedName(name)) throw new ReservedNameError(name);
}

/**
 * The text of a final answer: a string as is; an object's `response`, `text` or `message` string
 * (first found); anything else the empty string.
 */
export function normalizeFinalText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    for (const key of ['response', 'text', 'message']) {
      const field = (value as Record<string, unknown>)[key];
      if (typeof field === 'string') return field;
    }
  }
  return '';
}

/**
 * Answers `clarify_context` questions strictly from the parent snapshot. Without questions, a
 * parent context or `executePrompt`, the answer is CLARIFY_UNAVAILABLE and the model is not called.
 */
export async function answerClarifyContext(
  questions: unknown,
  parentContext: unknown,
  agent: SessionAgent,
  options: CallOptions & { signal: AbortSignal },
): Promise<string> {
  const joined = Array.isArray(questions)
    ? questions.map((q) => String(q ?? '').trim()).filter((q) => q !== '').join('\n')
    : String(questions ?? '').trim();
  if (joined === '' || parentContext === null || parentContext === undefined || typeof parentContext !== 'object' || typeof agent.executePrompt !== 'function') {
    return CLARIFY_UNAVAILABLE;
  }
  const prompt = [
    'Answer the questions below strictly from the parent conversation snapshot that follows.',
    'Do not infer, guess or use outside knowledge. Quote or restate only what the snapshot says.',
    `When the snapshot does not contain the answer, reply with exactly this sentence: ${CLARIFY_UNAVAILABLE}`,
    '',
    'Parent conversation snapshot (JSON):',
    JSON.stringify(parentContext, null, 2),
    '',
    'Questions:',
    joined,
  ].join('\n');
  const reply = await agent.executePrompt(prompt, {
    model: options.model ?? null,
    tags: options.tags ?? null,
    reasoningEffort: options.reasoningEffort ?? null,
    signal: options.signal,
    context: { intent: CLARIFY_CONTEXT },
  });
  const text = typeof reply === 'string' ? reply.trim() : '';
  return text === '' ? CLARIFY_UNAVAILABLE : text;
}
