/**
 * What a worker does with a job: one command through its own registry (exactly as the local
 * Interpreter calls it, so a command gives the same value here as in a local run), or a whole plan
 * in a fresh Interpreter. Every payload carries the job's idempotency key (`payload.job`).
 */
import { isEnglishSource } from '@lightsop/core';
import {
  Interpreter, PlanValidationError, UnlimitedExecutionMonitor, cancelHeuristic, createResponder, dataText,
  type CommandPayload, type CommandRegistry, type JobKey,
} from '@lightsop/runtime';
import type { CommandJobData, CommandOutcome, PlanJobData, PlanOutcome } from './protocol';

/** Runs one command job. Never throws: an exception of the skill is part of the outcome. */
export async function executeCommandJob(registry: CommandRegistry, data: CommandJobData, job: JobKey, signal: AbortSignal): Promise<CommandOutcome> {
  const heuristic = typeof registry.cancelHeuristic === 'function' ? registry.cancelHeuristic : cancelHeuristic;
  const responder = createResponder(data.variable, data.command, registry.autoCancel === true, heuristic);
  const payload: CommandPayload = {
    command: data.command,
    args: data.args,
    raw: data.raw,
    variable: data.variable,
    lineNumber: data.lineNumber,
    comment: data.comment,
    commentLines: data.commentLines,
    signal,
    job,
  };
  let value: unknown;
  try {
    const returned = await registry.executeCommand(payload, responder.api);
    value = returned ?? responder.last();
  } catch (error) {
    return { type: 'throw', message: error instanceof Error ? error.message : String(error) };
  }
  return { type: 'value', value: sendable(value) };
}

/**
 * The value as it will travel (JSON). A value JSON cannot carry (a BigInt, a cycle) becomes a
 * failure that says so, instead of a job that can never complete.
 */
function sendable(value: unknown): unknown {
  if (value === undefined) return null;
  try {
    JSON.stringify(value);
    return value;
  } catch (error) {
    return { status: 'fail', data: `the command's result cannot be sent back to the coordinator (${(error as Error).message})`, raw: 'fail', timestamp: Date.now() };
  }
}

/** A registry that adds each command's idempotency key (the plan job's key and the variable). */
function withJobKeys(registry: CommandRegistry, job: JobKey): CommandRegistry {
  const wrapped: CommandRegistry = {
    listCommands: () => registry.listCommands(),
    executeCommand: (payload, responder) => registry.executeCommand({ ...payload, job: { id: `${job.id}/${payload.variable}`, attempt: job.attempt } }, responder),
  };
  if (registry.autoCancel !== undefined) wrapped.autoCancel = registry.autoCancel;
  if (registry.cancelHeuristic !== undefined) wrapped.cancelHeuristic = registry.cancelHeuristic;
  return wrapped;
}

/** A plan a worker refuses to run; the job fails for good (it would fail the same way again). */
export class PlanJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanJobError';
  }
}

/**
 * Runs one plan job: the Interpreter validates the plan (a job may come from anyone who can write
 * to Redis) and runs it with the input, and reports it as `lightsop run --json` would. A timeout stops the run; the
 * outcome then says so in `aborted`.
 */
export async function executePlanJob(registry: CommandRegistry, data: PlanJobData, job: JobKey, signal: AbortSignal): Promise<PlanOutcome> {
  if (isEnglishSource(data.plan)) throw new PlanJobError('english scripts are not run by workers; generate the plan first');
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  const timer = data.timeoutMs > 0 ? setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('timeout'));
  }, data.timeoutMs) : null;
  try {
    const interpreter = new Interpreter({
      registry: withJobKeys(registry, job),
      input: data.input,
      executionMonitor: new UnlimitedExecutionMonitor(),
      signal: controller.signal,
    });
    let result: Awaited<ReturnType<Interpreter['updateCode']>>;
    try {
      // The update validates the plan first and runs nothing when it has errors.
      result = await interpreter.updateCode(data.plan);
    } catch (error) {
      if (!(error instanceof PlanValidationError)) throw error;
      const d = error.diagnostics.find((x) => x.severity === 'error') ?? error.diagnostics[0];
      throw new PlanJobError(d ? `invalid plan: line ${d.range.line}, column ${d.range.column}: ${d.message} [${d.code}]` : 'invalid plan');
    }
    const declared = interpreter.entries().filter((e) => e.declaration !== null);
    const variables: Record<string, { status: string; value: string }> = {};
    for (const e of declared) variables[e.name] = { status: e.value.status, value: dataText(e.value) };
    const failures = declared.filter((e) => e.value.status === 'fail').map((e) => ({ variable: e.name, reason: dataText(e.value) }));
    const status = declared.every((e) => e.value.status === 'success') ? 'success' : 'fail';
    const outcome: PlanOutcome = { status, variables, failures, commands: result.commands };
    if (result.aborted) return { ...outcome, status: 'fail', aborted: timedOut ? `timed out after ${data.timeoutMs} ms` : 'interrupted' };
    return outcome;
  } finally {
    if (timer) clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}
