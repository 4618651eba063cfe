/**
 * The command surface: what a command is (name, description, parameters when known, side
 * effects, reserved or not, and which source provides it), read once from whatever provides
 * commands — a registry's `listCommands()`, a skills map, a JSON skills description, the
 * built-ins — and the names the language and the sessions reserve. Every host reads commands
 * through this module: the interpreter, the validator, the language server, `#!english` prompts,
 * the sessions, the standard skills and the chat front ends. Pure: it reads only the values it is
 * given, and never trusts them (a listing may throw, or hold getters that throw).
 */

/** The built-in command: joins its arguments (spec 6.7). A registry that lists it replaces it. */
export const ASSIGN = 'assign';
/** Reserved: declares the answer (spec 4.4, sessions.md 1.2). */
export const FINAL_ANSWER = 'final_answer';
/** Reserved: ends without an answer, with the reason. */
export const CANNOT_COMPLETE = 'cannot_complete';
/** Reserved in preparation sessions: questions answered from the parent conversation. */
export const CLARIFY_CONTEXT = 'clarify_context';

/** The commands that declare a plan's outcome: reset on every update (6.6), required in generated plans (8.4). */
export const FINAL_COMMANDS = [FINAL_ANSWER, CANNOT_COMPLETE] as const;
/** Names the sessions own: callers never supply them (sessions.md 1.2). */
export const RESERVED_NAMES = [FINAL_ANSWER, CANNOT_COMPLETE, CLARIFY_CONTEXT] as const;
/** Commands every plan may use whatever the skills description says (spec 4.4). */
export const BUILTIN_COMMANDS: readonly string[] = [ASSIGN, ...FINAL_COMMANDS];

export type ReservedName = (typeof RESERVED_NAMES)[number];

const RESERVED = new Set<string>(RESERVED_NAMES);
const FINAL = new Set<string>(FINAL_COMMANDS);

/** True for a name the sessions reserve (`final_answer`, `cannot_complete`, `clarify_context`). */
export function isReservedName(name: string): name is ReservedName {
  return RESERVED.has(name);
}

/** True for `final_answer` and `cannot_complete`. */
export function isFinalCommand(name: string): boolean {
  return FINAL.has(name);
}

/** A skills description: command name to its description (contract.md). */
export type SkillsDescription = Readonly<Record<string, string>>;

/**
 * Where a command comes from. The kinds are open: a new provider (an MCP server, say) adds its
 * own kind and names itself in `name`; consumers show the kind and never branch on an unknown one.
 */
export type CommandSourceKind = 'builtin' | 'reserved' | 'registry' | 'skills-map' | 'description' | (string & {});

export interface CommandSource {
  readonly kind: CommandSourceKind;
  /** Which one: a skills file, "standard skills", a server name. */
  readonly name?: string;
}

/** One parameter of a command, when its provider says. */
export interface CommandParameter {
  readonly name: string;
  readonly description?: string;
  readonly required?: boolean;
}

/** One command as every host sees it. Plain data, JSON-safe. */
export interface CommandSpec {
  readonly name: string;
  readonly description: string;
  /** Present when the provider lists them. */
  readonly parameters?: readonly CommandParameter[];
  /** Present when the provider says whether the command has side effects. */
  readonly sideEffects?: boolean;
  /** True for a command with side effects that sessions ask about every time (an MCP tool's `destructiveHint`). */
  readonly destructive?: boolean;
  /** How many positional arguments the command takes, when its provider says exactly (MCP tools: their input schema). */
  readonly arguments?: CommandArity;
  /** True for the names of RESERVED_NAMES, whoever lists them. */
  readonly reserved: boolean;
  readonly source: CommandSource;
}

/**
 * The positional arguments a command takes: from `minimum` (up to its last required parameter) to
 * `maximum`; with `object`, one argument holding a JSON object (or a $reference) is also accepted.
 * `argument-count` reports declarations outside these bounds.
 */
export interface CommandArity {
  readonly minimum: number;
  readonly maximum: number;
  readonly object: boolean;
}

/** The source of commands read from a registry whose reader gave no other. */
export const REGISTRY_SOURCE: CommandSource = { kind: 'registry' };

