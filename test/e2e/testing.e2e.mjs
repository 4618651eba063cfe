// Plan tests in VS Code's Test Explorer and the Run Timeline, in the real VS Code of
// extension.e2e.mjs (which calls `planTests` in its trusted workspace): a `*.sop.test.json`
// written into the workspace appears in the Test Explorer with its tests, "Run All Tests" runs
// them with the CLI's runner, and the failing expectation's message is shown on the line of that
// expectation in the test file; "Debug All Tests" runs them under the plan debugger; then "Show Run
// Timeline" draws the window's last run as bars.

import fs from 'node:fs';
import path from 'node:path';

// Mock-only tests of plans/hello.sop: the first passes, the second expects the wrong greeting.
const TESTS = `{
  "tests": [
    {
      "name": "greets Ada (mocked)",
      "mocks": [
        { "command": "greet", "args": ["Ada Lovelace"], "value": "Hello, Ada!" },
        { "command": "upper", "value": "HELLO, ADA!" },
        { "command": "word_count", "value": "2" },
        { "command": "final_answer", "value": "HELLO, ADA!" }
      ],
      "expect": { "greeting": "Hello, Ada!", "lastAnswer": "HELLO, ADA!" }
    },
    {
      "name": "expects the wrong greeting",
      "mocks": [
        { "command": "greet", "value": "Hello, Ada!" },
        { "command": "upper", "value": "HELLO, ADA!" },
        { "command": "word_count", "value": "2" },
        { "command": "final_answer", "value": "HELLO, ADA!" }
      ],
      "expect": {
        "greeting": "Hello, Bob!"
      }
    }
  ]
}
`;
const FAILING_LINE = '"greeting": "Hello, Bob!"';
const MESSAGE = '@greeting: expected value "Hello, Bob!", got "Hello, Ada!"';

