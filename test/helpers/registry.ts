/**
 * Test registries in the AchillesAgentLib protocol. The checklist's commands: `emit` succeeds with
 * its first argument, `combine` joins its arguments with `+`, `failer` fails with `oops`,
 * `canceler` cancels with `nope`. Every call is logged (raw text, in start order).
 */
import { Interpreter, type CommandPayload, type CommandRegistry, type InterpreterOptions, type Responder } from '@lightsop/runtime';

export type Handler = (payload: CommandPayload, responder: Responder) => unknown;

export interface TestRegistry extends CommandRegistry {
  log: string[];
  payloads: CommandPayload[];
}

export function testRegistry(extra: Record<string, Handler> = {}, flags: Partial<Pick<CommandRegistry, 'autoCancel' | 'cancelHeuristic'>> = {}): TestRegistry {
  const handlers: Record<string, Handler> = {
    emit: (p, r) => r.success(p.args[0]),
    combine: (p, r) => r.success(p.args.join('+')),
    failer: (_p, r) => r.fail('oops'),
    canceler: (_p, r) => r.cancel('nope'),
    ...extra,
  };
  const registry: TestRegistry = {
    log: [],
    payloads: [],
    listCommands: () => Object.keys(handlers).map((name) => ({ name, description: `test command ${name}` })),
    async executeCommand(payload, responder) {
      registry.log.push(payload.raw);
      registry.payloads.push(payload);
      const handler = handlers[payload.command];
      if (!handler) throw new Error(`Unknown command ${payload.command}`);
      return handler(payload, responder);
    },
    ...flags,
  };
  return registry;
}

/** Runs a plan in a fresh interpreter; returns the interpreter and the update result. */
export async function runPlan(source: string, options: Partial<InterpreterOptions> & { registry?: CommandRegistry } = {}) {
  const registry = options.registry ?? testRegistry();
  const interpreter = new Interpreter({ ...options, registry });
  const result = await interpreter.updateCode(source);
  return { interpreter, result, registry: registry as TestRegistry };
}
