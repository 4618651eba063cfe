/**
 * The plan runtime a SOP session needs (sessions.md 2.1): validation with an allowed command set,
 * and execution of a validated plan in a fresh interpreter, resolving (never rejecting) when the
 * signal aborts. A thin layer over `analyzePlan` and `Interpreter`.
 */
import { analyzePlan, type Declaration } from '@lightsop/core';
import { Interpreter } from '../interpreter';
import { DefaultExecutionMonitor, type ExecutionMonitor } from '../monitor';
import type { CommandRegistry } from '../skills/registry';
import { dataText } from '../values';
import type { VariableState } from './types';

export interface PlanDiagnostic {
  code: string;
  severity: 'error' | 'warning' | 'info' | 'hint';
  message: string;
  line: number;
  column: number;
  /** The declared name of the declaration the diagnostic is about, when there is one. */
  variable?: string;
}

export type VariableStatus = 'success' | 'fail' | 'undefined' | 'canceled';

export interface VariableUpdate {
  variable: string;
  command: string;
  state: VariableState;
  value?: unknown;
}

export interface ExecutionReport {
  /** Value: the data on success, the reason text otherwise. In declaration order. */
  variables: Record<string, { status: VariableStatus; value: unknown }>;
  /** Variables whose status is `fail`. */
  failures: readonly { variable: string; reason: string }[];
  /** The signal aborted; variables hold what settled before it. */
  aborted?: boolean;
}

export interface PlanRuntime {
  validate(source: string, options: { commands: ReadonlySet<string> }): readonly PlanDiagnostic[];
  execute(source: string, registry: CommandRegistry, options: {
    signal: AbortSignal;
    onVariable(update: VariableUpdate): void;
    holdNewCommands(): boolean;
  }): Promise<ExecutionReport>;
}

export interface PlanRuntimeOptions {
  /** A fresh monitor per execution; default: the runtime's DefaultExecutionMonitor (100 commands). */
  monitor?: () => ExecutionMonitor;
  /** Most commands running at once; unbounded by default. */
  concurrency?: number;
}

/** The project's LightSOPLang runtime as a PlanRuntime. */
export function createPlanRuntime(options: PlanRuntimeOptions = {}): PlanRuntime {
  return {
    validate(source, { commands }) {
      const skills: Record<string, string> = {};
      for (const name of commands) skills[name] = '';
      const analysis = analyzePlan(source, { skills, inputDeclared: false });
      const blocks = analysis.plan.declarations.filter((d) => d.name !== '');
      return analysis.diagnostics.map((d) => {
        const out: PlanDiagnostic = { code: d.code, severity: d.severity, message: d.message, line: d.range.line, column: d.range.column };
        const owner = declarationAtLine(blocks, d.range.line);
        if (owner) out.variable = owner.name;
        return out;
      });
    },

    async execute(source, registry, { signal, onVariable, holdNewCommands }) {
      const commands = new Map<string, string>();
      // The commands of declarations that never started (settled as undefined or canceled), read
      // from the table once when first needed: a search per event would be quadratic.
      let declared: Map<string, string> | null = null;
      const commandOf = (name: string): string => {
        const started = commands.get(name);
        if (started !== undefined) return started;
        declared ??= new Map(interpreter.entries().map((e) => [e.name, e.command]));
        return declared.get(name) ?? '';
      };
      const interpreter = new Interpreter({
        registry,
        executionMonitor: options.monitor ? options.monitor() : new DefaultExecutionMonitor(),
        concurrency: options.concurrency,
        signal,
        holdNewCommands,
        onEvent(event) {
          if (event.type === 'command-started') {
            commands.set(event.variable, event.command);
            onVariable({ variable: event.variable, command: event.command, state: 'running' });
          } else if (event.type === 'variable-settled') {
            const value = interpreter.getValue(event.variable);
            const command = commandOf(event.variable);
            onVariable({ variable: event.variable, command, state: event.status, value: value ? (value.status === 'success' ? value.data : dataText(value)) : event.value });
          }
        },
      });
      let halted: Error | null = null;
      let aborted = false;
      try {
        const result = await interpreter.updateCode(source);
        aborted = result.aborted;
      } catch (error) {
        if (signal.aborted) aborted = true;
        else halted = error instanceof Error ? error : new Error(String(error));
      }
      const variables: ExecutionReport['variables'] = {};
      const failures: { variable: string; reason: string }[] = [];
      for (const e of interpreter.entries()) {
        if (e.declaration === null) continue;
        const status = e.value.status;
        variables[e.name] = { status, value: status === 'success' ? e.value.data : dataText(e.value) };
        if (status === 'fail') failures.push({ variable: e.name, reason: dataText(e.value) });
      }
      if (halted) failures.push({ variable: '__plan__', reason: `execution-halted:${halted.message}` });
      return aborted ? { variables, failures, aborted: true } : { variables, failures };
    },
  };
}

/**
 * The declaration whose lines contain `line`. Declarations are in source order and their line
 * ranges do not overlap, so a binary search finds it: one search per diagnostic keeps validation
 * linear in a plan's size (a linear search froze a session for minutes on 200k declarations).
 */
function declarationAtLine(blocks: readonly Declaration[], line: number): Declaration | undefined {
  let lo = 0;
  let hi = blocks.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (blocks[mid]!.range.line <= line) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  const block = found === -1 ? undefined : blocks[found];
  return block && line <= block.range.endLine ? block : undefined;
}
