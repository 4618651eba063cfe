// The command surface (issue 12 item 1): what a command is, read by core once for every host, and
// the reserved names defined in one place.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ASSIGN, BUILTIN_COMMANDS, CommandSurface, FINAL_COMMANDS, RESERVED_NAMES, analyzePlan, builtinCommand, isReservedName,
  readDescriptionCommands, readRegistryCommands, readSkillsMapCommands,
} from '@lightsop/core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Every TypeScript source file of the packages and the extension. */
function sources(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(full);
      } else if (entry.name.endsWith('.ts')) out.push(full);
    }
  };
  for (const pkg of readdirSync(path.join(root, 'packages'))) walk(path.join(root, 'packages', pkg, 'src'));
  walk(path.join(root, 'extension/src'));
  return out;
}

describe('the reserved names', () => {
  it('are written as string literals in one file only: core defines them, every other module uses the constants', () => {
    const literal = /['"](final_answer|cannot_complete|clarify_context)['"]/;
    const files = sources().filter((f) => literal.test(readFileSync(f, 'utf8'))).map((f) => path.relative(root, f));
    expect(files).toEqual(['packages/core/src/commands/surface.ts']);
  });

  it('the built-ins are assign and the final commands; the sessions also reserve clarify_context', () => {
    expect(BUILTIN_COMMANDS).toEqual([ASSIGN, ...FINAL_COMMANDS]);
    expect(RESERVED_NAMES.every(isReservedName)).toBe(true);
    expect(isReservedName(ASSIGN)).toBe(false);
    expect(builtinCommand('final_answer')).toMatchObject({ reserved: true, sideEffects: false, source: { kind: 'reserved' } });
    expect(builtinCommand('assign')).toMatchObject({ reserved: false, source: { kind: 'builtin' } });
  });
});

describe('reading commands', () => {
  it('a registry: name, else command; description; parameters and sideEffects when given; first entry wins', () => {
    const hostile = { get name(): string { throw new Error('getter'); } };
    const registry = {
      listCommands: () => [
        { name: 'greet', description: 'Greets', sideEffects: false, parameters: ['who', { name: 'how', description: 'tone', required: false }, 7, { nope: 1 }] },
        { name: '', command: 'fetch', description: 'Fetches', sideEffects: true },
        { command: 'legacy' },
        hostile,
        null,
        42,
        { name: '   ', description: 'blank' },
        { name: 'greet', description: 'a repeat' },
        { name: 'final_answer', description: 'mine', source: { kind: 'mcp', name: 'server' } },
      ],
    };
    expect(readRegistryCommands(registry, { kind: 'registry', name: 'skills.mjs' })).toEqual([
      {
        name: 'greet', description: 'Greets', sideEffects: false, reserved: false, source: { kind: 'registry', name: 'skills.mjs' },
        parameters: [{ name: 'who' }, { name: 'how', description: 'tone', required: false }],
      },
      { name: 'fetch', description: 'Fetches', sideEffects: true, reserved: false, source: { kind: 'registry', name: 'skills.mjs' } },
      { name: 'legacy', description: '', reserved: false, source: { kind: 'registry', name: 'skills.mjs' } },
      { name: 'final_answer', description: 'mine', reserved: true, source: { kind: 'mcp', name: 'server' } },
    ]);
  });

  it('a listing that throws, is not an array, or breaks while iterating gives what could be read', () => {
    expect(readRegistryCommands({ listCommands: () => { throw new Error('no'); } })).toEqual([]);
    expect(readRegistryCommands({ listCommands: () => ({ name: 'x' }) })).toEqual([]);
    const broken = [{ name: 'a' }, { name: 'b' }];
    Object.defineProperty(broken, 1, { get: () => { throw new Error('boom'); } });
    expect(readRegistryCommands({ listCommands: () => broken }).map((c) => c.name)).toEqual(['a']);
  });

  it('a skills map and a description read the same facts', () => {
    const map = { greet: { description: 'Greets', sideEffects: false, parameters: ['who'], run: () => 'hi' }, shout: { run: () => 'HI' } };
    expect(readSkillsMapCommands(map)).toEqual([
      { name: 'greet', description: 'Greets', sideEffects: false, parameters: [{ name: 'who' }], reserved: false, source: { kind: 'skills-map' } },
      { name: 'shout', description: '', reserved: false, source: { kind: 'skills-map' } },
    ]);
    expect(readDescriptionCommands({ greet: 'Greets', cannot_complete: 'x' })).toEqual([
      { name: 'greet', description: 'Greets', reserved: false, source: { kind: 'description' } },
      { name: 'cannot_complete', description: 'x', reserved: true, source: { kind: 'description' } },
    ]);
  });

  it('a surface: the first listing that names a command provides it; lookups are by exact own name', () => {
    const surface = new CommandSurface([readDescriptionCommands({ a: 'first', b: 'b' }), readDescriptionCommands({ a: 'second', c: 'c' })]);
    expect(surface.names).toEqual(['a', 'b', 'c']);
    expect(surface.get('a')!.description).toBe('first');
    expect(surface.has('__proto__')).toBe(false);
    expect(surface.has('toString')).toBe(false);
    expect(surface.describe()).toEqual({ a: 'first', b: 'b', c: 'c' });
    expect(CommandSurface.fromDescription({ final_answer: 'x', a: 'y' }).withoutReserved().names).toEqual(['a']);
    expect(surface.sameAs(new CommandSurface([readDescriptionCommands({ a: 'first', b: 'b', c: 'c' })]))).toBe(true);
    expect(surface.sameAs(CommandSurface.fromDescription({ a: 'first', b: 'b', c: 'changed' }))).toBe(false);
  });

  it('the validator checks unknown commands against a surface, with the built-ins always known', () => {
    const commands = CommandSurface.fromDescription({ fetch: 'Fetches' });
    const plan = '@a fetch x\n@b fetchh $a\n@c assign $b\n@lastAnswer final_answer $c\n';
    const unknown = analyzePlan(plan, { commands }).diagnostics.filter((d) => d.code === 'unknown-command');
    expect(unknown.map((d) => d.message)).toEqual(["Unknown command 'fetchh': it is not in the skills description. Did you mean 'fetch'?"]);
    expect(analyzePlan(plan, { skills: { fetch: 'Fetches' } }).diagnostics).toEqual(analyzePlan(plan, { commands }).diagnostics);
  });
});