/** The descriptions of the built-in and reserved commands; prompts, hovers and sessions show these. */
export const BUILTIN_DESCRIPTIONS: Readonly<Record<string, string>> = {
  [ASSIGN]: 'Built-in. Joins its arguments with single spaces and succeeds with the text; with no argument, the empty string. With no header argument, the lines below may hold a here-doc (`--begin-T--` … `--end-T--`).',
  [FINAL_ANSWER]: "Declares the plan's answer for the user: final_answer VALUE (one literal or one $reference).",
  [CANNOT_COMPLETE]: 'Declares that the request cannot be done, with the reason: cannot_complete REASON.',
  [CLARIFY_CONTEXT]: 'Asks specific questions that are answered strictly from the parent conversation: clarify_context QUESTIONS.',
};

/**
 * The spec of a built-in or reserved command as the runtime or a session provides it (reserved
 * entries have no side effects: they are never sent for approval).
 */
export function builtinCommand(name: typeof ASSIGN | ReservedName): CommandSpec {
  const reserved = isReservedName(name);
  return reserved
    ? { name, description: BUILTIN_DESCRIPTIONS[name]!, sideEffects: false, reserved, source: { kind: 'reserved' } }
    : { name, description: BUILTIN_DESCRIPTIONS[name]!, reserved, source: { kind: 'builtin' } };
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null;
}

function readParameters(raw: unknown): CommandParameter[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const out: CommandParameter[] = [];
  for (const p of raw) {
    if (typeof p === 'string' && p.trim() !== '') out.push({ name: p });
    else if (isObject(p) && typeof p.name === 'string' && p.name.trim() !== '') {
      const param: { name: string; description?: string; required?: boolean } = { name: p.name };
      if (typeof p.description === 'string') param.description = p.description;
      if (typeof p.required === 'boolean') param.required = p.required;
      out.push(param);
    }
  }
  return out;
}

function readArity(raw: unknown): CommandArity | undefined {
  if (!isObject(raw)) return undefined;
  const { minimum, maximum, object } = raw;
  if (typeof minimum !== 'number' || typeof maximum !== 'number' || !Number.isSafeInteger(minimum) || !Number.isSafeInteger(maximum)) return undefined;
  if (minimum < 0 || maximum < minimum) return undefined;
  return { minimum, maximum, object: object === true };
}

function readSource(raw: unknown, fallback: CommandSource): CommandSource {
  if (!isObject(raw) || typeof raw.kind !== 'string' || raw.kind.trim() === '') return fallback;
  return typeof raw.name === 'string' ? { kind: raw.kind, name: raw.name } : { kind: raw.kind };
}

/**
 * One entry of a listing: `name` (or `command` when `name` is empty), `description`, and the
 * optional `parameters`, `sideEffects` and `source`. Null when the entry is unusable (no name,
 * or a getter throws).
 */
function readEntry(entry: unknown, fallbackName: string | null, source: CommandSource): CommandSpec | null {
  try {
    if (!isObject(entry)) return null;
    const name = fallbackName ?? (entry.name || entry.command);
    if (typeof name !== 'string' || name.trim() === '') return null;
    const spec: { -readonly [K in keyof CommandSpec]: CommandSpec[K] } = {
      name,
      description: typeof entry.description === 'string' ? entry.description : '',
      reserved: isReservedName(name),
      source: readSource(entry.source, source),
    };
    const parameters = readParameters(entry.parameters);
    if (parameters) spec.parameters = parameters;
    if (typeof entry.sideEffects === 'boolean') spec.sideEffects = entry.sideEffects;
    if (entry.destructive === true) spec.destructive = true;
    const arity = readArity(entry.arguments);
    if (arity) spec.arguments = arity;
    return spec;
  } catch {
    return null;
  }
}

/**
 * The commands a registry lists, in its order, each name once (the first entry wins). Unusable
 * entries are ignored; a throwing `listCommands` counts as an empty list, and a list whose
 * iteration throws ends where it broke.
 */
