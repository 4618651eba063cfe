/**
 * A ready-made loop definition for hosts (the CLI, the VS Code panel): one agent, one command
 * registry, the SOP session and a loop session whose tools are adapted from the same registry,
 * and, when the definition lists delegates, a `delegate` command and tool that run work in a
 * child loop through the registry. Hosts with other needs write their own `createSessions`.
 */
import type { CommandRegistry } from '@lightsop/runtime';
import { LoopSession, type LoopSessionOptions } from './loop-session';
import type { LoopBuildContext, LoopDefinition, ModeName, ModeSpec, ModelRef } from './registry';
import { SopSession, type SopSessionOptions } from './sop-session';
import { sessionCommands, toolsFromRegistry } from './tools';
import type { SessionAgent, SessionLogger } from './types';

export interface AgentLoopOptions {
  name: string;
  displayName?: string;
  agent: SessionAgent;
  model: ModelRef;
  /** The commands plans and tools may use (reserved names in it are ignored). */
  registry?: CommandRegistry | null;
  modes?: readonly ModeSpec[];
  initialMode?: ModeName;
  delegates?: readonly string[];
  systemPrompt?: string;
  sop?: Omit<SopSessionOptions, 'supervisor' | 'systemPrompt' | 'logger'>;
  loop?: Omit<LoopSessionOptions, 'supervisor' | 'systemPrompt' | 'initialHistory' | 'projectRoot' | 'logger'>;
  logger?: SessionLogger;
}

export const DELEGATE_COMMAND = 'delegate';

/** Adds the `delegate` command (`delegate AGENT TEXT`) to a registry. */
function withDelegate(registry: CommandRegistry | null, delegates: readonly string[], context: LoopBuildContext): CommandRegistry | null {
  const delegate = context.delegate;
  if (!delegate) return registry;
  const description = `Runs a sub-task in a child agent and returns its answer: delegate AGENT TEXT, where AGENT is one of ${delegates.join(', ')}. In a loop, the input is the agent name on the first line and the task on the following lines.`;
  return {
    listCommands: () => [...sessionCommands(registry).commands.filter((c) => c.name !== DELEGATE_COMMAND), { name: DELEGATE_COMMAND, description, sideEffects: true }],
    async executeCommand(payload, responder) {
      if (payload.command !== DELEGATE_COMMAND) {
        if (!registry) throw new Error(`Unknown command ${payload.command}`);
        return registry.executeCommand(payload, responder);
      }
      let agentName: string;
      let text: string;
      if (payload.args.length >= 2) {
        agentName = String(payload.args[0]).trim();
        text = payload.args.slice(1).map(String).join(' ');
      } else {
        const input = String(payload.args[0] ?? '');
        const newline = input.indexOf('\n');
        const colon = input.indexOf(':');
        const split = newline >= 0 ? newline : colon;
        agentName = (split >= 0 ? input.slice(0, split) : input).trim();
        text = split >= 0 ? input.slice(split + 1).trim() : '';
      }
      if (!text) throw new Error('delegate needs an agent name and a task');
      const answer = await delegate(agentName, text, payload.signal ?? new AbortController().signal);
      return responder.success(answer);
    },
  };
}

/** A loop definition whose sessions share one agent and one registry. */
export function defineAgentLoop(options: AgentLoopOptions): LoopDefinition {
  const delegates = options.delegates ?? [];
  return {
    name: options.name,
    ...(options.displayName ? { displayName: options.displayName } : {}),
    model: options.model,
    modes: options.modes ?? [],
    ...(options.initialMode ? { initialMode: options.initialMode } : {}),
    delegates,
    createSessions(context) {
      const registry = withDelegate(options.registry ?? null, delegates, context);
      const systemPrompt = options.systemPrompt ?? '';
      return {
        sop: () => new SopSession({
          agent: options.agent,
          skillsDescription: sessionCommands(registry).describe(),
          commandsRegistry: registry,
          options: { ...options.sop, supervisor: context.supervisor, systemPrompt, ...(options.logger ? { logger: options.logger } : {}) },
        }),
        loop: (initialHistory) => new LoopSession({
          agent: options.agent,
          tools: registry ? toolsFromRegistry(registry) : {},
          options: {
            ...options.loop, supervisor: context.supervisor, systemPrompt, initialHistory: initialHistory ?? null, projectRoot: context.projectRoot,
            ...(options.logger ? { logger: options.logger } : {}),
          },
        }),
      };
    },
  };
}