/** The rows of the Test Explorer tree, as their aria labels. */
async function explorerRows(page) {
  return page.locator('.test-explorer-tree .monaco-list-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('aria-label') || r.textContent || ''));
}

/** The Run Timeline webview's frame, once it shows bars. */
async function timelineFrame(page, waitFor) {
  return waitFor('the Run Timeline webview with bars', async () => {
    for (const f of page.frames()) {
      const found = await f.evaluate(() => document.getElementById('title')?.textContent?.startsWith('Run Timeline') && document.querySelectorAll('.bar').length > 0).catch(() => false);
      if (found) return f;
    }
    return null;
  }, 30000, 300);
}

export async function planTests(vs, { check, waitFor, log }) {
  const { page } = vs;
  fs.writeFileSync(path.join(vs.dirs.ws, 'plans', 'hello.sop.test.json'), TESTS);
  await vs.openFile('plans/hello.sop.test.json');
  // The editor of the test file, in whichever editor group it opened.
  const editor = page.locator('.editor-instance .monaco-editor', { has: page.locator('.view-line', { hasText: FAILING_LINE }) }).first();
  await editor.waitFor({ state: 'visible', timeout: 30000 });

  // 1. The Test Explorer lists the file; expanded, its two tests.
  await vs.runCommand('Testing: Focus on Test Explorer View');
  const fileRow = page.locator('.test-explorer-tree .monaco-list-row', { hasText: 'hello.sop.test.json' }).first();
  await fileRow.waitFor({ state: 'visible', timeout: 30000 });
  if ((await fileRow.getAttribute('aria-expanded')) !== 'true') await fileRow.locator('.monaco-tl-twistie').click();
  const listed = await waitFor('both tests in the Test Explorer', async () => {
    const rows = await explorerRows(page);
    return rows.some((r) => r.includes('greets Ada (mocked)')) && rows.some((r) => r.includes('expects the wrong greeting')) ? rows : null;
  });
  log('test explorer:', JSON.stringify(listed));
  await vs.shot('test-explorer');
  check('the Test Explorer lists plans/hello.sop.test.json and its two tests');

  // 2. Run them: the failing expectation's message is shown on its own line of the test file.
  await vs.openFile('plans/hello.sop.test.json');
  await vs.runCommand('Test: Run All Tests');
  // The message is injected text of the editor line it belongs to (a decoration at its location).
  const inline = await waitFor('the failure message on the expectation\'s line', async () => {
    const line = editor.locator('.view-line', { hasText: FAILING_LINE }).first();
    const text = (await line.textContent({ timeout: 1000 }).catch(() => null))?.replace(/\u00a0/g, ' ');
    return text && text.includes(MESSAGE) && (await line.locator('[class*="test-message-inline-content"]').count()) > 0 ? text : null;
  }, 60000);
  log('inline message:', JSON.stringify(inline));
  const elsewhere = await editor.locator('.view-line', { hasNotText: FAILING_LINE }).locator('[class*="test-message-inline-content"]').count();
  if (elsewhere !== 0) throw new Error(`${elsewhere} failure message(s) on other lines than the expectation's`);
  const states = await waitFor('the results in the Test Explorer', async () => {
    const rows = await explorerRows(page);
    const pass = rows.find((r) => r.includes('greets Ada (mocked)'));
    const fail = rows.find((r) => r.includes('expects the wrong greeting'));
    return pass && fail && /passed/i.test(pass) && /failed/i.test(fail) ? { pass, fail } : null;
  });
  log('test states:', JSON.stringify(states));
  await vs.shot('test-failure-inline');
  check('Run All Tests: the mocked test passes; the failing one shows "@greeting: expected value ..." on the line of its expectation');

  // 3. Debug them: the plans run under the plan debugger with the tests' mocks, judged alike.
  //    The results show as the gutter icons of the tests in the test file (the debugger takes
  //    the side bar over); cleared first, so the icons that come back are the debug run's.
  const icons = async () => ({
    passed: await editor.locator('.testing-run-glyph.codicon-testing-passed-icon').count(),
    failed: await editor.locator('.testing-run-glyph.codicon-testing-failed-icon').count(),
  });
  await vs.runCommand('Test: Clear All Results');
  await waitFor('the results to be cleared', async () => {
    const n = await icons();
    return n.passed === 0 && n.failed === 0;
  });
  await vs.runCommand('Test: Debug All Tests');
  const debugged = await waitFor('the debugged results in the test file\'s gutter', async () => {
    const n = await icons();
    return n.passed === 1 && n.failed === 1 ? n : new Error(JSON.stringify(n));
  }, 60000);
  // The Debug Console shows the last session: the second test's plan, answered by its mocks.
  await vs.runCommand('Focus on Debug Console View');
  await waitFor('the last debugged test in the Debug Console', async () => {
    const text = ((await page.locator('.repl').first().innerText({ timeout: 2000 }).catch(() => '')) || '').replace(/\u00a0/g, ' ');
    // The mock's greeting, not the skill's ("Hello, Ada Lovelace!"), and the session's summary.
    return text.includes('@greeting success Hello, Ada!') && /\[debug\] hello\.sop: \d+ variables/.test(text) ? text : null;
  }, 30000);
  log('debugged:', JSON.stringify(debugged));
  await vs.shot('test-debugged');
  check('Debug All Tests: each plan runs under the plan debugger with its test\'s mocks; the mocked test passes, the other fails');

  // 4. The Run Timeline draws the window's last run (Run Plan / Debug Plan) as bars.
  await vs.runCommand('LightSOPLang: Show Run Timeline');
  const frame = await timelineFrame(page, waitFor);
  const timeline = await frame.evaluate(() => ({
    title: document.getElementById('title')?.textContent,
    summary: document.getElementById('summary')?.textContent,
    bars: [...document.querySelectorAll('.bar')].map((b) => b.className),
  }));
  log('timeline:', JSON.stringify(timeline));
  if (!timeline.bars.some((c) => c.includes('critical'))) throw new Error('no bar is marked on the critical path');
  await vs.shot('run-timeline');
  check('Show Run Timeline draws the last run as bars coloured by status, with the critical path marked');
}