export function readRegistryCommands(registry: { listCommands(): unknown }, source: CommandSource = REGISTRY_SOURCE): CommandSpec[] {
  let raw: unknown;
  try {
    raw = registry.listCommands();
  } catch {
    return [];
  }
  const out: CommandSpec[] = [];
  const seen = new Set<string>();
  try {
    if (!Array.isArray(raw)) return [];
    for (const entry of raw) {
      const spec = readEntry(entry, null, source);
      if (!spec || seen.has(spec.name)) continue;
      seen.add(spec.name);
      out.push(spec);
    }
  } catch {
    // Iterating the list threw: keep the entries read so far.
  }
  return out;
}

/** The commands of a skills map (`{ NAME: { description, run, sideEffects?, parameters? } }`), in key order. */
export function readSkillsMapCommands(map: object, source: CommandSource = { kind: 'skills-map' }): CommandSpec[] {
  const out: CommandSpec[] = [];
  let names: string[];
  try {
    names = Object.keys(map);
  } catch {
    return [];
  }
  for (const name of names) {
    let entry: unknown;
    try {
      entry = (map as Record<string, unknown>)[name];
    } catch {
      continue;
    }
    const spec = readEntry(entry, name, source);
    if (spec) out.push(spec);
  }
  return out;
}

/** The commands of a skills description (name to description). */
export function readDescriptionCommands(description: SkillsDescription, source: CommandSource = { kind: 'description' }): CommandSpec[] {
  return Object.keys(description).map((name) => ({
    name,
    description: typeof description[name] === 'string' ? description[name]! : '',
    reserved: isReservedName(name),
    source,
  }));
}

/**
 * The commands available somewhere, from one or more listings in priority order: the first
 * listing that names a command provides it. Immutable; lookups by exact name.
 */
export class CommandSurface {
  static readonly EMPTY = new CommandSurface();

  readonly commands: readonly CommandSpec[];
  /**
   * Name prefixes whose commands are not listed yet (`fs.` while that MCP server starts or after
   * it failed): names with one are never reported as unknown.
   */
  readonly unlistedPrefixes: readonly string[];
  readonly #byName = new Map<string, CommandSpec>();

  constructor(listings: readonly (readonly CommandSpec[])[] = [], options: { unlistedPrefixes?: readonly string[] } = {}) {
    this.unlistedPrefixes = options.unlistedPrefixes ?? [];
    const commands: CommandSpec[] = [];
    for (const listing of listings) {
      for (const spec of listing) {
        if (this.#byName.has(spec.name)) continue;
        this.#byName.set(spec.name, spec);
        commands.push(spec);
      }
    }
    this.commands = commands;
  }

  /** The commands a registry lists. */
  static fromRegistry(registry: { listCommands(): unknown }, source?: CommandSource): CommandSurface {
    return new CommandSurface([readRegistryCommands(registry, source)]);
  }

  /** The commands of a skills description. */
  static fromDescription(description: SkillsDescription, source?: CommandSource): CommandSurface {
    return new CommandSurface([readDescriptionCommands(description, source)]);
  }

  get size(): number {
    return this.commands.length;
  }

  get names(): string[] {
    return this.commands.map((c) => c.name);
  }

  has(name: string): boolean {
    return this.#byName.has(name);
  }

  /** True when `name` may be a command that is not listed yet (see `unlistedPrefixes`). */
  mayBeUnlisted(name: string): boolean {
    return this.unlistedPrefixes.some((p) => name.startsWith(p));
  }

  get(name: string): CommandSpec | undefined {
    return this.#byName.get(name);
  }

  /** The commands that pass `keep`, in order. */
  filter(keep: (command: CommandSpec) => boolean): CommandSurface {
    return new CommandSurface([this.commands.filter(keep)]);
  }

  /** The commands a caller may supply: reserved names left out (the sessions provide those). */
  withoutReserved(): CommandSurface {
    return this.filter((c) => !c.reserved);
  }

  /** The skills description (name to description) of these commands. */
  describe(): SkillsDescription {
    const out: Record<string, string> = {};
    for (const c of this.commands) out[c.name] = c.description;
    return out;
  }

  /** True when both hold the same commands, in the same order, with the same facts. */
  sameAs(other: CommandSurface): boolean {
    if (other.commands.length !== this.commands.length) return false;
    if (other.unlistedPrefixes.join('\n') !== this.unlistedPrefixes.join('\n')) return false;
    return this.commands.every((c, i) => JSON.stringify(c) === JSON.stringify(other.commands[i]));
  }
}
