// Sessions against a scripted OpenAI-compatible Chat Completions server on 127.0.0.1: real HTTP
// and the real client (retries, streaming, abort), as the issue's "done means" lists them.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiCompatibleAgent } from '@lightsop/runtime';
import {
  LoopSession, SopSession, approveAllSupervisor, createSessionAgent, createStandardSkills, toolsFromRegistry, type SessionCommandPayload,
} from '@lightsop/sessions';
import { startLlmServer, type ChatRequest, type LlmServer } from '../helpers/llm-server';
import { testRegistry } from '../helpers/registry';
import { alive, recordingSupervisor, tempDir, waitFor } from './helpers';

let server: LlmServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const system = (r: ChatRequest) => r.messages[0]!;
const agentFor = (s: LlmServer, extra: Partial<ConstructorParameters<typeof OpenAiCompatibleAgent>[0]> = {}) =>
  createSessionAgent(new OpenAiCompatibleAgent({ baseUrl: s.url, model: 'test-model', apiKey: 'sk-test-secret', maxRetries: 2, ...extra }));
const md = (tool: string, prompt: string, reason = '') => `## tool\n${tool}\n## prompt\n${prompt}${reason ? `\n## reason\n${reason}` : ''}`;

describe('sessions over HTTP', () => {
  it('a request is planned and answered; history is role-separated; the key is in no request body', async () => {
    server = await startLlmServer((req) => {
      return req.messages.at(-1)!.content === 'Say hello to Ada' ? '```sop\n# Greet the user\n@g emit "Hello, Ada!"\n@lastAnswer final_answer $g\n```' : '@lastAnswer final_answer "Bye"';
    });
    const origin = server;
    const session = new SopSession({ agent: agentFor(origin), skillsDescription: { emit: 'emit TEXT' }, commandsRegistry: testRegistry() });
    const first = await session.newPrompt('Say hello to Ada');
    expect(first).toMatchObject({ kind: 'answered', answer: 'Hello, Ada!' });
    await session.newPrompt('Now say bye');
    const second = origin.requests[1]!;
    expect(second.model).toBe('test-model');
    expect(second.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(system(second).content).not.toContain('Now say bye');
    expect(second.messages[2]!.content).toBe('# Greet the user\n@g emit "Hello, Ada!"\n@lastAnswer final_answer $g');
    expect(JSON.stringify(origin.requests)).not.toContain('sk-test-secret');
  });

  it('an invalid plan is regenerated and only the valid plan runs', async () => {
    server = await startLlmServer((_req, i) => (i === 0 ? '@a emit $undefined_thing\n@lastAnswer final_answer $a' : '@a emit fixed\n@lastAnswer final_answer $a'));
    const registry = testRegistry();
    const session = new SopSession({ agent: agentFor(server), skillsDescription: { emit: 'emit TEXT' }, commandsRegistry: registry });
    const result = await session.newPrompt('do it');
    expect(result).toMatchObject({ kind: 'answered', answer: 'fixed' });
    expect(server.requests).toHaveLength(2);
    expect(system(server.requests[1]!).content).toContain('- a: plan-error:');
    expect(registry.log).toEqual(['emit fixed']);
  });

  it('a failing step is replanned within the limit, and the budget is never exceeded', async () => {
    server = await startLlmServer(() => '@x failer\n@lastAnswer final_answer $x');
    const session = new SopSession({ agent: agentFor(server), skillsDescription: { failer: 'fails' }, commandsRegistry: testRegistry(), options: { maxPlanAttempts: 2 } });
    const result = await session.newPrompt('try');
    expect(result).toMatchObject({ kind: 'failed', reason: 'execution_failed', attempts: 2 });
    expect(server.requests).toHaveLength(2);
    expect(system(server.requests[1]!).content).toContain('Failed variables:\n- x: oops');
    const recover = await startLlmServer((_r, i) => (i === 0 ? '@x failer\n@lastAnswer final_answer $x' : '@x emit recovered\n@lastAnswer final_answer $x'));
    const ok = new SopSession({ agent: agentFor(recover), skillsDescription: { failer: 'fails', emit: 'emit' }, commandsRegistry: testRegistry() });
    expect(await ok.newPrompt('try')).toMatchObject({ kind: 'answered', answer: 'recovered' });
    await recover.close();
  });

  it('a pending command is resumed by the next prompt without another model call', async () => {
    server = await startLlmServer(() => '@c confirm_delete report.txt\n@lastAnswer final_answer $c');
    const registry = testRegistry({
      confirm_delete: (p, r) => ((p as SessionCommandPayload).resume ? r.success(`deleted (user said: ${p.args[0]})`) : r.success({ requiresConfirmation: true, message: `Delete ${p.args[0]}?` })),
    });
    const session = new SopSession({ agent: agentFor(server), skillsDescription: { confirm_delete: 'asks, then deletes' }, commandsRegistry: registry });
    expect(await session.newPrompt('delete the report')).toMatchObject({ kind: 'awaiting_input', answer: 'Delete report.txt?' });
    expect(await session.newPrompt('yes, go ahead')).toMatchObject({ kind: 'answered', answer: 'deleted (user said: yes, go ahead)' });
    expect(server.requests).toHaveLength(1);
  });

  it('a loop session call denied by the supervisor is recorded and the model sees the denial', async () => {
    server = await startLlmServer((_req, i) => (i === 0 ? md('run_shell', 'rm -rf build', 'clean the build') : md('final_answer', 'I was not allowed to clean the build.')));
    const dir = tempDir({ 'build/out.txt': 'artifact' });
    const supervisor = recordingSupervisor(() => ({ decision: 'deny', reason: 'deleting is not allowed' }));
    const session = new LoopSession({ agent: agentFor(server), tools: toolsFromRegistry(createStandardSkills({ root: dir })), options: { supervisor, projectRoot: dir } });
    const result = await session.newPrompt('clean the build folder');
    expect(result).toMatchObject({ kind: 'answer', answer: 'I was not allowed to clean the build.' });
    expect(supervisor.choices[0]).toMatchObject({ toolName: 'run_shell', params: 'rm -rf build', origin: 'loop', reason: 'clean the build', sideEffects: true });
    expect(system(server.requests[1]!).content).toContain('Denied before execution: tool "run_shell" was not run.');
    expect(system(server.requests[1]!).content).toContain('Reason: deleting is not allowed');
    expect(existsSync(`${dir}/build/out.txt`)).toBe(true);
  });

  it('an interrupt in the middle of a slow tool settles the prompt as interrupted and kills the tool', async () => {
    // The tool writes its pid (exec keeps it) and sleeps; the test interrupts once the pid is there.
    server = await startLlmServer((_req, i) => (i === 0 ? md('run_shell', 'echo $$ > tool.pid; exec sleep 30') : md('final_answer', 'back again')));
    const dir = tempDir({});
    const session = new LoopSession({ agent: agentFor(server), tools: toolsFromRegistry(createStandardSkills({ root: dir })), options: { supervisor: approveAllSupervisor, projectRoot: dir } });
    const pidFile = path.join(dir, 'tool.pid');
    const controller = new AbortController();
    const pending = session.newPrompt('wait a while', { signal: controller.signal });
    await waitFor(() => existsSync(pidFile) && /^\d+\n$/.test(readFileSync(pidFile, 'utf8')), 15000, 'the tool to start');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    controller.abort('esc');
    const result = await pending;
    expect(result).toMatchObject({ kind: 'interrupted', answer: 'Interrupted by user' });
    await waitFor(() => !alive(pid), 15000, 'the tool process to be killed');
    expect(session.status).toBe('interrupted');
    expect(await session.newPrompt('hi')).toMatchObject({ kind: 'answer', answer: 'back again' });
    expect(session.status).toBe('active');
  });

  it('an interrupt during a slow model reply aborts the HTTP request', async () => {
    server = await startLlmServer(() => ({ hold: true }));
    const session = new LoopSession({ agent: agentFor(server), tools: {} });
    const controller = new AbortController();
    const pending = session.newPrompt('hello', { signal: controller.signal });
    await waitFor(() => server!.requests.length === 1, 10000, 'the request');
    controller.abort('esc');
    expect((await pending).kind).toBe('interrupted');
    await waitFor(() => server!.aborted.includes(0), 15000, 'the request to be closed');
  });

  it('history compression goes through the provider with the compression model', async () => {
    server = await startLlmServer((req) => {
      const last = req.messages.at(-1)!.content;
      if (last.startsWith('Summarise the older part')) return '## summary\nThe user greeted the agent many times.\n## keepResultRefs\n';
      return md('final_answer', 'hello again');
    });
    const initialHistory = Array.from({ length: 20 }, (_, i) => ({ role: i % 2 ? 'assistant' as const : 'user' as const, message: `turn ${i} ${'words '.repeat(30)}` }));
    const session = new LoopSession({
      agent: agentFor(server), tools: {},
      options: { initialHistory, historyCompressionThresholdTokens: 200, historyCompressionKeepRecentEntries: 2, historyCompressionModel: 'cheap-model' },
    });
    const result = await session.newPrompt('hello');
    expect(result.answer).toBe('hello again');
    expect(server.requests[0]!.model).toBe('cheap-model');
    expect(server.requests[1]!.model).toBe('test-model');
    expect(session.history[0]).toMatchObject({ type: 'history_summary', summary: 'The user greeted the agent many times.', compressedFromCount: 18 });
    expect(server.requests[1]!.messages[0]!.content).toContain('summary of 18 earlier entries');
  });

  it('429 and 5xx responses are retried with backoff; streaming delivers tokens', async () => {
    server = await startLlmServer((_req, i) => (i === 0 ? { status: 429, text: 'slow down' } : i === 1 ? { status: 503 } : '@lastAnswer final_answer "third time"'));
    const tokens: string[] = [];
    const agent = agentFor(server, { onToken: (t) => tokens.push(t) });
    const session = new SopSession({ agent, skillsDescription: {}, commandsRegistry: testRegistry() });
    expect(await session.newPrompt('go')).toMatchObject({ kind: 'answered', answer: 'third time' });
    expect(server.requests).toHaveLength(3);
    expect(server.requests[2]!.stream).toBe(true);
    expect(tokens.join('')).toBe('@lastAnswer final_answer "third time"');
  });
});
