// The webview's message contract and page, without a browser (runs in `npm test`): messages from
// the page are checked before use, the page's CSP allows only the nonce'd script and style, and
// the extension's copy of the server's custom method names matches the server's declaration.
import { describe, expect, it } from 'vitest';
import { PlanGraphRequest, PlanOutlineRequest, SetSkillsNotification, SetTrustedNotification } from '@lightsop/language-server';
import { graphHtml } from '../../extension/src/graph/html';
import { timelineHtml } from '../../extension/src/timeline/html';
import { makeNonce } from '../../extension/src/webview-page';
import { isFromWebview } from '../../extension/src/graph/protocol';
import { expectLockedDownPage } from './page-html';
import { PLAN_GRAPH_METHOD, PLAN_OUTLINE_METHOD, SET_SKILLS_METHOD, SET_TRUSTED_METHOD } from '../../extension/src/server-protocol';

describe('messages from the graph page', () => {
  it('accepts ready and well-formed reveal messages only', () => {
    expect(isFromWebview({ type: 'ready' })).toBe(true);
    expect(isFromWebview({ type: 'reveal', name: 'a', line: 3 })).toBe(true);
    for (const bad of [null, 'ready', { type: 'reveal', name: 'a' }, { type: 'reveal', name: 1, line: 3 }, { type: 'reveal', name: 'a', line: 0 }, { type: 'reveal', name: 'a', line: 1.5 }, { type: 'run' }]) {
      expect(isFromWebview(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('the graph page HTML', () => {
  it('allows only the nonce for scripts and styles, and nothing by default', () => {
    expectLockedDownPage(graphHtml, 'graph-webview.js');
  });

  it('so does the Run Timeline page', () => {
    expectLockedDownPage(timelineHtml, 'timeline-webview.js');
  });

  it('makes 32-character alphanumeric nonces from the random source', () => {
    const nonce = makeNonce((n) => Uint8Array.from({ length: n }, (_, i) => i * 7));
    expect(nonce).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(makeNonce((n) => new Uint8Array(n))).toBe('A'.repeat(32));
  });
});

describe('extension and language server agree on custom messages', () => {
  it('uses the server\'s methods for setTrusted, setSkills, planGraph and planOutline', () => {
    expect(SET_TRUSTED_METHOD).toBe(SetTrustedNotification.method);
    expect(SET_SKILLS_METHOD).toBe(SetSkillsNotification.method);
    expect(PLAN_GRAPH_METHOD).toBe(PlanGraphRequest.method);
    expect(PLAN_OUTLINE_METHOD).toBe(PlanOutlineRequest.method);
  });
});
