/**
 * Loop tools adapted from a command registry (sessions.md 5.1 item 6): each command becomes a
 * tool with the command's description and `sideEffects` flag; a call builds a payload whose
 * single argument is the tool input and whose comment is the planner's reason. A success is the
 * tool result (pause-for-input data included); a failure or cancellation is a tool error.
 */
import { listedCommands } from '@lightsop/core';
import { createResponder } from '../responder';
import type { CommandRegistry } from '../skills/registry';
import type { LoopTool } from './loop-session';
import { isReservedName } from './reserved';
import { markSupervised } from './supervisor';
import type { CommandInfo, SessionCommandPayload } from './types';

/** The registry's commands with their optional `sideEffects` flags; reserved names and repeats are left out. */
export function listCommandInfos(registry: CommandRegistry): CommandInfo[] {
  const out: CommandInfo[] = [];
  const seen = new Set<string>();
  for (const c of listedCommands(registry)) {
    if (seen.has(c.name) || isReservedName(c.name)) continue;
    seen.add(c.name);
    out.push(c);
  }
  return out;
}

/** The model-visible descriptions of a registry's commands (reserved names left out). */
export function describeCommands(registry: CommandRegistry): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of listCommandInfos(registry)) out[c.name] = c.description;
  return out;
}

/** Turns every command of a registry into a loop tool. */
export function toolsFromRegistry(registry: CommandRegistry): Record<string, LoopTool> {
  const tools: Record<string, LoopTool> = {};
  for (const info of listCommandInfos(registry)) {
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
    tools[info.name] = tool;
  }
  return tools;
}
