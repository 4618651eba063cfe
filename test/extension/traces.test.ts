/**
 * Run Plan exports OpenTelemetry traces like `lightsop run` (docs/tracing.md): the extension's
 * PlanRunner, driven through a stand-in for the vscode API, runs a plan with a real skills module
 * and sends its spans, through the built dist/otel.cjs, to a real OTLP receiver. Nothing of
 * OpenTelemetry is in the extension's bundle, nothing is loaded when traces are off, and an
 * untrusted workspace's settings cannot turn them on.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ensureBuilt, repoRoot, tempTree } from '../helpers/cli';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver';
import { waitFor } from '../helpers/sync';

const API_KEY = 'sk-extension-trace-secret-0123456789';
const HEADER_SECRET = 'otlp-header-secret-9876543210';

// The parts of the vscode API the runner uses.
const fake = vi.hoisted(() => {
  const state = {
    trusted: true,
    folder: '',
    settings: {} as Record<string, unknown>,
    globalSettings: {} as Record<string, unknown>,
    messages: [] as string[],
  };
  class EventEmitter {
    listeners: ((e: unknown) => void)[] = [];
    event = (listener: (e: unknown) => void) => {
      this.listeners.push(listener);
      return { dispose() {} };
    };
    fire(e: unknown) {
      for (const l of this.listeners) l(e);
    }
    dispose() {}
  }
  const message = (text: string) => {
    state.messages.push(text);
    return Promise.resolve(undefined);
  };
  const vscode = {
    EventEmitter,
    ProgressLocation: { Notification: 15 },
    window: {
      withProgress: (_o: unknown, task: (progress: unknown, token: unknown) => Promise<unknown>) =>
        task({ report() {} }, { onCancellationRequested: () => ({ dispose() {} }) }),
      showInformationMessage: message,
      showWarningMessage: message,
      showErrorMessage: message,
    },
    commands: { executeCommand: () => Promise.resolve(undefined) },
    workspace: {
      get isTrusted() {
        return state.trusted;
      },
      getWorkspaceFolder: () => ({ uri: { fsPath: state.folder, scheme: 'file' } }),
      getConfiguration: () => ({
        get: (key: string) => state.settings[key] ?? state.globalSettings[key],
        inspect: (key: string) => ({ globalValue: state.globalSettings[key], workspaceValue: state.settings[key] }),
      }),
    },
  };
  return { state, vscode };
});
vi.mock('vscode', () => fake.vscode);

const SKILLS = `export default {
  shout: { description: 'upper case', run([text]) { return String(text).toUpperCase(); } },
  explode: { description: 'fails', run() { throw new Error('exploded with ${API_KEY}'); } },
};
`;
const PLAN = '@a assign hello\n@b shout $a\n@c explode $b\n';

let receiver: OtlpReceiver | null = null;
let folder: string;

beforeAll(() => {
  ensureBuilt();
  folder = tempTree({ 'skills.mjs': SKILLS, 'lightsop.config.json': '{ "skills": "skills.mjs" }\n', 'plan.sop': PLAN });
  fake.state.folder = folder;
});

afterEach(async () => {
  await receiver?.close();
  receiver = null;
  fake.state.trusted = true;
  fake.state.settings = {};
  fake.state.globalSettings = {};
  fake.state.messages.length = 0;
  vi.unstubAllEnvs();
});

afterAll(() => vi.unstubAllEnvs());

function only(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found, `spans named ${name}: ${spans.map((s) => s.name).join(', ')}`).toHaveLength(1);
  return found[0]!;
}

async function runner(load: () => Promise<{ createOtelTracing: unknown }>) {
  const { PlanRunner } = await import('../../extension/src/run/runner');
  const { ResultsStore } = await import('../../extension/src/run/results');
  const lines: string[] = [];
  const output = { appendLine: (l: string) => lines.push(l), show() {} };
  const secrets = { get: () => Promise.resolve(API_KEY) };
  const facts = { outline: () => Promise.resolve(null) };
  const planRunner = new PlanRunner(secrets as never, new ResultsStore(), output as never, facts as never, load as never, '9.9.9');
  const file = path.join(folder, 'plan.sop');
  const doc = { uri: { toString: () => `file://${file}`, fsPath: file, path: file, scheme: 'file' }, getText: () => readFileSync(file, 'utf8') };
  return { run: () => planRunner.run(doc as never), lines };
}

describe('Run Plan traces', () => {
  it('exports the run, its commands and their statuses through dist/otel.cjs, with no secret in a span', async () => {
    receiver = await startOtlpReceiver();
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', receiver.url);
    vi.stubEnv('OTEL_EXPORTER_OTLP_HEADERS', `Authorization=Bearer%20${HEADER_SECRET}`);
    const { loadBundledOtel } = await import('../../extension/src/run/traces');
    const { run, lines } = await runner(loadBundledOtel(path.join(repoRoot, 'extension/dist')));
    const outcome = await run();
    expect(outcome.ran, lines.join('\n')).toBe(true);
    expect(outcome.counts).toMatchObject({ success: 2, fail: 1 });
    const spans = receiver.spans;
    await waitFor('the run span', () => spans.some((s) => s.name === 'lightsop run'));
    const root = only(spans, 'lightsop run');
    expect(root.parentSpanId).toBe('');
    expect(root.attributes['lightsop.plan']).toBe('plan.sop');
    expect(root.statusCode).toBe(2);
    const commands = spans.filter((s) => s.name.startsWith('command '));
    expect(commands.map((s) => s.attributes['lightsop.declaration']).sort()).toEqual(['a', 'b', 'c']);
    for (const c of commands) expect(c.parentSpanId).toBe(root.spanId);
    const failed = only(spans, 'command explode');
    expect(failed.statusCode).toBe(2);
    expect(failed.statusMessage).toMatch(/exploded with \*\*\*/);
    expect(only(spans, 'command shout').attributes['lightsop.status']).toBe('success');
    expect(receiver.headers[0]!.authorization).toBe(`Bearer ${HEADER_SECRET}`);
    for (const body of receiver.bodies) {
      expect(body).not.toContain(API_KEY);
      expect(body).not.toContain(HEADER_SECRET);
    }
  }, 60_000);

  it('the lightsop.run.otel setting turns them on without the variables; a failed export is a warning, not a failed run', async () => {
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', '');
    vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', '');
    vi.stubEnv('OTEL_EXPORTER_OTLP_TIMEOUT', '200');
    const { loadBundledOtel } = await import('../../extension/src/run/traces');
    const real = loadBundledOtel(path.join(repoRoot, 'extension/dist'));
    let loaded = 0;
    fake.state.settings = { 'run.otel': true };
    const { run, lines } = await runner(() => {
      loaded++;
      return real();
    });
    const outcome = await run();
    expect(outcome.ran, lines.join('\n')).toBe(true);
    expect(loaded).toBe(1);
  }, 60_000);

  it('loads nothing when traces are off, and an untrusted workspace setting cannot turn them on', async () => {
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', '');
    vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', '');
    let loaded = 0;
    const load = () => {
      loaded++;
      return Promise.reject(new Error('must not load'));
    };
    const off = await runner(load);
    await off.run();
    expect(loaded).toBe(0);
    fake.state.trusted = false;
    fake.state.settings = { 'run.otel': true };
    const untrusted = await runner(load);
    // Untrusted: the skills module is refused, so nothing runs; the settings were read first.
    await untrusted.run();
    const { planSettings } = await import('../../extension/src/settings');
    expect(planSettings({ fsPath: path.join(folder, 'plan.sop'), scheme: 'file' } as never).otel).toBe(false);
    fake.state.globalSettings = { 'run.otel': true };
    expect(planSettings({ fsPath: path.join(folder, 'plan.sop'), scheme: 'file' } as never).otel).toBe(true);
    expect(loaded).toBe(0);
  }, 60_000);

  it('the extension bundle holds no OpenTelemetry code; dist/otel.cjs does, and is packaged', () => {
    const bundle = readFileSync(path.join(repoRoot, 'extension/dist/extension.cjs'), 'utf8');
    expect(bundle).not.toContain('node_modules/@opentelemetry/');
    expect(readFileSync(path.join(repoRoot, 'extension/dist/otel.cjs'), 'utf8')).toContain('node_modules/@opentelemetry/');
    const ignore = readFileSync(path.join(repoRoot, 'extension/.vscodeignore'), 'utf8');
    expect(ignore).not.toMatch(/^dist\/|otel/m);
  });
});
