/**
 * CLI errors: one line for the user, never a stack trace, and the exit code the contract gives
 * (lint/fmt/graph/diff/test: 2 for usage and I/O; run/replay/chat/worker/batch/mcp: 3; an invalid config: 3).
 */
export class CliError extends Error {
  constructor(message: string, readonly exitCode: number) {
    super(message);
    this.name = 'CliError';
  }
}

/** Exit code for usage and I/O errors of each command (contract.md). */
export function usageExitCode(command: string | undefined): number {
  return command === 'run' || command === 'replay' || command === 'chat' || command === 'worker' || command === 'batch' || command === 'mcp' ? 3 : 2;
}

export const CONFIG_ERROR_EXIT = 3;
