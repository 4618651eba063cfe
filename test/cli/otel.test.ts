// OpenTelemetry traces of `lightsop run` and `lightsop chat` (issue 15 item 5, docs/tracing.md):
// a receiver started here on 127.0.0.1 gets the spans over OTLP/HTTP (JSON) and the test decodes
// them: a run span, one span per command under it, one span per model call with the GenAI
// attributes and the reported usage, parents and trace ids that tie them together, and no secret.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, lightsopAsync, repoRoot, tempTree } from '../helpers/cli';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver';

const registryModule = `
export default {
  listCommands: () => [{ name: 'emit', description: 'first argument' }, { name: 'failer', description: 'fails' }, { name: 'final_answer', description: 'the answer' }],
  async executeCommand(p, r) {
    if (p.command === 'emit' || p.command === 'final_answer') return r.success(p.args[0]);
    if (p.command === 'failer') return r.fail('oops ' + (p.args[0] ?? ''));
    throw new Error('unknown command ' + p.command);
  },
};`;

const HEADER_SECRET = 'otlp-header-secret-7731';
const API_KEY = 'sk-otel-test-key-5150';

let receiver: OtlpReceiver | null = null;
let llm: LlmServer | null = null;
afterEach(async () => {
  await receiver?.close();
  await llm?.close();
  receiver = null;
  llm = null;
});

function only(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found.map((s) => s.name)).toEqual([name]);
  return found[0]!;
}

