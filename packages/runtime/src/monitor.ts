/**
 * Execution monitors (6.9): the default monitor with its three limits, an unlimited monitor for
 * `lightsop run`, and the check that a host's monitor implements the protocol.
 */

export interface ExecutionMonitor {
  beforeExecuteCommand(commandName: string, raw: string): void;
  beforeRegenerateScript(event: { prompt: string; request: unknown }): void;
  reportCommandFailure(commandName: string, reason: unknown): void;
  getStats?(): unknown;
}

export interface MonitorLimits {
  commandLimit?: number;
  promptCharLimit?: number;
  failureLimit?: number;
}

interface HistoryEntry {
  commandName?: string;
  commandInput?: string;
  prompt?: string;
  request?: unknown;
  reason?: unknown;
}

/** The default monitor: 100 commands, 1,000,000 prompt characters, 10 failures per command. */
export class DefaultExecutionMonitor implements ExecutionMonitor {
  readonly commandLimit: number;
  readonly promptCharLimit: number;
  readonly failureLimit: number;
  commandsExecuted = 0;
  promptsConsidered = 0;
  totalPromptChars = 0;
  readonly failureCounts = new Map<string, number>();
  readonly commandHistory: HistoryEntry[] = [];
  readonly promptHistory: HistoryEntry[] = [];
  readonly failureHistory: HistoryEntry[] = [];
  lastCommand: HistoryEntry | null = null;
  lastPrompt: HistoryEntry | null = null;
  lastFailure: HistoryEntry | null = null;

  constructor(limits: MonitorLimits = {}) {
    this.commandLimit = Number.isFinite(limits.commandLimit) ? limits.commandLimit! : 100;
    this.promptCharLimit = Number.isFinite(limits.promptCharLimit) ? limits.promptCharLimit! : 1_000_000;
    this.failureLimit = Number.isFinite(limits.failureLimit) ? limits.failureLimit! : 10;
  }

  beforeExecuteCommand(commandName: string, commandInput: string): void {
    this.commandsExecuted += 1;
    if (this.commandsExecuted > this.commandLimit) throw new Error(`Execution halted: command budget exceeded (${this.commandLimit})`);
    const entry = { commandName, commandInput };
    this.commandHistory.push(entry);
    this.lastCommand = entry;
  }

  beforeRegenerateScript({ prompt, request }: { prompt: string; request: unknown }): void {
    this.promptsConsidered += 1;
    this.totalPromptChars += typeof prompt === 'string' ? prompt.length : 0;
    if (this.totalPromptChars > this.promptCharLimit) throw new Error(`Execution halted: prompt budget exceeded (${this.promptCharLimit} characters)`);
    const entry = { prompt, request };
    this.promptHistory.push(entry);
    this.lastPrompt = entry;
  }

  reportCommandFailure(commandName: string, reason: unknown): void {
    const count = (this.failureCounts.get(commandName) ?? 0) + 1;
    this.failureCounts.set(commandName, count);
    const entry = { commandName, reason };
    this.failureHistory.push(entry);
    this.lastFailure = entry;
    if (count > this.failureLimit) throw new Error(`Execution halted: failure limit exceeded for command ${commandName}`);
  }

  getStats() {
    return {
      commandLimit: this.commandLimit,
      commandsExecuted: this.commandsExecuted,
      promptCharLimit: this.promptCharLimit,
      promptsConsidered: this.promptsConsidered,
      totalPromptChars: this.totalPromptChars,
      failureLimit: this.failureLimit,
      failureCounts: Object.fromEntries(this.failureCounts.entries()),
      lastCommand: this.lastCommand,
      lastPrompt: this.lastPrompt,
      lastFailure: this.lastFailure,
      commandHistory: this.commandHistory.slice(),
      promptHistory: this.promptHistory.slice(),
      failureHistory: this.failureHistory.slice(),
    };
  }
}

/** A monitor without limits that only counts (used by `lightsop run`, 6.13); keeps no histories. */
export class UnlimitedExecutionMonitor implements ExecutionMonitor {
  commandsExecuted = 0;
  promptsConsidered = 0;
  failures = 0;
  beforeExecuteCommand(): void {
    this.commandsExecuted++;
  }
  beforeRegenerateScript(): void {
    this.promptsConsidered++;
  }
  reportCommandFailure(): void {
    this.failures++;
  }
  getStats() {
    return { commandsExecuted: this.commandsExecuted, promptsConsidered: this.promptsConsidered, failures: this.failures };
  }
}

/** Returns the monitor, or throws a TypeError when it lacks part of the protocol. */
export function ensureMonitor(monitor: unknown): ExecutionMonitor {
  if (monitor === undefined || monitor === null) return new DefaultExecutionMonitor();
  const m = monitor as Partial<ExecutionMonitor>;
  if (typeof m.beforeExecuteCommand !== 'function' || typeof m.beforeRegenerateScript !== 'function' || typeof m.reportCommandFailure !== 'function') {
    throw new TypeError('executionMonitor must implement beforeExecuteCommand, beforeRegenerateScript, and reportCommandFailure');
  }
  return m as ExecutionMonitor;
}
