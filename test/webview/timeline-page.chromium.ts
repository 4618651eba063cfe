// The Run Timeline page (extension/src/timeline: html.ts + webview.ts) in a real Chromium: the
// exact HTML the extension serves, with its nonce CSP, and the page script bundled as
// scripts/build.mjs bundles it; the timeline is timeline-data.ts's from a run record. A stub
// `acquireVsCodeApi` records what the page posts. Screenshots go to test-results/timeline-*.png.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseRunRecord } from '@lightsop/runtime';
import { expectOnlyTheNoncedScriptRuns, useWebviewPages } from './page-harness';
import { timelineHtml } from '../../extension/src/timeline/html';
import type { ToTimelineWebview } from '../../extension/src/timeline/protocol';
import { timelineOf } from '../../extension/src/timeline/timeline-data';

const SHOTS = path.resolve(__dirname, '../../test-results');

const pages = useWebviewPages({ entry: 'extension/src/timeline/webview.ts', html: timelineHtml, viewport: { width: 1000, height: 420 } });
let page: Page;

const header = { type: 'run', schema: 'lightsop-run-record', version: 1, tool: { name: 'lightsop', version: '0' }, startedAt: '2026-12-02T00:00:00.000Z', t: 0, plan: { file: 'examples/report.sop', text: '', sha256: '0', english: false }, input: { supplied: false }, commands: [] };
const start = (seq: number, variable: string, command: string, t: number, lineNumber: number, dependencies: string[] = []) => ({ type: 'command-start', seq, variable, command, args: [], raw: `@${variable} ${command} ${dependencies.map((d) => `$${d}`).join(' ')}`, lineNumber, dependencies, comment: '', time: '', t });
const end = (seq: number, variable: string, t: number, status = 'success', extra: Record<string, unknown> = { value: `${variable} done` }) => ({ type: 'command-end', seq, variable, status, ...extra, time: '', t, durationMs: 0 });
const REPORT = timelineOf(parseRunRecord([
  header,
  start(1, 'article', 'read_file', 0, 2), start(2, 'style', 'read_file', 0, 3),
  end(2, 'style', 120),
  end(1, 'article', 400),
  start(3, 'summary', 'summarize', 400, 4, ['article']), start(4, 'words', 'word_count', 400, 5, ['article']), start(5, 'links', 'extract_links', 400, 6, ['article']),
  end(4, 'words', 520, 'fail', { reason: 'no words' }),
  end(5, 'links', 610, 'canceled', { reason: 'not today' }),
  end(3, 'summary', 1300),
  start(6, 'report', 'format_report', 1300, 7, ['summary', 'style']),
  end(6, 'report', 1650),
  { type: 'variable', variable: 'tally', status: 'undefined', reason: '', lineNumber: 8, time: '', t: 1650 },
  { type: 'run-end', aborted: false, variables: {}, durationMs: 1700, time: '', t: 1700 },
].map((l) => JSON.stringify(l)).join('\n') + '\n'));

async function send(message: ToTimelineWebview): Promise<void> {
  await page.evaluate((m) => window.postMessage(m, '*'), message);
}

async function bars(): Promise<{ seq: string; cls: string; x: number; w: number; y: number }[]> {
  return page.$$eval('.bar', (els) => els.map((e) => {
    const r = e.getBoundingClientRect();
    return { seq: (e as HTMLElement).dataset.seq ?? '', cls: e.className, x: Math.round(r.x), w: Math.round(r.width), y: Math.round(r.y) };
  }));
}

beforeAll(() => {
  mkdirSync(SHOTS, { recursive: true });
});

beforeEach(async () => {
  page = await pages.open();
});