describe('traces of lightsop run over OTLP/HTTP', () => {
  beforeAll(() => ensureBuilt());

  it('a run span with one child span per command: names, attributes, statuses and parents', async () => {
    receiver = await startOtlpReceiver();
    const dir = tempTree({ 'skills.mjs': registryModule, 'p.sop': `@a emit hello\n@b emit "${API_KEY}"\n@c failer $a\n` });
    const res = await lightsopAsync(['run', 'p.sop', '--skills', 'skills.mjs', '--json'], {
      cwd: dir,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${HEADER_SECRET}`, LIGHTSOP_LLM_API_KEY: API_KEY },
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('');
    // The run printed what it printed before: no key was added for a plain plan.
    expect(Object.keys(JSON.parse(res.stdout))).toEqual(['variables', 'failures', 'commands']);

    const run = only(receiver.spans, 'lightsop run');
    expect(run.parentSpanId).toBe('');
    expect(run.attributes).toMatchObject({ 'lightsop.plan': 'p.sop', 'lightsop.plan.english': false, 'lightsop.exit_code': 1 });
    expect(run.statusCode).toBe(2);
    expect(run.resource['service.name']).toBe('lightsop');

    const commands = receiver.spans.filter((s) => s.name.startsWith('command '));
    expect(commands.map((s) => s.attributes['lightsop.declaration']).sort()).toEqual(['a', 'b', 'c']);
    for (const s of commands) {
      expect(s.parentSpanId).toBe(run.spanId);
      expect(s.traceId).toBe(run.traceId);
      expect(s.startNs >= run.startNs && s.endNs <= run.endNs).toBe(true);
    }
    const a = commands.find((s) => s.attributes['lightsop.declaration'] === 'a')!;
    expect(a.name).toBe('command emit');
    expect(a.attributes).toMatchObject({ 'lightsop.command': 'emit', 'lightsop.command.text': 'emit hello', 'lightsop.line': 1, 'lightsop.status': 'success' });
    expect(a.statusCode).toBe(1);
    const c = commands.find((s) => s.attributes['lightsop.declaration'] === 'c')!;
    expect(c.attributes['lightsop.status']).toBe('fail');
    expect(c.statusCode).toBe(2);
    expect(c.statusMessage).toBe('oops hello');

    // The header reached the receiver; no secret is in a span, and none was printed.
    expect(receiver.headers[0]!.authorization).toBe(`Bearer ${HEADER_SECRET}`);
    const b = commands.find((s) => s.attributes['lightsop.declaration'] === 'b')!;
    expect(String(b.attributes['lightsop.command.text'])).not.toContain(API_KEY);
    for (const body of receiver.bodies) {
      expect(body).not.toContain(API_KEY);
      expect(body).not.toContain(HEADER_SECRET);
    }
    expect(res.stdout + res.stderr).not.toContain(HEADER_SECRET);
  }, 60_000);

  it('an #!english run: model-call spans with the GenAI attributes and the usage the provider reported', async () => {
    receiver = await startOtlpReceiver();
    let call = 0;
    // The first plan fails, the revision succeeds: two model calls.
    llm = await startLlmServer(() => (++call === 1
      ? { text: '@a failer x\n@lastAnswer final_answer $a', usage: { inputTokens: 120, outputTokens: 30 } }
      : { text: '@a emit fixed\n@lastAnswer final_answer $a', usage: { inputTokens: 200, outputTokens: 25 } }));
    const dir = tempTree({ 'skills.mjs': registryModule, 'e.sop': '#!english\nSay something.\n' });
    const res = await lightsopAsync(['run', 'e.sop', '--skills', 'skills.mjs', '--json', '--llm-base-url', llm.url, '--llm-model', 'scripted-model', '--otel'], {
      cwd: dir,
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, LIGHTSOP_LLM_API_KEY: API_KEY },
    });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { usage: unknown };
    expect(out.usage).toEqual({ inputTokens: 320, outputTokens: 55, totalTokens: 375, maxTokens: null, exhausted: false });

    const run = only(receiver.spans, 'lightsop run');
    expect(run.attributes).toMatchObject({ 'lightsop.plan.english': true, 'lightsop.exit_code': 0, 'gen_ai.usage.input_tokens': 320, 'gen_ai.usage.output_tokens': 55 });
    const calls = receiver.spans.filter((s) => s.name === 'chat scripted-model').sort((x, y) => (x.startNs < y.startNs ? -1 : 1));
    expect(calls).toHaveLength(2);
    for (const s of calls) {
      expect(s.parentSpanId).toBe(run.spanId);
      expect(s.traceId).toBe(run.traceId);
      expect(s.kind).toBe(3); // CLIENT
      expect(s.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'scripted-model', 'gen_ai.response.model': 'scripted-model' });
    }
    expect(calls.map((s) => [s.attributes['gen_ai.usage.input_tokens'], s.attributes['gen_ai.usage.output_tokens']])).toEqual([[120, 30], [200, 25]]);
    // The commands of both plans are children of the run (the first plan's final_answer never ran).
    const commands = receiver.spans.filter((s) => s.name.startsWith('command '));
    expect(commands.map((s) => s.name).sort()).toEqual(['command emit', 'command failer', 'command final_answer']);
    for (const s of commands) expect(s.parentSpanId).toBe(run.spanId);
    const failer = only(receiver.spans, 'command failer');
    expect(failer.startNs >= calls[0]!.endNs && failer.endNs <= calls[1]!.startNs).toBe(true);
    for (const body of receiver.bodies) expect(body).not.toContain(API_KEY);
  }, 60_000);

  it('lightsop chat: a session span, a span per turn, and the turn\'s model calls and plan steps under it', async () => {
    receiver = await startOtlpReceiver();
    llm = await startLlmServer(() => ({ text: '@greeting assign "hi"\n@lastAnswer final_answer $greeting', usage: { inputTokens: 40, outputTokens: 9 } }));
    const res = await lightsopAsync(['chat', '--json', '--no-stdlib'], {
      input: 'one\ntwo\n',
      cwd: tempTree({}),
      env: { LIGHTSOP_LLM_BASE_URL: llm.url, LIGHTSOP_LLM_MODEL: 'm', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    expect(res.code, res.stderr).toBe(0);
    const session = only(receiver.spans, 'lightsop chat');
    expect(session.parentSpanId).toBe('');
    expect(session.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 80, 'gen_ai.usage.output_tokens': 18 });
    const turns = receiver.spans.filter((s) => s.name === 'chat turn');
    expect(turns).toHaveLength(2);
    for (const turn of turns) {
      expect(turn.parentSpanId).toBe(session.spanId);
      expect(turn.attributes['lightsop.turn.status']).toBe('answered');
      const children = receiver.spans.filter((s) => s.parentSpanId === turn.spanId);
      expect(children.map((s) => s.name).sort()).toEqual(['chat m', 'command assign', 'command final_answer']);
      expect(children.find((s) => s.name === 'chat m')!.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 40, 'gen_ai.usage.output_tokens': 9 });
    }
  }, 60_000);

  it('a run stopped by Ctrl-C twice still exports its spans before the process exits', async () => {
    receiver = await startOtlpReceiver();
    const skills = `export default { hang: { description: 'never ends', run: () => { process.stderr.write('started\\n'); return new Promise((r) => setTimeout(r, 2 ** 31 - 1)); } } };`;
    const dir = tempTree({ 'skills.mjs': skills, 'p.sop': '@a assign x\n@b hang $a\n' });
    const child = spawn(process.execPath, [path.join(repoRoot, 'packages/cli/bin/lightsop.js'), 'run', 'p.sop', '--skills', 'skills.mjs', '--grace', '10m'], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (d.includes('started')) child.kill('SIGINT');
      if (d.includes('Ctrl-C again')) child.kill('SIGINT');
    });
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(130);
    const run = only(receiver.spans, 'lightsop run');
    expect(run.statusCode).toBe(2);
    expect(run.statusMessage).toBe('interrupted');
    const hang = only(receiver.spans, 'command hang');
    expect(hang.parentSpanId).toBe(run.spanId);
    expect(hang.attributes['lightsop.status']).toBe('canceled');
  }, 60_000);

  it('an endpoint that does not answer delays the exit by a bounded wait and is a warning, never a failure', async () => {
    // A receiver that accepts the connection and never answers.
    const { createServer } = await import('node:net');
    const sockets: import('node:net').Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as import('node:net').AddressInfo).port;
    try {
      const dir = tempTree({ 'p.sop': '@a assign x\n' });
      const res = await lightsopAsync(['run', 'p.sop', '--json'], { cwd: dir, env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_HEADERS: `x-api-key=${HEADER_SECRET}` } });
      expect(res.code).toBe(0);
      expect(JSON.parse(res.stdout).variables.a.status).toBe('success');
      expect(res.stderr).toMatch(/^lightsop: warning: (traces were not all exported to|could not export traces to) http:\/\/127\.0\.0\.1:\d+\/v1\/traces/);
      expect(res.stderr).not.toContain(HEADER_SECRET);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  }, 60_000);

  it('OTEL_SDK_DISABLED=true turns traces off even with an endpoint', async () => {
    receiver = await startOtlpReceiver();
    const dir = tempTree({ 'p.sop': '@a assign x\n' });
    const res = await lightsopAsync(['run', 'p.sop'], { cwd: dir, env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true' } });
    expect(res.code).toBe(0);
    expect(receiver.spans).toEqual([]);
    expect(existsSync(dir)).toBe(true);
  }, 60_000);
});
