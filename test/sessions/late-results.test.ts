// ARCHITECTURE.md: a session never lets a result that arrives after an interrupt become a
// success. The results that would end a turn at once are the dangerous ones: a tool's success
// object is the turn's answer without another planner step, so the check after the tool returns
// is all that stands between a late result and an answered turn.
import { describe, expect, it } from 'vitest';
import { LoopSession } from '@lightsop/sessions';
import { decision, deferred, stubAgent } from './helpers';

const quiet = { historyCompressionEnabled: false, logger: () => undefined } as const;

describe('a result that arrives after an interrupt', () => {
  for (const [what, late] of [
    ['a success object (which would be the answer at once)', { success: true, message: 'done anyway' }],
    ['a request for input (which would pause the turn)', { requiresInput: true, message: 'which one?' }],
    ['a failure object (which would end the turn as a tool failure)', { success: false, message: 'failed anyway' }],
  ] as const) {
    it(`does not settle the loop turn: ${what}`, async () => {
      const release = deferred<unknown>();
      const entered = deferred();
      const tool = { description: 'slow', handler: async () => (entered.resolve(), release.promise) };
      const session = new LoopSession({ agent: stubAgent({ decide: [decision('slow', 'x'), decision('final_answer', 'never')] }), tools: { slow: tool }, options: quiet });
      const controller = new AbortController();
      const pending = session.newPrompt('go', { signal: controller.signal });
      await entered.promise;
      controller.abort('esc');
      release.resolve(late);
      expect(await pending).toMatchObject({ kind: 'interrupted', answer: 'Interrupted by user' });
      expect(session.status).toBe('interrupted');
    });
  }
});