describe('the Run Timeline page in Chromium', () => {
  it('loads its script under the nonce CSP, says ready, and runs no inline script', async () => {
    await expectOnlyTheNoncedScriptRuns(page);
  });

  it('draws a bar per command on one time axis, coloured by status, the critical path marked', async () => {
    await send({ type: 'timeline', timeline: REPORT, source: 'last run' });
    await page.waitForSelector('.bar');
    await page.screenshot({ path: path.join(SHOTS, 'timeline-report.png') });
    const drawn = await bars();
    expect(drawn.map((b) => b.seq)).toEqual(['1', '2', '3', '4', '5', '6']);
    const bySeq = new Map(drawn.map((b) => [b.seq, b]));
    // Time runs left to right: a call starts where the one it waited for ended.
    expect(bySeq.get('3')!.x).toBeGreaterThanOrEqual(bySeq.get('1')!.x + bySeq.get('1')!.w - 2);
    expect(bySeq.get('6')!.x).toBeGreaterThanOrEqual(bySeq.get('3')!.x + bySeq.get('3')!.w - 2);
    expect(bySeq.get('3')!.w).toBeGreaterThan(bySeq.get('4')!.w);
    // One row each, top to bottom in start order.
    for (let i = 1; i < drawn.length; i++) expect(drawn[i]!.y).toBeGreaterThan(drawn[i - 1]!.y);
    expect(drawn.map((b) => /status-(\w+)/.exec(b.cls)![1])).toEqual(['success', 'success', 'success', 'fail', 'canceled', 'success']);
    const colour = (seq: string) => page.$eval(`.bar[data-seq="${seq}"]`, (e) => getComputedStyle(e).backgroundColor);
    expect(new Set([await colour('1'), await colour('4'), await colour('5')]).size).toBe(3);
    // The critical path: article → summary → report.
    expect(drawn.filter((b) => b.cls.includes('critical')).map((b) => b.seq)).toEqual(['1', '3', '6']);
    expect(await page.textContent('#title')).toBe('Run Timeline: report.sop');
    expect(await page.textContent('#summary')).toBe('6 commands · 1.70 s · critical path @article → @summary → @report (1.65 s)');
    expect(await page.$eval('.bar[data-seq="4"]', (e) => (e as HTMLElement).title)).toContain('no words');
    expect(await page.evaluate(() => window.__violations)).toEqual([]);
  });

  it('fits a narrow panel: every bar and axis label inside the page, labels apart', async () => {
    await page.setViewportSize({ width: 340, height: 420 });
    await send({ type: 'timeline', timeline: REPORT, source: 'last run' });
    await page.waitForSelector('.bar');
    await page.screenshot({ path: path.join(SHOTS, 'timeline-narrow.png') });
    for (const b of await bars()) expect(b.x + b.w, `bar ${b.seq}`).toBeLessThanOrEqual(340);
    const labels = await page.$$eval('.axis span', (els) => els.map((e) => { const r = e.getBoundingClientRect(); return { left: r.left, right: r.right }; }));
    expect(labels.length).toBeGreaterThan(1);
    for (const l of labels) expect(l.right).toBeLessThanOrEqual(340);
    for (let i = 1; i < labels.length; i++) expect(labels[i]!.left).toBeGreaterThan(labels[i - 1]!.right);
  });

  it('asks the extension to reveal a declaration when a bar is clicked or activated with Enter', async () => {
    await send({ type: 'timeline', timeline: REPORT, source: 'last run' });
    await page.click('.bar[data-seq="4"]');
    await page.focus('.bar[data-seq="6"]');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => window.__posted.length >= 3);
    expect(await page.evaluate(() => window.__posted.slice(1))).toEqual([{ type: 'reveal', seq: 4 }, { type: 'reveal', seq: 6 }]);
  });

  it('shows names, commands and values as text, never as markup; an unfinished record is said', async () => {
    const hostile = timelineOf(parseRunRecord([
      { ...header, plan: { ...header.plan, file: 'plans/<b>x&amp;.sop' } },
      { ...start(1, '__proto__', '<img src=x onerror=alert(1)>', 0, 1), raw: '<script>alert(1)</script>' },
      end(1, '__proto__', 10, 'success', { value: '<i>v</i>' }),
      start(2, 'a"b', 'c', 10, 2, ['__proto__']),
    ].map((l) => JSON.stringify(l)).join('\n') + '\n'));
    await send({ type: 'timeline', timeline: hostile, source: 'record <u>r</u>.jsonl' });
    await page.waitForSelector('.bar');
    await page.screenshot({ path: path.join(SHOTS, 'timeline-hostile.png') });
    expect(await page.locator('img, i, u, b, script[src*=x]').count()).toBe(0);
    expect(await page.textContent('#title')).toBe('Run Timeline: <b>x&amp;.sop');
    expect(await page.textContent('#source')).toBe('record <u>r</u>.jsonl');
    expect(await page.$$eval('.row .label', (ls) => ls.map((l) => l.textContent))).toEqual(['', '@__proto__<img src=x onerror=alert(1)>', '@a"bc']);
    expect(await page.textContent('#summary')).toContain('the record stops before the run ended');
    expect(await page.$eval('.bar[data-seq="2"]', (e) => e.className)).toContain('status-running');
    expect(await page.evaluate(() => window.__violations)).toEqual([]);
  });

  it('shows the note when there is no run yet', async () => {
    await send({ type: 'empty', note: 'No run yet in this window.' });
    await page.waitForSelector('#note:not([hidden])');
    expect(await page.textContent('#note')).toBe('No run yet in this window.');
    expect(await page.locator('.bar').count()).toBe(0);
  });
});
