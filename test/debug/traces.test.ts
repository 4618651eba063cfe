/**
 * Debug Plan exports the same OpenTelemetry spans as Run Plan (docs/tracing.md): the adapter,
 * driven through DAP messages, feeds the host's trace (run/traces.ts `startRunTrace` through the
 * built dist/otel.cjs) with the run's events, and a real OTLP receiver gets the run span (marked
 * `lightsop.debug`), one span per command with its status, and a stopped session's cancellation.
 */
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CommandPayload, Responder } from '@lightsop/runtime';
import type { PlanLaunchArguments, PlanSource, RunTraceSink } from '../../extension/src/debug/adapter';
import { loadBundledOtel, startRunTrace } from '../../extension/src/run/traces';
import { ensureBuilt, repoRoot } from '../helpers/cli';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver';
import { testRegistry } from '../helpers/registry';
import { waitFor } from '../helpers/sync';
import { DapClient, FakeHost } from './dap-client';

const SECRET = 'sk-debug-trace-secret-0123456789';

class TracedHost extends FakeHost {
  traced = 0;

  constructor(text: string, registry: ReturnType<typeof testRegistry>, receiver: OtlpReceiver) {
    super(text, registry);
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', receiver.url);
  }

  trace(_args: PlanLaunchArguments, plan: PlanSource): Promise<RunTraceSink | null> {
    this.traced++;
    return startRunTrace('lightsop run', { 'lightsop.plan': path.basename(plan.path), 'lightsop.debug': true }, {
      setting: false,
      // The exporter reads the OTLP variables from the process, as in VS Code's extension host.
      env: process.env,
      load: loadBundledOtel(path.join(repoRoot, 'extension/dist')),
      version: '9.9.9',
      secrets: () => Promise.resolve([SECRET]),
      warn: (message) => {
        throw new Error(`unexpected trace warning: ${message}`);
      },
    });
  }
}

let receiver: OtlpReceiver | null = null;
let client: DapClient | null = null;

beforeAll(() => ensureBuilt());

afterEach(async () => {
  if (client) await client.request('disconnect', {}).catch(() => undefined);
  client = null;
  await receiver?.close();
  receiver = null;
  vi.unstubAllEnvs();
});

function only(spans: readonly ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found, `spans named ${name}: ${spans.map((s) => s.name).join(', ')}`).toHaveLength(1);
  return found[0]!;
}

describe('Debug Plan traces', () => {
  it('exports the run span, marked as a debug run, and one span per command with its status, with no secret', async () => {
    receiver = await startOtlpReceiver();
    const reg = testRegistry({
      shout: (p: CommandPayload, r: Responder) => r.success(String(p.args[0]).toUpperCase()),
      explode: (_p: CommandPayload, r: Responder) => r.fail(`exploded with ${SECRET}`),
    });
    const host = new TracedHost('@a assign hello\n@b shout $a\n@c explode $b\n', reg, receiver);
    client = new DapClient(host);
    // Paused on entry first: the trace must follow the run across a stop and a continue.
    await client.start({ stopOnEntry: true });
    await client.stoppedAt();
    await client.ok('continue', { threadId: 1 });
    await client.nextEvent('terminated');
    const spans = receiver.spans;
    await waitFor('the run span', () => spans.some((s) => s.name === 'lightsop run'));
    expect(host.traced).toBe(1);
    const root = only(spans, 'lightsop run');
    expect(root.parentSpanId).toBe('');
    expect(root.attributes).toMatchObject({ 'lightsop.plan': 'plan.sop', 'lightsop.debug': true, 'lightsop.run.succeeded': 2, 'lightsop.run.failed': 1, 'lightsop.run.canceled': false });
    expect(root.statusCode).toBe(2);
    expect(root.statusMessage).toBe('1 failed');
    const commands = spans.filter((s) => s.name.startsWith('command '));
    expect(commands.map((s) => s.attributes['lightsop.declaration']).sort()).toEqual(['a', 'b', 'c']);
    for (const c of commands) expect(c.parentSpanId).toBe(root.spanId);
    expect(only(spans, 'command shout').attributes['lightsop.status']).toBe('success');
    const failed = only(spans, 'command explode');
    expect(failed.statusCode).toBe(2);
    expect(failed.statusMessage).toMatch(/exploded with \*\*\*/);
    for (const body of receiver.bodies) expect(body).not.toContain(SECRET);
  }, 60_000);

  it('a session stopped mid-run ends its trace as canceled, and the running command\'s span with it', async () => {
    receiver = await startOtlpReceiver();
    let started!: () => void;
    const running = new Promise<void>((resolve) => { started = resolve; });
    const reg = testRegistry({
      wait: (p: CommandPayload, r: Responder) => new Promise((_resolve, reject) => {
        started();
        p.signal?.addEventListener('abort', () => reject(new Error('aborted by the debugger')));
      }).then(() => r.success('never')),
    });
    const host = new TracedHost('@a assign hello\n@b wait $a\n', reg, receiver);
    client = new DapClient(host);
    await client.start({});
    await running;
    await client.ok('disconnect', {});
    client = null;
    const spans = receiver.spans;
    await waitFor('the run span', () => spans.some((s) => s.name === 'lightsop run'));
    const root = only(spans, 'lightsop run');
    expect(root.attributes['lightsop.run.canceled']).toBe(true);
    expect(root.statusCode).toBe(2);
    expect(root.statusMessage).toBe('canceled');
    // The command's span ends with the status the debugger showed for it (the abort made it fail).
    const waited = only(spans, 'command wait');
    expect(waited.attributes['lightsop.status']).toBe(host.store.get('b')?.status);
    expect(waited.statusCode).toBe(2);
  }, 60_000);

  it('a host without traces (the default) runs the session as before', async () => {
    const reg = testRegistry({ shout: (p: CommandPayload, r: Responder) => r.success(String(p.args[0]).toUpperCase()) });
    client = new DapClient(new FakeHost('@a assign hi\n@b shout $a\n', reg));
    await client.start({});
    await client.nextEvent('terminated');
    expect(client.host.store.get('b')).toMatchObject({ status: 'success', value: 'HI' });
  });
});
