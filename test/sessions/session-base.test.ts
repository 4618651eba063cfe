// The common surface of the two session kinds (issue 12 item 3): events, status, the one prompt
// in flight, cancel() and the call options that persist come from one base, so a SOP session and
// a loop session behave the same way through it.
import { describe, expect, it } from 'vitest';
import { LoopSession, SessionBusyError, SopSession, type SessionEvent } from '@lightsop/sessions';
import { SessionBase } from '../../packages/sessions/src/session-base';
import { testRegistry } from '../helpers/registry';
import { decision, deferred, stubAgent, waitFor } from './helpers';

type Kind = 'sop' | 'loop';

/** A session of either kind whose first answer waits for `gate`, then answers `done`. */
function session(kind: Kind, gate: Promise<string>) {
  const agent = stubAgent({ decide: [() => gate.then(() => decision('final_answer', 'done'))], plans: [() => gate.then(() => '@lastAnswer final_answer done')] });
  const s = kind === 'sop'
    ? new SopSession({ agent, skillsDescription: {}, commandsRegistry: testRegistry() })
    : new LoopSession({ agent, tools: {} });
  return { agent, s };
}

/** What the common surface shows while one prompt is interrupted and the next one answers. */
async function surfaceOf(kind: Kind) {
  const gate = deferred<string>();
  const { agent, s } = session(kind, gate.promise);
  const seen: string[] = [];
  const events: SessionEvent[] = [];
  s.onEvent((e) => {
    if (e.type === 'prompt_started' || e.type === 'prompt_settled') events.push(e);
  });
  seen.push(`idle: ${s.status}, cancel: ${s.cancel()}`);
  const first = s.newPrompt('one', { model: 'm1', tags: ['t'] });
  await waitFor(() => agent.calls.length === 1);
  seen.push(`running: ${s.status}`);
  const busy = await s.newPrompt('two', { model: 'm2' }).catch((e: unknown) => e);
  seen.push(`busy: ${busy instanceof SessionBusyError}, model kept: ${s.options.model}`);
  seen.push(`cancel: ${s.cancel('user')}`);
  const interrupted = await first;
  seen.push(`interrupted: ${interrupted.kind} ${interrupted.answer} ${s.status}`);
  gate.resolve('go');
  const answered = await s.newPrompt('three', { model: null });
  seen.push(`answered: ${String(answered.answer)}, model: ${s.options.model}, tags: ${JSON.stringify(s.options.tags)}`);
  return { seen, events, instance: s };
}

describe('the common surface of SOP and loop sessions', () => {
  it('comes from one base: events, status, busy, cancel and call options behave the same in both kinds', async () => {
    const sop = await surfaceOf('sop');
    const loop = await surfaceOf('loop');
    expect(sop.instance).toBeInstanceOf(SessionBase);
    expect(loop.instance).toBeInstanceOf(SessionBase);
    expect(sop.instance.events).toBe(sop.instance);
    expect(sop.seen).toEqual([
      'idle: idle, cancel: false',
      'running: running',
      'busy: true, model kept: m1',
      'cancel: true',
      'interrupted: interrupted Interrupted by user interrupted',
      expect.stringMatching(/^answered: done, model: null, tags: \["t"\]$/),
    ]);
    expect(loop.seen).toEqual(sop.seen);
    expect(loop.events).toEqual(sop.events);
    expect(sop.events).toEqual([
      { type: 'prompt_started', promptIndex: 0 },
      { type: 'prompt_settled', status: 'interrupted' },
      { type: 'prompt_started', promptIndex: 1 },
      { type: 'prompt_settled', status: sop.instance.status },
    ]);
  });
});
