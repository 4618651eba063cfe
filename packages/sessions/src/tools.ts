/**
 * Loop tools adapted from a command registry (sessions.md 5.1 item 6): each command becomes a
 * tool with the command's description and `sideEffects` flag; a call builds a payload whose
 * single argument is the tool input and whose comment is the planner's reason. A success is the
 * tool result (pause-for-input data included); a failure or cancellation is a tool error.
 */
import { CommandSurface } from '@lightsop/core';
import { createResponder, type CommandRegistry } from '@lightsop/runtime';
import type { LoopTool } from './loop-session';
import { markSupervised } from './supervisor';
import type { SessionCommandPayload } from './types';

/**
 * The commands a registry offers a session: its command surface without the reserved names,
 * which the sessions provide themselves (sessions.md 1.2).
 */
export function sessionCommands(registry: CommandRegistry | null): CommandSurface {
  return registry ? CommandSurface.fromRegistry(registry).withoutReserved() : CommandSurface.EMPTY;
}

/** Turns every command of a registry into a loop tool. */
export function toolsFromRegistry(registry: CommandRegistry): Record<string, LoopTool> {
  const tools: Record<string, LoopTool> = {};
  for (const info of sessionCommands(registry).commands) {
    const tool: LoopTool = {
      description: info.description,
      async handler(input, context) {
        const responder = createResponder(info.name, info.name, false, null);
        const payload: SessionCommandPayload = {
          command: info.name,
          args: [input],
          raw: `${info.name} ${input}`,
          variable: info.name,
          lineNumber: 0,
          comment: context.reason ?? '',
          commentLines: context.reason ? context.reason.split('\n') : [],
          signal: context.signal,
          session: context.session,
          approval: context.approval,
        };
        if (context.supervised) markSupervised(payload, context.requestApproval);
        const returned = await registry.executeCommand(payload, responder.api);
        const value = (returned ?? responder.last()) as { status?: unknown; data?: unknown } | null | undefined;
        if (!value || typeof value !== 'object' || typeof value.status !== 'string') return returned === undefined ? '' : returned;
        if (value.status === 'success') return value.data;
        throw new Error(String(value.data ?? value.status));
      },
    };
    if (info.sideEffects !== undefined) tool.sideEffects = info.sideEffects;
    if (info.destructive === true) tool.destructive = true;
    tools[info.name] = tool;
  }
  return tools;
}
