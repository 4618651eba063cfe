// One command surface (issue 12 item 1): the interpreter's `#!english` prompt, the validator, both
// session kinds and the combined registries of the standard skills see the same commands of one
// registry, however oddly it lists them.
import { describe, expect, it } from 'vitest';
import { CommandSurface, analyzePlan } from '@lightsop/core';
import { Interpreter, type CommandRegistry, type LlmAgent } from '@lightsop/runtime';
import { LoopSession, SopSession, combineRegistries, sessionCommands, toolsFromRegistry } from '@lightsop/sessions';
import { stubAgent } from './helpers';

/** A registry that lists its commands in every form the protocol allows, and some it does not. */
function oddRegistry(): CommandRegistry {
  const throwing = { get name(): string { throw new Error('a hostile getter'); } };
  return {
    listCommands: () => [
      { name: 'greet', description: 'Greets someone', sideEffects: false },
      { name: '', command: 'fetch', description: 'Fetches a page' },
      { command: 'legacy', description: 'Old style entry' },
      throwing,
      { name: 'greet', description: 'a repeat' },
      null,
      { name: 'final_answer', description: 'the module has its own' },
    ],
    executeCommand: (payload, responder) => responder.success(`${payload.command} ran`),
  };
}

const USER = ['greet', 'fetch', 'legacy'];

describe('one command surface for every host', () => {
  it('core reads the commands once: the user commands and the reserved name the registry lists', () => {
    expect(CommandSurface.fromRegistry(oddRegistry()).names).toEqual([...USER, 'final_answer']);
    expect(sessionCommands(oddRegistry()).names).toEqual(USER);
  });

  it('the #!english prompt lists the same commands, and the generated plan is checked against them', async () => {
    const prompts: string[] = [];
    const agent: LlmAgent = {
      async executePrompt(prompt: string) {
        prompts.push(prompt);
        return '@a greet x\n@b fetch $a\n@c legacy $b\n@lastAnswer final_answer $c';
      },
    };
    const interpreter = new Interpreter({ registry: oddRegistry(), llmAgent: agent });
    await interpreter.updateCode('#!english\nGreet, fetch and answer.');
    const listed = prompts[0]!.split('Commands:\n')[1]!.split('\n').filter((l) => l.startsWith('- ')).map((l) => l.slice(2, l.indexOf(':')));
    expect(listed).toEqual([...USER, 'final_answer']);
    expect(interpreter.getVarValue('c')).toBe('legacy ran');
  });

  it('the combined registries of the standard skills list the same commands and run each with its owner', async () => {
    const combined = combineRegistries(oddRegistry(), { listCommands: () => [{ name: 'greet', description: 'shadowed' }, { name: 'other', description: 'o' }], executeCommand: (_p, r) => r.success('second') });
    expect(CommandSurface.fromRegistry(combined).names).toEqual([...USER, 'final_answer', 'other']);
    expect(CommandSurface.fromRegistry(combined).get('greet')!.description).toBe('Greets someone');
    const interpreter = new Interpreter({ registry: combined });
    await interpreter.updateCode('@a legacy\n@b other\n');
    expect([interpreter.getVarValue('a'), interpreter.getVarValue('b')]).toEqual(['legacy ran', 'second']);
  });

  it('a SOP session allows and describes the same commands, with the reserved ones its own', async () => {
    const registry = oddRegistry();
    const session = new SopSession({ agent: stubAgent({ plans: ['@a legacy\n@lastAnswer final_answer $a'] }), skillsDescription: sessionCommands(registry).describe(), commandsRegistry: registry });
    expect(CommandSurface.fromRegistry(session.commandsRegistry!).names).toEqual([...USER, 'final_answer', 'cannot_complete']);
    expect(CommandSurface.fromRegistry(session.commandsRegistry!).get('final_answer')!.description).not.toBe('the module has its own');
    const result = await session.newPrompt('run legacy');
    expect(result).toMatchObject({ kind: 'answered', answer: 'legacy ran' });
  });

  it('a loop session gets one tool per user command, and the reserved tools of its own', () => {
    const tools = toolsFromRegistry(oddRegistry());
    expect(Object.keys(tools)).toEqual(USER);
    const session = new LoopSession({ agent: stubAgent(), tools });
    expect(Object.keys(session.tools)).toEqual([...USER, 'final_answer', 'cannot_complete']);
  });

  it('the validator knows the same commands', () => {
    const commands = CommandSurface.fromRegistry(oddRegistry());
    const unknown = analyzePlan('@a greet\n@b fetch\n@c legacy\n@d nope\n', { commands }).diagnostics.filter((d) => d.code === 'unknown-command');
    expect(unknown.map((d) => (d.data as { name: string }).name)).toEqual(['nope']);
  });
});
