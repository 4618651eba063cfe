/**
 * MCP tools as commands (docs/mcp.md): the command spec of a tool (name `SERVER.TOOL`, its
 * description, its parameters and argument counts from the input schema, side effects from its
 * annotations), the arguments object a plan's positional arguments become, and the value a tool's
 * result becomes. Pure: no connection here.
 */
import type { CommandParameter, CommandSpec } from '@lightsop/core';

/** The source kind of commands that MCP servers provide; `source.name` is the server. */
export const MCP_SOURCE_KIND = 'mcp';

/** What a tool listing says about one tool (the parts used here). */
export interface McpToolInfo {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
  readonly annotations?: {
    readonly title?: string;
    readonly readOnlyHint?: boolean;
    readonly destructiveHint?: boolean;
    readonly idempotentHint?: boolean;
    readonly openWorldHint?: boolean;
  };
}

/** One property of a tool's input schema, in the schema's order. */
export interface ToolProperty {
  readonly name: string;
  readonly types: readonly string[];
  readonly description?: string;
  readonly required: boolean;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** The properties of each input schema object already read: a tool call reads its schema once. */
const propertiesOf = new WeakMap<object, readonly ToolProperty[]>();

/** The properties of an input schema in order, with their JSON types (empty when the schema says none). */
export function toolProperties(schema: unknown): ToolProperty[] {
  return [...knownProperties(schema)];
}

const NO_PROPERTIES: readonly ToolProperty[] = [];

/** The names of each shared property list (`knownProperties`). */
const namesOfProperties = new WeakMap<readonly ToolProperty[], ReadonlySet<string>>();

function namesOf(properties: readonly ToolProperty[]): ReadonlySet<string> {
  let names = namesOfProperties.get(properties);
  if (!names) {
    names = new Set(properties.map((p) => p.name));
    namesOfProperties.set(properties, names);
  }
  return names;
}

/** The properties of a schema, read once per schema object and shared (never to be changed). */
function knownProperties(schema: unknown): readonly ToolProperty[] {
  if (!isObject(schema)) return NO_PROPERTIES;
  let known = propertiesOf.get(schema);
  if (!known) {
    known = readProperties(schema);
    propertiesOf.set(schema, known);
  }
  return known;
}

function readProperties(schema: Record<string, unknown>): ToolProperty[] {
  if (!isObject(schema.properties)) return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  const out: ToolProperty[] = [];
  for (const name of Object.keys(schema.properties)) {
    const p = schema.properties[name];
    const types: string[] = [];
    if (isObject(p)) {
      if (typeof p.type === 'string') types.push(p.type);
      else if (Array.isArray(p.type)) for (const t of p.type) if (typeof t === 'string') types.push(t);
      else if (Array.isArray(p.enum) && p.enum.every((v) => typeof v === 'string')) types.push('string');
    }
    const property: { -readonly [K in keyof ToolProperty]: ToolProperty[K] } = { name, types, required: required.has(name) };
    if (isObject(p) && typeof p.description === 'string') property.description = p.description;
    out.push(property);
  }
  return out;
}

/**
 * Side effects from a tool's annotations: `readOnlyHint: true` means none; anything else
 * (including no annotations) means it has some. `destructive` is `destructiveHint: true` on a tool
 * that is not read-only: sessions ask every time.
 */
export function toolEffects(tool: McpToolInfo): { sideEffects: boolean; destructive: boolean } {
  const a = isObject(tool.annotations) ? tool.annotations : {};
  const readOnly = a.readOnlyHint === true;
  return { sideEffects: !readOnly, destructive: !readOnly && a.destructiveHint === true };
}

/** The command spec of a tool, under `name` (`SERVER.TOOL`, or the bare name). */
export function toolCommandSpec(server: string, tool: McpToolInfo, name: string): CommandSpec {
  const properties = toolProperties(tool.inputSchema);
  const parameters: CommandParameter[] = properties.map((p) => {
    const param: { name: string; description?: string; required?: boolean } = { name: p.name, required: p.required };
    const type = p.types.length > 0 ? p.types.join(' | ') : '';
    const text = [type, p.description ?? ''].filter((t) => t !== '').join(': ');
    if (text !== '') param.description = text;
    return param;
  });
  let minimum = 0;
  properties.forEach((p, i) => {
    if (p.required) minimum = i + 1;
  });
  const title = tool.title ?? tool.annotations?.title;
  const description = typeof tool.description === 'string' && tool.description.trim() !== '' ? tool.description : (title ?? '');
  const { sideEffects, destructive } = toolEffects(tool);
  return {
    name,
    description,
    parameters,
    sideEffects,
    ...(destructive ? { destructive } : {}),
    arguments: { minimum, maximum: properties.length, object: true },
    reserved: false,
    source: { kind: MCP_SOURCE_KIND, name: server },
  };
}

/** A plan's arguments that cannot become the tool's arguments: the message names the argument. */
export class ToolArgumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolArgumentError';
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function textFor(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** One value converted to the first of `types` it fits; a string that fits none is an error. */
function coerce(value: unknown, property: ToolProperty, position: number): unknown {
  if (property.types.length === 0) return value;
  const problems: string[] = [];
  for (const type of property.types) {
    switch (type) {
      case 'string':
        return typeof value === 'string' ? value : textFor(value);
      case 'number':
      case 'integer': {
        const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
        if (Number.isFinite(n) && (type === 'number' || Number.isInteger(n))) return n;
        problems.push(type === 'integer' ? 'an integer' : 'a number');
        break;
      }
      case 'boolean':
        if (typeof value === 'boolean') return value;
        if (value === 'true' || value === 'false') return value === 'true';
        problems.push('true or false');
        break;
      case 'null':
        if (value === null || value === 'null') return null;
        problems.push('null');
        break;
      case 'array':
      case 'object': {
        const v = typeof value === 'string' ? parseJson(value) : value;
        if (type === 'array' ? Array.isArray(v) : isObject(v)) return v;
        problems.push(type === 'array' ? 'a JSON array' : 'a JSON object');
        break;
      }
      default:
        return value;
    }
  }
  const shown = textFor(value);
  throw new ToolArgumentError(`argument ${position} (${property.name}) must be ${problems.join(' or ')}; got ${JSON.stringify(shown.length > 60 ? `${shown.slice(0, 60)}…` : shown)}`);
}

/**
 * The arguments object for a tool from a plan's arguments: a single argument that is a JSON
 * object (a value, or text that parses as one) whose keys are all among the tool's parameters is
 * passed as it is; otherwise the arguments map onto the input schema's properties in order, each
 * converted to its property's type. Too many arguments or a missing required one is an error.
 */
export function toolArguments(tool: McpToolInfo, args: readonly unknown[]): Record<string, unknown> {
  const properties = knownProperties(tool.inputSchema);
  if (args.length === 1) {
    const only = args[0];
    const object = typeof only === 'string' ? (only.trimStart().startsWith('{') ? parseJson(only) : undefined) : only;
    if (isObject(object)) {
      const names = namesOf(properties);
      if (properties.length === 0 || Object.keys(object).every((k) => names.has(k))) return { ...object };
    }
  }
  if (args.length > properties.length) {
    throw new ToolArgumentError(`takes at most ${properties.length} argument${properties.length === 1 ? '' : 's'}${properties.length > 0 ? ` (${properties.map((p) => p.name).join(', ')})` : ''}; got ${args.length}`);
  }
  const out: Record<string, unknown> = {};
  for (let i = 0; i < args.length; i++) {
    const property = properties[i]!;
    out[property.name] = coerce(args[i], property, i + 1);
  }
  // Only a required property after the given arguments can be missing.
  let complete = true;
  for (let i = args.length; i < properties.length; i++) if (properties[i]!.required) complete = false;
  const missing = complete ? [] : properties.filter((p) => p.required && !(p.name in out));
  if (missing.length > 0) {
    throw new ToolArgumentError(`missing required argument${missing.length === 1 ? '' : 's'} ${missing.map((p) => p.name).join(', ')} (arguments in order: ${properties.map((p) => p.name).join(', ')})`);
  }
  return out;
}

/** What a tool's result holds (the parts used here). */
export interface McpToolResult {
  readonly content?: readonly unknown[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  readonly toolResult?: unknown;
}

/** The text of a result's content: text items as they are, others as a short note, one per line. */
export function resultText(result: McpToolResult): string {
  const content = Array.isArray(result.content) ? result.content : [];
  // The common answer, one text item: its text, without a list to join.
  if (content.length === 1) {
    const only: unknown = content[0];
    if (isObject(only) && only.type === 'text' && typeof only.text === 'string') return only.text;
  }
  const lines: string[] = [];
  for (const item of content) {
    if (!isObject(item)) continue;
    if (item.type === 'text' && typeof item.text === 'string') lines.push(item.text);
    else if (item.type === 'resource' && isObject(item.resource)) {
      lines.push(typeof item.resource.text === 'string' ? item.resource.text : `[resource ${textFor(item.resource.uri)}]`);
    } else if (item.type === 'resource_link') lines.push(`[resource ${textFor(item.uri)}]`);
    else if (item.type === 'image' || item.type === 'audio') lines.push(`[${item.type} ${textFor(item.mimeType)}]`);
  }
  return lines.join('\n');
}

/**
 * The value a tool call gives a plan: the structured content as a JSON value when the tool
 * returned some, otherwise the text content. `isError` is `{ error: text }`.
 */
export function toolResultValue(result: McpToolResult): { ok: true; value: unknown } | { ok: false; error: string } {
  if (result.isError === true) {
    const text = resultText(result);
    return { ok: false, error: text !== '' ? text : 'the tool reported an error without a message' };
  }
  if (isObject(result.structuredContent)) return { ok: true, value: jsonValue(result.structuredContent) };
  if (result.toolResult !== undefined && result.content === undefined) return { ok: true, value: result.toolResult };
  return { ok: true, value: resultText(result) };
}

/**
 * A structured result as a plan value: the JSON object itself (a later tool gets it as its
 * arguments object, `JSON.stringify` gives it back), whose text form (what `assign`, `--json` and
 * the editor show) is its JSON rather than `[object Object]`.
 */
export function jsonValue(object: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...object };
  Object.defineProperty(copy, 'toString', { value: () => JSON.stringify(copy), enumerable: false });
  return copy;
}
