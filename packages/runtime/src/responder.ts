/**
 * The responder a command receives (6.4): `success`, `fail` and `cancel` each create a value,
 * remember it as the last value and return it. Auto-cancel turns a matching success into a
 * root cancellation (6.8).
 */
import { autoCancelReason } from './cancel-heuristic';
import type { CancelHeuristic, Responder } from './skills/registry';
import { failValue, rootCanceledValue, successValue, type Value } from './values';

export interface ResponderState {
  readonly api: Responder;
  /** The value of the last responder call, or null. */
  last(): Value | null;
}

export function createResponder(variable: string, command: string, autoCancel: boolean, heuristic: CancelHeuristic | null): ResponderState {
  let last: Value | null = null;
  const api = {
    success(data: unknown = '') {
      const answer = autoCancel && heuristic ? heuristic(data) : null;
      if (answer) {
        const value = rootCanceledValue(variable, autoCancelReason(answer.reason ?? data), 'heuristic', { command, heuristic: answer, source: 'heuristic' });
        value.autoCanceled = true;
        value.autoCancelInfo = answer;
        last = value;
        return value;
      }
      last = successValue(data, 'command');
      return last;
    },
    fail(reason: unknown = '') {
      last = failValue(reason, 'command');
      return last;
    },
    cancel(reason: unknown = '') {
      last = rootCanceledValue(variable, reason, 'command', { command });
      last.manualCancel = true;
      return last;
    },
  };
  return { api: api as unknown as Responder, last: () => last };
}
