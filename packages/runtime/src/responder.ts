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

/** One responder per command execution; methods live on the prototype (cheap to create). */
export class CommandResponder implements ResponderState {
  private lastValue: Value | null = null;
  readonly api: Responder;

  constructor(private readonly variable: string, private readonly command: string, private readonly autoCancel: boolean, private readonly heuristic: CancelHeuristic | null) {
    this.api = this as unknown as Responder;
  }

  success(data: unknown = ''): Value {
    const answer = this.autoCancel && this.heuristic ? this.heuristic(data) : null;
    if (answer) {
      const value = rootCanceledValue(this.variable, autoCancelReason(answer.reason ?? data), 'heuristic', { command: this.command, heuristic: answer, source: 'heuristic' });
      value.autoCanceled = true;
      value.autoCancelInfo = answer;
      this.lastValue = value;
      return value;
    }
    return (this.lastValue = successValue(data, 'command'));
  }

  fail(reason: unknown = ''): Value {
    return (this.lastValue = failValue(reason, 'command'));
  }

  cancel(reason: unknown = ''): Value {
    const value = rootCanceledValue(this.variable, reason, 'command', { command: this.command });
    value.manualCancel = true;
    return (this.lastValue = value);
  }

  last(): Value | null {
    return this.lastValue;
  }
}

export function createResponder(variable: string, command: string, autoCancel: boolean, heuristic: CancelHeuristic | null): ResponderState {
  return new CommandResponder(variable, command, autoCancel, heuristic);
}
