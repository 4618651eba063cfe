// The Plan Graph page (extension/src/graph: html.ts + webview.ts) in a real Chromium: the exact
// HTML the extension serves, with its nonce CSP, and the webview script bundled by esbuild as
// scripts/build.mjs does. A stub `acquireVsCodeApi` records what the page posts to the extension.
import type { Page } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectOnlyTheNoncedScriptRuns, useWebviewPages } from './page-harness';
import { graphHtml } from '../../extension/src/graph/html';
import type { ToWebview } from '../../extension/src/graph/protocol';

const pages = useWebviewPages({ entry: 'extension/src/graph/webview.ts', html: graphHtml, viewport: { width: 900, height: 700 } });
let page: Page;

const HELLO: ToWebview = {
  type: 'graph',
  title: 'hello.sop',
  nodes: [
    { name: 'name', command: 'assign', line: 2, comment: 'Greet someone by name' },
    { name: 'greeting', command: 'greet', line: 3, comment: '' },
    { name: 'shout', command: 'upper', line: 4, comment: 'inline comment' },
    { name: 'count', command: 'word_count', line: 5, comment: '' },
    { name: 'lastAnswer', command: 'final_answer', line: 6, comment: '' },
  ],
  edges: [
    { from: 'name', to: 'greeting' },
    { from: 'greeting', to: 'shout' },
    { from: 'greeting', to: 'count' },
    { from: 'shout', to: 'lastAnswer' },
  ],
  states: [],
};

async function send(message: ToWebview): Promise<void> {
  await page.evaluate((m) => window.postMessage(m, '*'), message);
}

async function nodes(): Promise<{ name: string; status: string; x: number; y: number; w: number; h: number; text: string }[]> {
  return page.$$eval('g.nodes > g', (groups) => groups.map((g) => {
    const r = (g as SVGGElement).getBoundingClientRect();
    return {
      name: g.getAttribute('data-name') ?? '',
      status: g.getAttribute('data-status') ?? '',
      x: r.x, y: r.y, w: r.width, h: r.height,
      text: Array.from(g.querySelectorAll('text'), (t) => t.textContent).join(' | '),
    };
  }));
}

beforeEach(async () => {
  page = await pages.open();
});

describe('the Plan Graph page in Chromium', () => {
  it('loads its script under the nonce CSP, says ready, and runs no inline script', async () => {
    await expectOnlyTheNoncedScriptRuns(page);
  });

  it('draws one node per declaration and one edge per dependency, laid out top-down without overlaps', async () => {
    await send(HELLO);
    await page.waitForSelector('g.nodes > g');
    const drawn = await nodes();
    expect(drawn.map((n) => n.name)).toEqual(['name', 'greeting', 'shout', 'count', 'lastAnswer']);
    expect(drawn.map((n) => n.text)).toContain('@greeting | greet');
    expect(await page.locator('path.edge').count()).toBe(4);
    const at = new Map(drawn.map((n) => [n.name, n]));
    for (const e of HELLO.type === 'graph' ? HELLO.edges : []) expect(at.get(e.from)!.y).toBeLessThan(at.get(e.to)!.y);
    for (const a of drawn) {
      for (const b of drawn) {
        if (a === b) continue;
        const overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
        expect(overlap, `${a.name} overlaps ${b.name}`).toBe(false);
      }
    }
    expect(await page.textContent('#title')).toBe('Plan Graph: hello.sop');
    expect(await page.textContent('#summary')).toBe('5 declarations');
  });

  it('colours nodes by live status and keeps the colours when the graph is re-sent after an edit', async () => {
    await send(HELLO);
    await send({ type: 'states', states: [{ name: 'name', status: 'success', value: 'Ada' }, { name: 'greeting', status: 'running' }] });
    await page.waitForSelector('g[data-name="greeting"].status-running');
    await send({ type: 'states', states: [{ name: 'greeting', status: 'fail', value: 'boom' }, { name: 'shout', status: 'undefined' }] });
    await page.waitForSelector('g[data-name="greeting"].status-fail');
    const statuses = Object.fromEntries((await nodes()).map((n) => [n.name, n.status]));
    expect(statuses).toEqual({ name: 'success', greeting: 'fail', shout: 'undefined', count: 'pending', lastAnswer: 'pending' });
    const fill = (name: string) => page.$eval(`g[data-name="${name}"] rect`, (r) => getComputedStyle(r).fill);
    expect(await fill('name')).not.toBe(await fill('greeting'));
    expect(await fill('count')).not.toBe(await fill('name'));
    expect(await page.$eval('g[data-name="greeting"] title', (t) => t.textContent)).toContain('fail: boom');
    expect(await page.textContent('#summary')).toBe('5 declarations · 1 success · 1 fail · 1 undefined');

    // An edit adds a node: the extension re-sends the graph with the states it knows.
    const edited = HELLO.type === 'graph' ? HELLO : null;
    await send({
      ...edited!,
      nodes: [...edited!.nodes, { name: 'extra', command: 'upper', line: 7, comment: '' }],
      edges: [...edited!.edges, { from: 'name', to: 'extra' }],
      states: [{ name: 'name', status: 'success', value: 'Ada' }],
    });
    await page.waitForSelector('g[data-name="extra"]');
    const after = Object.fromEntries((await nodes()).map((n) => [n.name, n.status]));
    expect(after).toEqual({ name: 'success', greeting: 'pending', shout: 'pending', count: 'pending', lastAnswer: 'pending', extra: 'pending' });
    expect(await page.locator('path.edge').count()).toBe(5);
  });

  it('asks the extension to reveal a declaration when its node is clicked or activated with Enter', async () => {
    await send(HELLO);
    await page.click('g[data-name="count"]');
    await page.focus('g[data-name="shout"]');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => window.__posted.length >= 3);
    expect(await page.evaluate(() => window.__posted.slice(1))).toEqual([
      { type: 'reveal', name: 'count', line: 5 },
      { type: 'reveal', name: 'shout', line: 4 },
    ]);
  });

  it('shows any variable name as text, never as markup', async () => {
    await send({ type: 'graph', title: '<b>x</b>.sop', nodes: [{ name: '__proto__', command: 'a', line: 1, comment: '' }, { name: 'a"b<img src=x>', command: '<i>c</i>', line: 2, comment: '' }], edges: [{ from: '__proto__', to: 'a"b<img src=x>' }], states: [] });
    await page.waitForSelector('g.nodes > g');
    expect((await nodes()).map((n) => n.text)).toEqual(['@__proto__ | a', '@a"b<img src=x> | <i>c</i>']);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.textContent('#title')).toBe('Plan Graph: <b>x</b>.sop');
    expect(await page.locator('path.edge').count()).toBe(1);
  });

  it('shows the note instead of a graph for a plan without declarations', async () => {
    await send({ type: 'graph', title: 'empty.sop', nodes: [], edges: [], note: 'No declarations yet: a declaration starts with @name command.', states: [] });
    await page.waitForSelector('#note:not([hidden])');
    expect(await page.textContent('#note')).toContain('No declarations yet');
    expect(await page.locator('svg').count()).toBe(0);
    expect(await page.evaluate(() => window.__violations)).toEqual([]);
  });
});
