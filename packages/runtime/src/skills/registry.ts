/**
 * Command registries: the AchillesAgentLib protocol (contract.md form (a)) and the adapter that
 * turns a plain skills map (form (b)) into one (6.7).
 */
import { listedCommands, type SkillsDescription } from '@lightsop/core';
import { textOf } from '../values';

/**
 * The idempotency key of a command run by a distributed worker (docs/scale-out.md): `id` is the
 * same on every delivery of one logical execution, `attempt` counts the deliveries from 1.
 */
export interface JobKey {
  readonly id: string;
  readonly attempt: number;
}

/** What a command receives (6.4). */
export interface CommandPayload {
  readonly command: string;
  readonly args: unknown[];
  readonly raw: string;
  readonly variable: string;
  readonly lineNumber: number;
  readonly comment: string;
  readonly commentLines: string[];
  /** Aborted when the run is aborted (6.12). */
  readonly signal?: AbortSignal;
  /**
   * Set when a `lightsop worker` runs the command: execution there is at least once, so a skill
   * with side effects can use `job.id` to do them once.
   */
  readonly job?: JobKey;
}

/** A value record as commands see it (5.2); built by the responder. */
export interface ValueRecord {
  status: string;
  data: unknown;
  timestamp: number;
  raw: string;
  rootCause?: unknown;
  via?: string | null;
  origin?: string;
}

export interface Responder {
  success(data?: unknown): ValueRecord;
  fail(reason?: unknown): ValueRecord;
  cancel(reason?: unknown): ValueRecord;
}

export interface CommandEntry {
  readonly name: string;
  readonly description: string;
}

/** Answer of a cancel heuristic: nothing for no match, or an object with an optional reason. */
export type CancelHeuristic = (data: unknown) => { reason?: unknown; [key: string]: unknown } | null | undefined | void;

/** The AchillesAgentLib registry protocol. */
export interface CommandRegistry {
  listCommands(): unknown;
  executeCommand(payload: CommandPayload, responder: Responder): unknown;
  autoCancel?: boolean;
  cancelHeuristic?: CancelHeuristic;
}

export interface SkillDefinition {
  readonly description?: string;
  /** False for a command without side effects: sessions run it without asking for approval. */
  readonly sideEffects?: boolean;
  run(args: unknown[], ctx: CommandPayload): unknown;
}

/** A plain skills map: command name to `{ description, run }`. */
export type SkillsMap = Readonly<Record<string, SkillDefinition>>;

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null;
}

/** True for an object with `listCommands` and `executeCommand` functions. */
export function isCommandRegistry(x: unknown): x is CommandRegistry {
  return isObject(x) && typeof x.listCommands === 'function' && typeof x.executeCommand === 'function';
}

/** True for an object whose every value has a `run` function. */
export function isSkillsMap(x: unknown): x is SkillsMap {
  return isObject(x) && !Array.isArray(x) && Object.values(x).every((v) => isObject(v) && typeof v.run === 'function');
}

/** Adapts a skills map to the registry protocol (6.7). */
export function registryFromSkillsMap(map: SkillsMap): CommandRegistry {
  const own = (name: string) => Object.prototype.hasOwnProperty.call(map, name);
  return {
    listCommands: () => Object.keys(map).map((name) => {
      const skill = map[name]!;
      const entry: CommandEntry & { sideEffects?: boolean } = { name, description: textOf(skill.description ?? '') };
      if (typeof skill.sideEffects === 'boolean') entry.sideEffects = skill.sideEffects;
      return entry;
    }),
    async executeCommand(payload, responder) {
      if (!own(payload.command)) throw new Error(`Unknown command ${payload.command}`);
      const value = await map[payload.command]!.run(payload.args, payload);
      return responder.success(value === undefined ? '' : value);
    },
  };
}

/**
 * Turns a skills module's default export into a registry, or throws a TypeError saying what a
 * module must export.
 */
export function toCommandRegistry(exported: unknown, origin = 'skills module'): CommandRegistry {
  if (isCommandRegistry(exported)) return exported;
  if (isObject(exported) && ('listCommands' in exported || 'executeCommand' in exported)) {
    const missing = ['listCommands', 'executeCommand'].filter((k) => typeof exported[k] !== 'function');
    throw new TypeError(`${origin}: commandsRegistry.${missing[0]} must be a function`);
  }
  if (isSkillsMap(exported)) return registryFromSkillsMap(exported);
  throw new TypeError(
    `${origin}: the default export must be a commands registry ({ listCommands, executeCommand }) or a skills map ({ NAME: { description, run } })`,
  );
}

/** The registry's commands (6.7): `command` accepted for `name`, unusable entries ignored, a throw is an empty list. */
export function listRegistryCommands(registry: CommandRegistry): CommandEntry[] {
  return listedCommands(registry);
}

/** The skills description (name to description) of a registry. */
export function describeRegistry(registry: CommandRegistry): SkillsDescription {
  const out: Record<string, string> = {};
  for (const c of listRegistryCommands(registry)) out[c.name] = c.description;
  return out;
}
