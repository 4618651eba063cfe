#!/usr/bin/env node
// End-to-end test of the LightSOPLang extension in a REAL VS Code (code-server 4.100.3 = VS Code
// 1.100.3), driven by playwright-core and Debian's chromium. It installs the packaged .vsix,
// opens fixtures/workspace (plans and a skills module), and checks what a user sees: the language
// mode and colours, Problems-panel diagnostics that follow typing, completion of the skills'
// commands, Run Plan from the palette with every declaration's result (inline and in the Plan
// Variables view), the Plan Graph webview with the plan's nodes coloured by status, the plan
// debugger (a breakpoint, the stopped line, the Variables view, Step Over, Continue), the chat
// panel (a planned answer, an approval card, Stop during a slow reply), and, in an untrusted copy
// of the workspace, Run Plan refusing to load the skills module, Debug Plan asking for trust
// first, and the chat neither loading the module nor using the workspace's endpoint.
//
// Usage: node test/e2e/extension.e2e.mjs --vsix FILE [--keep]   (test/e2e/run.mjs does the setup)
// Every wait has a time limit; VSCODE_HARNESS_TIMEOUT (seconds, default 420) bounds the run.
// Screenshots go to $VSCODE_HARNESS_SHOTS (run.mjs: test-results/e2e/).

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { closeAll, closeSuggest, launch, log, SHOTS, waitFor } from './harness.mjs';
import { mcpE2e } from './mcp.e2e.mjs';
import { planTests } from './testing.e2e.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? argv[i + 1] : dflt;
};
const VSIX = opt('--vsix', '');
const WATCHDOG_S = Number(process.env.VSCODE_HARNESS_TIMEOUT || 420);
const WORKSPACE = path.join(here, 'fixtures', 'workspace');
// The key typed into "Set LLM API Key"; it must reach the LLM endpoint and nothing else.
const API_KEY = `sk-e2e-${process.pid}-${Date.now().toString(36)}`;
// Only the key from secret storage may be used.
delete process.env.LIGHTSOP_LLM_API_KEY;
delete process.env.OPENAI_API_KEY;
delete process.env.LIGHTSOP_LLM_BASE_URL;
delete process.env.LIGHTSOP_LLM_MODEL;

/**
 * A fake OpenAI-compatible endpoint, records requests. It answers the chat panel's requests (the
 * user's message starts with "e2e chat:") from CHAT_REPLIES, and every other chat completion (an
 * #!english plan) with the same plan.
 */
const GENERATED_PLAN = '@name assign "Ada Lovelace"\n@greeting greet $name\n@lastAnswer final_answer $greeting\n';
const CHAT_REPLIES = {
  'e2e chat: shout and count Grace Hopper': { text: '# Shout the name\n@name assign "Grace Hopper"\n@loud upper $name\n@count word_count $name\n@lastAnswer final_answer $loud has $count words' },
  'e2e chat: save a note': { text: '# Keep a note in the workspace\n@saved write_file notes/chat.txt "written from the chat"\n@lastAnswer final_answer $saved' },
  // Never answered in time: the test stops the turn while the model is "thinking".
  'e2e chat: take your time': { text: '@lastAnswer final_answer "too late"', delayMs: 120_000 },
};
const llmRequests = [];
const llm = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    const request = { url: req.url, authorization: req.headers.authorization ?? '', body, closedEarly: false };
    llmRequests.push(request);
    let prompt = '';
    try {
      prompt = [...JSON.parse(body).messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    } catch {}
    const reply = prompt.startsWith('e2e chat:') ? (CHAT_REPLIES[prompt] ?? { text: '@lastAnswer final_answer "unscripted chat prompt"' }) : { text: GENERATED_PLAN };
    const answer = () => {
      if (res.writableEnded || res.destroyed) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id: 'chatcmpl-e2e', object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: 'fake-model',
        choices: [{ index: 0, message: { role: 'assistant', content: reply.text }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }));
    };
    if (!reply.delayMs) return answer();
    const timer = setTimeout(answer, reply.delayMs);
    res.on('close', () => {
      clearTimeout(timer);
      if (!res.writableEnded) request.closedEarly = true;
    });
  });
});

let current = null;
let done = false;
let passed = 0;

async function finish(code, why) {
  if (done) return;
  done = true;
  if (why) console.error(`FAIL: ${why}`);
  if (code !== 0 && current) {
    await current.shot('failure').catch(() => {});
    try {
      console.error('--- code-server log (tail) ---');
      console.error(fs.readFileSync(current.serverLog, 'utf8').split('\n').slice(-30).join('\n'));
      console.error('--- extension host log (tail) ---');
      console.error(current.extHostLog().split('\n').slice(-40).join('\n'));
    } catch {}
  }
  await closeAll();
  llm.close();
  log(code === 0 ? 'RESULT: PASS' : 'RESULT: FAIL', `(screenshots in ${SHOTS})`);
  console.log(`${passed} passed, ${code === 0 ? 0 : 1} failed`);
  process.exit(code);
}
const watchdog = setTimeout(() => finish(1, `watchdog: run exceeded ${WATCHDOG_S}s`), WATCHDOG_S * 1000);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => finish(1, `got ${sig}`));

const check = (name) => {
  passed++;
  log(`ok ${passed} - ${name}`);
};

/** Types `text` on a new line after the line holding `after` (suggestions closed before and after). */
async function typeLineAfter(vs, after, text) {
  await closeSuggest(vs.page);
  await vs.editor.locator('.view-line', { hasText: after }).first().click();
  await vs.page.keyboard.press('End');
  await vs.page.keyboard.press('Enter');
  await vs.page.keyboard.type(text, { delay: 15 });
  // Suggestions may open a moment after the last key; let the editor settle on the typed text.
  await vs.editor.locator('.view-line', { hasText: text.trim() }).first().waitFor({ state: 'visible', timeout: 10000 });
  await closeSuggest(vs.page);
}

/** The Plan Variables pane of the Explorer, expanded. */
async function variablesPane(page) {
  const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Plan Variables' }) }).first();
  await pane.waitFor({ state: 'visible', timeout: 30000 });
  const header = pane.locator('.pane-header').first();
  if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
  return pane;
}

/** The frame of the Plan Graph webview page of `file` (nested iframes), once its SVG is drawn. */
async function graphFrame(page, file) {
  return waitFor(`the Plan Graph webview of ${file}`, async () => {
    for (const f of page.frames()) {
      const found = await f.evaluate((name) => Boolean(document.querySelector('svg[aria-label="Plan dependency graph"]'))
        && document.getElementById('title')?.textContent === `Plan Graph: ${name}`, file).catch(() => false);
      if (found) return f;
    }
    return null;
  }, 30000, 300);
}

/** Every file under `dir` whose content contains `needle` (relative paths). */
function filesContaining(dir, needle) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.existsSync(d) ? fs.readdirSync(d, { withFileTypes: true }) : []) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && fs.statSync(p).size < 50_000_000 && fs.readFileSync(p).includes(needle)) out.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return out;
}

/** The Variables view of Run and Debug: each row as "name = value" (whitespace collapsed). */
async function debugVariables(page) {
  return (await page.locator('.debug-variables .monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
}

/** The text of the Debug Console. */
async function debugConsole(page) {
  const repl = page.locator('.repl').first();
  if ((await repl.count()) === 0) return '';
  return ((await repl.innerText({ timeout: 5000 }).catch(() => '')) || '').replace(/\u00a0/g, ' ');
}

/** The modal dialog whose message contains `text`; returns its message. */
async function dialog(page, text, timeout = 30000) {
  const box = page.locator('.monaco-dialog-box', { hasText: text }).first();
  await box.waitFor({ state: 'visible', timeout });
  return { box, message: (await box.locator('.dialog-message-container').first().innerText()).replace(/\s+/g, ' ').trim() };
}

/**
 * The Problems panel filtered to `filter` (its filter box), once a row contains `text`; returns
 * the rows. Filtering keeps the row on screen however many other problems there are.
 */
async function filteredProblems(vs, filter, text, timeout = 30000) {
  await vs.problems();
  const input = vs.page.locator('.viewpane-filter input').first();
  await input.waitFor({ state: 'visible', timeout });
  await input.fill(filter);
  return waitFor(`a Problems row for ${filter} with ${JSON.stringify(text)}`, async () => {
    const rows = (await vs.page.locator('.markers-panel .monaco-list-row').allInnerTexts()).map((r) => r.replace(/\s+/g, ' ').trim());
    return rows.some((r) => r.includes(text)) ? rows : null;
  }, timeout);
}

/** Clears the Problems panel's filter box. */
async function clearProblemsFilter(vs) {
  await vs.page.locator('.viewpane-filter input').first().fill('');
}

/** The inline result (the `after` decoration text) shown on the editor line holding `lineText`. */
async function inlineResultOn(editor, lineText) {
  return editor.locator('.view-line', { hasText: lineText }).first().evaluate((l) =>
    [...l.querySelectorAll('span')].map((s) => getComputedStyle(s, '::after').content).filter((c) => c && c !== 'none' && c !== 'normal').join(''));
}

/**
 * The plan debugger (Debug Plan): a breakpoint on @shout, the editor stopped on that line with
 * the earlier variables successful in the Variables view, Step Over to the next declaration,
 * Continue to the end; and an invalid plan that fails to launch with its first error.
 */
async function debugging(vs) {
  const { page, editor } = vs;
  // 12. An invalid plan does not start: a dialog with its first error as file:line:col.
  await vs.openFile('plans/broken.sop');
  await vs.runCommand('LightSOPLang: Debug Plan');
  const invalid = await dialog(page, 'nothing was run');
  log('debug broken.sop:', JSON.stringify(invalid.message));
  if (!/^broken\.sop:3:14: Variable 'nmae' is not declared.*\[undefined-variable\]: nothing was run\.$/.test(invalid.message)) {
    throw new Error(`unexpected launch error ${JSON.stringify(invalid.message)}`);
  }
  await vs.shot('debug-invalid-plan');
  await invalid.box.getByRole('button', { name: 'Cancel' }).click();
  await invalid.box.waitFor({ state: 'hidden', timeout: 10000 });
  if (await page.locator('.debug-toolbar').first().isVisible().catch(() => false)) throw new Error('a debug session started for an invalid plan');
  check('Debug Plan on broken.sop does not start: a dialog gives its first error as broken.sop:3:14 [undefined-variable]');

  // 13. A breakpoint on @shout; Debug Plan stops the editor on that line.
  fs.writeFileSync(path.join(vs.dirs.ws, 'plans', 'debug.sop'), [
    '# Stop at @shout, look at the variables, step, continue',
    '@name      assign "Grace Hopper"',
    '@title     assign "Rear Admiral"',
    '@full      assign $title $name',
    '@shout     upper $full',
    '@count     word_count $full',
    '@lastAnswer final_answer $shout',
    '',
  ].join('\n'));
  await vs.openFile('plans/debug.sop');
  await editor.locator('.codelens-decoration', { hasText: 'Debug plan' }).first().waitFor({ state: 'visible', timeout: 30000 });
  const shoutLine = editor.locator('.view-line', { hasText: '@shout     upper $full' }).first();
  await shoutLine.click();
  await page.keyboard.press('F9');
  await editor.locator('.codicon-debug-breakpoint').first().waitFor({ state: 'visible', timeout: 10000 });
  await vs.runCommand('LightSOPLang: Debug Plan');
  await page.locator('.debug-toolbar').first().waitFor({ state: 'visible', timeout: 30000 });
  const stoppedLine = editor.locator('.debug-top-stack-frame-line').first();
  await stoppedLine.waitFor({ state: 'attached', timeout: 30000 });
  await waitFor('the stopped line to be @shout (line 5)', async () => {
    const [a, b] = [await stoppedLine.boundingBox(), await shoutLine.boundingBox()];
    return a && b && Math.abs(a.y - b.y) < 3;
  });
  const callStack = await waitFor('the call stack to show @shout', async () => {
    const t = (await page.locator('.debug-call-stack').first().innerText().catch(() => '')).replace(/\s+/g, ' ');
    return t.includes('@shout upper') ? t : null;
  });
  const paused = (await page.locator('.pane-header', { hasText: 'Call Stack' }).first().innerText()).replace(/\s+/g, ' ');
  if (!paused.includes('Paused before @shout (breakpoint)')) throw new Error(`call stack header says ${JSON.stringify(paused)}`);
  const atShout = await waitFor('the earlier variables as success in the Variables view', async () => {
    const rows = await debugVariables(page);
    const want = ['name = success · Grace Hopper', 'title = success · Rear Admiral', 'full = success · Rear Admiral Grace Hopper', 'shout = paused · not started yet'];
    return want.every((w) => rows.includes(w)) ? rows : null;
  });
  log('call stack:', JSON.stringify(callStack), 'variables:', JSON.stringify(atShout));
  await vs.shot('debug-stopped-at-breakpoint');
  check('a breakpoint on @shout + Debug Plan: the editor stops on line 5 ("Paused before @shout (breakpoint)"); the Variables view shows @name, @title, @full as success and @shout paused');

  // Hovering $full on the stopped line shows its value (the adapter evaluates it for the hover).
  const at = await shoutLine.evaluate((el) => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const i = n.textContent.indexOf('$full');
      if (i < 0) continue;
      const range = document.createRange();
      range.setStart(n, i + 1);
      range.setEnd(n, i + 5);
      const b = range.getBoundingClientRect();
      return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
    }
    return null;
  });
  if (!at) throw new Error('$full is not on screen on the @shout line');
  await page.mouse.move(at.x, at.y);
  const hoverWidget = page.locator('.debug-hover-widget', { hasText: 'Rear Admiral Grace Hopper' }).first();
  await hoverWidget.waitFor({ state: 'visible', timeout: 15000 });
  log('debug hover:', JSON.stringify((await hoverWidget.innerText()).replace(/\s+/g, ' ')));
  await vs.shot('debug-hover');
  await page.mouse.move(5, 400);
  await hoverWidget.waitFor({ state: 'hidden', timeout: 10000 }).catch(() => page.keyboard.press('Escape'));
  check('hovering $full while paused shows its value "Rear Admiral Grace Hopper"');

  // 14. Step Over runs @shout and pauses before the next declaration that starts.
  await page.locator('.debug-toolbar .codicon-debug-step-over').first().click();
  await waitFor('the call stack to show @lastAnswer', async () => (await page.locator('.debug-call-stack').first().innerText().catch(() => '')).includes('@lastAnswer final_answer'));
  const afterStep = await waitFor('@shout to be success after the step', async () => {
    const rows = await debugVariables(page);
    return rows.includes('shout = success · REAR ADMIRAL GRACE HOPPER') && rows.includes('lastAnswer = paused · not started yet') ? rows : null;
  });
  log('after Step Over:', JSON.stringify(afterStep));
  await vs.shot('debug-step-over');
  check('Step Over runs @shout (success) and pauses before @lastAnswer');

  // 15. Continue: the run finishes; results in the Debug Console, inline and in Plan Variables.
  await page.locator('.debug-toolbar .codicon-debug-continue').first().click();
  await page.locator('.debug-toolbar').first().waitFor({ state: 'hidden', timeout: 30000 });
  const repl = await waitFor('the run summary in the Debug Console', async () => {
    const t = await debugConsole(page);
    return /debug\.sop: 6 variables: 6 succeeded, 0 failed/.test(t) ? t : null;
  });
  if (!repl.includes('… @shout upper Rear Admiral Grace Hopper') || !repl.includes('✓ @lastAnswer success REAR ADMIRAL GRACE HOPPER')) {
    throw new Error(`the Debug Console lacks the command log: ${JSON.stringify(repl.slice(0, 600))}`);
  }
  await vs.runCommand('View: Show Explorer');
  const debugPane = await variablesPane(page);
  await waitFor('@lastAnswer success in the Plan Variables view', async () => {
    const texts = (await debugPane.locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
    return texts.some((t) => t.includes('@lastAnswer') && t.includes('success · REAR ADMIRAL GRACE HOPPER'));
  });
  await vs.shot('debug-finished');
  check('Continue: the run finishes (debug toolbar gone); the Debug Console logs each command and "6 variables: 6 succeeded"; Plan Variables shows the results');
}

/** The frame of the chat webview page, once its script has rendered. */
async function chatFrame(page) {
  return waitFor('the chat webview', async () => {
    for (const f of page.frames()) {
      const found = await f.evaluate(() => document.title === 'LightSOPLang Chat' && Number(document.body?.dataset.rendered ?? '0') > 0
        && document.querySelectorAll('.tab').length > 0).catch(() => false);
      if (found) return f;
    }
    return null;
  }, 30000, 300);
}

/** Sends a message from the chat's composer (typed, then Enter). */
async function chatSend(frame, text) {
  await frame.locator('#input').click();
  await frame.locator('#input').fill(text);
  await frame.locator('#input').press('Enter');
  await waitFor(`the message "${text}" in the transcript`, () => frame.evaluate((t) => [...document.querySelectorAll('.turn .bubble')].some((b) => b.textContent === t), text), 15000);
}

/** The turn of a message: its status, outcome, plan rows and approval cards as text. */
function chatTurn(frame, text) {
  return frame.evaluate((t) => {
    const turn = [...document.querySelectorAll('section.turn')].find((s) => s.querySelector('.bubble')?.textContent === t);
    if (!turn) return null;
    return {
      status: turn.getAttribute('data-status'),
      outcome: turn.querySelector('.answer')?.getAttribute('data-outcome') ?? null,
      answer: (turn.querySelector('.answer .text')?.textContent ?? '').trim(),
      plan: turn.querySelector('details.plan pre.code')?.textContent ?? '',
      rows: [...turn.querySelectorAll('table.vars tbody tr')].map((r) => `${r.getAttribute('data-variable')}:${r.getAttribute('data-state')}`),
      cards: [...turn.querySelectorAll('[data-approval]')].map((c) => `${c.getAttribute('data-state')}:${c.textContent.slice(0, 80)}`),
    };
  }, text);
}

/**
 * The chat panel: Open Chat from the palette; a message answered with a plan (plan shown,
 * variables settle, answer); an approval card for write_file approved with a click (the file is
 * written); Stop during a slow model reply.
 */
async function chat(vs) {
  const { page } = vs;
  const before = llmRequests.length;
  await vs.runCommand('LightSOPLang: Open Chat');
  const frame = await chatFrame(page);
  await waitFor('the chat to show its model', () => frame.evaluate(() => !document.querySelector('.banner.error') && document.getElementById('model')?.textContent.includes('Default (fake-model)')));
  await vs.shot('chat-open');
  check('Open Chat from the palette opens the chat panel with one conversation and the configured model');

  // 1. A message answered by the scripted model: the plan, its variables, the answer.
  const ask = 'e2e chat: shout and count Grace Hopper';
  await chatSend(frame, ask);
  const answered = await waitFor('the chat answer', async () => {
    const t = await chatTurn(frame, ask);
    return t && t.status === 'settled' ? t : null;
  }, 30000);
  log('chat turn:', JSON.stringify(answered));
  if (answered.outcome !== 'answered' || answered.answer !== 'GRACE HOPPER has 2 words') throw new Error(`unexpected chat answer ${JSON.stringify(answered)}`);
  if (!answered.plan.includes('@count word_count $name')) throw new Error(`the plan is not shown: ${JSON.stringify(answered.plan)}`);
  if (JSON.stringify(answered.rows) !== JSON.stringify(['name:success', 'loud:success', 'count:success', 'lastAnswer:success'])) throw new Error(`variables ${JSON.stringify(answered.rows)}`);
  if (answered.cards.length !== 0) throw new Error('upper and word_count have no side effects: no approval expected');
  const chatRequest = llmRequests.slice(before).find((r) => r.body.includes(ask));
  if (!chatRequest || chatRequest.authorization !== `Bearer ${API_KEY}`) throw new Error('the chat request did not carry the stored key as its Bearer token');
  await vs.shot('chat-answered');
  check('a chat message is planned by the model (plan shown), its 4 variables settle as success, and the answer "GRACE HOPPER has 2 words" is shown');

  // 2. A command with side effects: an approval card, approved with a click.
  const save = 'e2e chat: save a note';
  await chatSend(frame, save);
  const card = frame.locator('.card.approval[data-state="open"]').first();
  await card.waitFor({ state: 'visible', timeout: 30000 });
  const cardText = (await card.innerText()).replace(/\s+/g, ' ');
  log('approval card:', JSON.stringify(cardText));
  if (!cardText.includes('Allow write_file to run?') || !cardText.includes('notes/chat.txt')) throw new Error(`unexpected approval card ${JSON.stringify(cardText)}`);
  const note = path.join(vs.dirs.ws, 'notes', 'chat.txt');
  if (fs.existsSync(note)) throw new Error('write_file ran before it was approved');
  await waitFor('the tab badge for the approval', () => frame.evaluate(() => document.querySelector('.tab[aria-selected="true"] .badge.approval')?.textContent === '1 approval'));
  await vs.shot('chat-approval');
  await card.locator('button[data-action="approve"]').click();
  const saved = await waitFor('the note to be saved', async () => {
    const t = await chatTurn(frame, save);
    return t && t.status === 'settled' ? t : null;
  }, 30000);
  log('after approval:', JSON.stringify(saved));
  if (saved.outcome !== 'answered' || !saved.cards.some((c) => c.startsWith('approved:'))) throw new Error(`unexpected turn after approval ${JSON.stringify(saved)}`);
  if (fs.readFileSync(note, 'utf8') !== 'written from the chat') throw new Error('notes/chat.txt does not hold the approved text');
  await vs.shot('chat-approved');
  check('write_file asks first: an approval card (tab badge "1 approval"); Approve runs it and notes/chat.txt is written');

  // 3. Stop during a slow model reply.
  const slow = 'e2e chat: take your time';
  const sent = llmRequests.length;
  await chatSend(frame, slow);
  await waitFor('the slow request to reach the model', () => llmRequests.length > sent && llmRequests.slice(sent).some((r) => r.body.includes(slow)));
  await frame.locator('#stop').waitFor({ state: 'visible', timeout: 10000 });
  await vs.shot('chat-running');
  const stopAt = Date.now();
  await frame.locator('#stop').click();
  const stopped = await waitFor('the turn to be interrupted', async () => {
    const t = await chatTurn(frame, slow);
    return t && t.status === 'settled' ? t : null;
  }, 15000);
  log('stopped:', JSON.stringify(stopped), `after ${Date.now() - stopAt} ms`);
  if (stopped.outcome !== 'interrupted' || !stopped.answer.includes('Interrupted by user')) throw new Error(`unexpected stopped turn ${JSON.stringify(stopped)}`);
  const slowRequest = llmRequests.slice(sent).find((r) => r.body.includes(slow));
  await waitFor('the slow HTTP request to be aborted', () => slowRequest.closedEarly, 10000);
  if (await frame.locator('#stop').isVisible()) throw new Error('the Stop button is still shown after the turn settled');
  await vs.shot('chat-stopped');
  check('Stop during a slow model reply: the turn ends "Interrupted by user", the HTTP request is aborted, the Stop button goes away');
}

async function trustedWorkspace() {
  const llmBase = `http://127.0.0.1:${llm.address().port}/v1`;
  const vs = await launch({
    vsix: VSIX, workspaceFrom: WORKSPACE, name: 'trusted', keep: argv.includes('--keep'),
    settings: { 'workbench.editor.enablePreview': false, 'lightsop.llm.baseUrl': llmBase, 'lightsop.llm.model': 'fake-model' },
  });
  current = vs;
  const { page, editor } = vs;

  // 1. Language mode, colours and activation.
  await vs.openFile('plans/hello.sop');
  await editor.locator('.view-line', { hasText: '@greeting greet $name' }).waitFor({ state: 'visible', timeout: 30000 });
  await page.locator('.statusbar-item', { hasText: /^LightSOPLang$/ }).first().waitFor({ state: 'visible', timeout: 30000 });
  // The grammar colours the header: name, command, reference, bare text and comment differ.
  const classes = await waitFor('the grammar to colour the @shout line', async () => {
    const spans = await editor.locator('.view-line', { hasText: '@shout' }).first().evaluate((el) =>
      [...el.querySelectorAll('span span')].map((s) => `${s.className}=${s.textContent}`));
    return new Set(spans.map((c) => c.split('=')[0])).size >= 4 ? spans : null;
  });
  log('token classes:', JSON.stringify(classes));
  await waitFor('the extension to activate', () => /_doActivateExtension lightsop\.lightsoplang\b/.test(vs.extHostLog()), 30000);
  await editor.locator('.codelens-decoration', { hasText: 'Run plan' }).first().waitFor({ state: 'visible', timeout: 30000 });
  await vs.shot('language-mode');
  check('hello.sop opens in language mode "LightSOPLang", coloured by the grammar, with the "Run plan" CodeLens');

  // 2. Diagnostics in the Problems panel, following typing.
  await vs.openFile('plans/broken.sop');
  await editor.locator('.squiggly-error').first().waitFor({ state: 'attached', timeout: 30000 });
  let rows = await vs.problems("Variable 'nmae' is not declared");
  log('problems:', JSON.stringify(rows));
  await vs.shot('problems');
  check('the undefined $nmae is an error in the Problems panel');

  await typeLineAfter(vs, '@hello greet $nmae', '@again upper $helo');
  rows = await vs.problems("Variable 'helo' is not declared");
  await vs.shot('problems-after-typing');
  check('typing a line with an undefined $helo adds its diagnostic');
  await page.keyboard.press('End');
  await page.keyboard.press('Backspace');
  await page.keyboard.press('Backspace');
  await page.keyboard.type('llo', { delay: 15 });
  await closeSuggest(page);
  await waitFor('the $helo diagnostic to go away', async () => {
    const now = await vs.problems();
    return !now.some((r) => r.includes("'helo'")) && now.some((r) => r.includes("'nmae'"));
  });
  check('fixing it to $hello removes that diagnostic and keeps the other');

  // 3. Completion lists the skills module's commands (the server loaded it: the workspace is trusted).
  await typeLineAfter(vs, '@again upper $hello', '@count ');
  await page.keyboard.press('End');
  const items = await vs.completions('word_count');
  log('completion:', JSON.stringify(items.slice(0, 12)));
  for (const name of ['greet', 'upper', 'word_count', 'pause']) {
    if (!items.some((i) => i.startsWith(name))) throw new Error(`completion has no ${name}: ${JSON.stringify(items)}`);
  }
  await vs.shot('completion');
  await closeSuggest(page);
  check('completion after "@count " lists the skills commands greet, upper, word_count, pause');
  // Back to broken.sop as it is on disk. The edits are only in the editor (auto save is off in
  // the harness): the tab is dirty and the file still holds the fixture's text.
  const brokenOnDisk = fs.readFileSync(path.join(WORKSPACE, 'plans', 'broken.sop'), 'utf8');
  const brokenTab = page.locator('.tabs-container .tab', { hasText: 'broken.sop' }).first();
  const isDirty = async () => (await brokenTab.getAttribute('class')).split(/\s+/).includes('dirty');
  await waitFor('the broken.sop tab to show unsaved edits', isDirty, 10000);
  if (fs.readFileSync(path.join(vs.dirs.ws, 'plans', 'broken.sop'), 'utf8') !== brokenOnDisk) throw new Error('the edits of broken.sop were written to disk');
  await vs.runCommand('File: Revert File');
  await waitFor('broken.sop to be reverted (tab clean, the editor shows the file on disk)', async () => {
    const clean = !(await isDirty());
    // Monaco reuses line elements, so their DOM order is not the line order: compare sorted.
    const shown = (await editor.locator('.view-line').allInnerTexts()).map((t) => t.replace(/\u00a0/g, ' ').trimEnd()).filter(Boolean).sort();
    return clean && JSON.stringify(shown) === JSON.stringify(brokenOnDisk.split('\n').filter(Boolean).sort()) ? true : new Error(`clean: ${clean}, lines: ${JSON.stringify(shown)}`);
  });

  // 4. Run Plan from the palette: every declaration's result.
  await vs.openFile('plans/hello.sop');
  await vs.runCommand('LightSOPLang: Run Plan');
  const note = await vs.notification('hello.sop: 5 variables', 60000);
  log('notification:', JSON.stringify(note));
  if (!/5 succeeded, 0 failed/.test(note)) throw new Error(`unexpected run summary ${JSON.stringify(note)}`);
  const pane = await variablesPane(page);
  const expected = {
    name: 'success · Ada Lovelace',
    greeting: 'success · Hello, Ada Lovelace!',
    shout: 'success · HELLO, ADA LOVELACE!',
    count: 'success · 3',
    lastAnswer: 'success · HELLO, ADA LOVELACE!',
  };
  const viewRows = await waitFor('every variable in the Plan Variables view', async () => {
    const texts = (await pane.locator('.monaco-list-row').allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim());
    return Object.entries(expected).every(([n, v]) => texts.some((t) => t.includes(`@${n}`) && t.includes(v))) ? texts : null;
  });
  log('Plan Variables:', JSON.stringify(viewRows));
  const inline = await waitFor('inline results after each declaration', async () => {
    const texts = await editor.locator('.view-line').evaluateAll((lines) => lines.map((l) =>
      [...l.querySelectorAll('span')].map((s) => getComputedStyle(s, '::after').content).filter((c) => c && c !== 'none' && c !== 'normal').join('')));
    const joined = texts.join('\n');
    return ['Ada Lovelace', 'Hello, Ada Lovelace!', 'HELLO, ADA LOVELACE!', '3'].every((v) => joined.includes(v)) ? texts.filter(Boolean) : null;
  });
  log('inline results:', JSON.stringify(inline));
  await vs.shot('run-plan');
  check('Run Plan from the palette: 5 succeeded; each value is shown inline and in the Plan Variables view');

  // 5. The Plan Graph: the plan's nodes, coloured by the run, click reveals.
  await vs.runCommand('LightSOPLang: Show Plan Graph');
  const frame = await graphFrame(page, 'hello.sop');
  const nodes = await waitFor('5 graph nodes, all successful', async () => {
    const list = await frame.evaluate(() => [...document.querySelectorAll('g.nodes > g')].map((g) => `${g.getAttribute('data-name')}:${g.getAttribute('data-status')}`));
    return list.length === 5 && list.every((n) => n.endsWith(':success')) ? list : null;
  });
  const edgeCount = await frame.evaluate(() => document.querySelectorAll('path.edge').length);
  log('graph nodes:', JSON.stringify(nodes), 'edges:', edgeCount);
  if (edgeCount !== 4) throw new Error(`expected 4 edges, got ${edgeCount}`);
  await vs.shot('plan-graph');
  check('Show Plan Graph opens a webview with the 5 nodes (coloured success) and 4 edges');

  await frame.locator('g.nodes > g[data-name="count"]').click();
  await page.locator('.statusbar-item', { hasText: /Ln 5, Col/ }).first().waitFor({ state: 'visible', timeout: 30000 });
  check('clicking the @count node puts the cursor on its line (Ln 5)');

  // 6. Edit, run again: only what changed re-runs, and the graph follows the edit.
  await typeLineAfter(vs, '@name', '@extra upper $name');
  await waitFor('the graph to show the new @extra node', () => frame.evaluate(() => document.querySelectorAll('g.nodes > g').length === 6));
  await vs.runCommand('LightSOPLang: Run Plan');
  const second = await vs.notification('hello.sop: 6 variables', 60000);
  if (!/6 succeeded/.test(second)) throw new Error(`unexpected second run summary ${JSON.stringify(second)}`);
  // The notification's "Show Output" opens the LightSOPLang output channel with the run log.
  await page.locator('.notifications-toasts .notification-toast', { hasText: 'hello.sop: 6 variables' }).first()
    .getByRole('button', { name: 'Show Output' }).click();
  const outputText = await waitFor('the run log in the output channel', async () => {
    const t = ((await page.locator('.panel .monaco-editor .view-lines').first().innerText().catch(() => '')) || '').replace(/\u00a0/g, ' ');
    return /6 variables: 6 succeeded.*2 commands ran/.test(t) ? t : new Error(`output shows ${JSON.stringify(t.slice(-300))}`);
  });
  // Only the new declaration runs, and @lastAnswer, which the runtime always re-runs (6.6).
  const lines = outputText.split('\n');
  const lastRun = lines.map((l, i) => (/^\[run\] .*hello\.sop \(skills/.test(l) ? i : -1)).filter((i) => i >= 0).pop();
  const started = lines.slice(lastRun).filter((l) => /^\s*… @/.test(l)).map((l) => l.trim().split(' ')[1]);
  log('second run started:', JSON.stringify(started));
  if (JSON.stringify(started.sort()) !== JSON.stringify(['@extra', '@lastAnswer'])) throw new Error(`the second run started ${JSON.stringify(started)}`);
  await vs.shot('incremental-run');
  check('after adding @extra, Run Plan re-runs only @extra (and @lastAnswer, always re-run); the graph has 6 nodes');

  // 7. An edited skills module is used by the next run (imported again, fresh interpreter).
  const skillsFile = path.join(vs.dirs.ws, 'skills.mjs');
  fs.writeFileSync(skillsFile, fs.readFileSync(skillsFile, 'utf8').replace('`Hello, ${text(args)}!`', '`Hi, ${text(args)}!`'));
  await vs.openFile('plans/hello.sop');
  await vs.runCommand('LightSOPLang: Run Plan');
  await vs.notification('hello.sop: 6 variables', 60000);
  const paneAfterEdit = await variablesPane(page);
  await waitFor('the new greeting from the edited skills module', async () => {
    const texts = (await paneAfterEdit.locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
    return texts.some((t) => t.includes('@greeting') && t.includes('success · Hi, Ada Lovelace!')) && texts.some((t) => t.includes('@shout') && t.includes('HI, ADA LOVELACE!'));
  });
  check('after skills.mjs changes on disk, Run Plan uses the new code (greeting is "Hi, Ada Lovelace!")');

  // 8. Run up to Here: the declaration under the cursor and what it depends on, nothing else.
  await vs.openFile('plans/letter.sop');
  await editor.locator('.view-line', { hasText: '@words word_count $letter' }).first().click();
  await vs.runCommand('LightSOPLang: Run up to Here');
  const upTo = await vs.notification('letter.sop up to @words', 60000);
  log('run up to here:', JSON.stringify(upTo));
  if (!/3 variables: 2 succeeded, 0 failed, 0 canceled, 1 not run/.test(upTo)) throw new Error(`unexpected Run up to Here summary ${JSON.stringify(upTo)}`);
  const letterPane = await variablesPane(page);
  await waitFor('@words = 5 and @shout not run in the Plan Variables view', async () => {
    const texts = (await letterPane.locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
    return texts.some((t) => t.includes('@words') && t.includes('success · 5')) && texts.some((t) => t.includes('@shout') && /not run|undefined/.test(t));
  });
  await vs.shot('run-up-to-here');
  check('Run up to Here on @words runs @letter and @words (the here-doc body has 5 words) and leaves @shout');

  // 9. Cancel from the progress notification.
  await vs.openFile('plans/slow.sop');
  await vs.runCommand('LightSOPLang: Run Plan');
  const progress = page.locator('.notifications-toasts .notification-toast', { hasText: 'running slow.sop' }).first();
  await progress.waitFor({ state: 'visible', timeout: 30000 });
  const slowPane = await variablesPane(page);
  await waitFor('@wait to be running', async () => (await slowPane.locator('.monaco-list-row', { hasText: '@wait' }).first().innerText()).includes('running'));
  await vs.shot('running');
  await progress.getByRole('button', { name: 'Cancel' }).click();
  const canceled = await vs.notification('slow.sop canceled', 30000);
  log('cancel:', JSON.stringify(canceled));
  await waitFor('@start success and @wait no longer running', async () => {
    const texts = (await slowPane.locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
    return texts.some((t) => t.includes('@start') && t.includes('success · go')) && texts.some((t) => t.includes('@wait') && !t.includes('running'));
  });
  check('Cancel on the progress notification stops the run of slow.sop ("canceled" summary, @wait no longer running)');

  // 10. Set LLM API Key (secret storage), then an #!english plan: the model (a fake endpoint)
  //     writes the plan, it runs, the graph shows it; the key reaches the endpoint and no file.
  await vs.runCommand('LightSOPLang: Set LLM API Key');
  const keyBox = page.locator('.quick-input-widget input[type="password"]');
  await keyBox.waitFor({ state: 'visible', timeout: 30000 });
  await keyBox.fill(API_KEY);
  await vs.shot('api-key');
  await page.keyboard.press('Enter');
  await vs.notification('the LLM API key is stored in secret storage', 30000);
  await vs.openFile('plans/english.sop');
  await editor.locator('.view-line', { hasText: '#!english' }).first().waitFor({ state: 'visible', timeout: 30000 });
  await vs.runCommand('LightSOPLang: Run Plan');
  const englishRun = await vs.notification('english.sop: 3 variables', 60000);
  if (!/3 succeeded/.test(englishRun)) throw new Error(`unexpected english run summary ${JSON.stringify(englishRun)}`);
  if (llmRequests.length === 0) throw new Error('the fake LLM endpoint got no request');
  const request = llmRequests[llmRequests.length - 1];
  if (request.authorization !== `Bearer ${API_KEY}`) throw new Error(`the endpoint got authorization ${JSON.stringify(request.authorization.slice(0, 12))}…, not the stored key`);
  if (!request.url.endsWith('/chat/completions') || !request.body.includes('Greet Ada Lovelace')) throw new Error(`unexpected LLM request ${request.url} ${request.body.slice(0, 200)}`);
  await vs.runCommand('LightSOPLang: Show Plan Graph');
  const englishFrame = await graphFrame(page, 'english.sop');
  const englishNodes = await waitFor('the generated plan in the graph', async () => {
    const list = await englishFrame.evaluate(() => [...document.querySelectorAll('g.nodes > g')].map((g) => `${g.getAttribute('data-name')}:${g.getAttribute('data-status')}`));
    return list.length === 3 && list.every((n) => n.endsWith(':success')) ? list : null;
  });
  log('english graph:', JSON.stringify(englishNodes));
  await vs.shot('english-plan');
  const leaks = filesContaining(vs.run, API_KEY);
  if (leaks.length > 0) throw new Error(`the API key was written to ${leaks.join(', ')}`);
  check('Set LLM API Key + #!english plan: the fake model\'s plan runs (3 succeeded) and shows in the graph; the key reached the endpoint as a Bearer token and is in no file of the VS Code server');

  // 11. Lint Workspace: every plan into the Problems panel.
  await vs.runCommand('LightSOPLang: Lint Workspace');
  const lint = await vs.notification('linted 5 plans', 60000);
  log('lint:', JSON.stringify(lint));
  if (!/linted 5 plans: 1 error,/.test(lint)) throw new Error(`unexpected lint summary ${JSON.stringify(lint)}`);
  check('Lint Workspace checks the 5 plans of the workspace: the one error is broken.sop\'s $nmae');

  // 11a. Run Plan on a plan with an error starts nothing: it says so, and no variable gets a value.
  await vs.openFile('plans/broken.sop');
  await vs.runCommand('LightSOPLang: Run Plan');
  const refusedRun = await vs.notification('nothing was run', 30000);
  log('run broken.sop:', JSON.stringify(refusedRun));
  if (!/broken\.sop has 1 error; nothing was run/.test(refusedRun)) throw new Error(`unexpected Run Plan refusal ${JSON.stringify(refusedRun)}`);
  const brokenRows = (await (await variablesPane(page)).locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
  if (brokenRows.some((t) => t.includes('Grace Hopper') || t.includes('success'))) throw new Error(`a declaration of broken.sop ran: ${JSON.stringify(brokenRows)}`);
  check('Run Plan on broken.sop starts nothing: "broken.sop has 1 error; nothing was run."');

  // 11b. A plan with a lone CR: an ordinary character to the language, a line break to VS Code.
  //      Lint Workspace reads the file from disk (the language's lines) and must point at the
  //      line VS Code shows, where the server's diagnostic is once the file is open (VS Code
  //      normalises the line breaks of an open document); Run Plan's inline results follow.
  fs.writeFileSync(path.join(vs.dirs.ws, 'plans', 'lonecr.sop'), '@a assign x\r@b assign y\n@c assign $a\n');
  await vs.runCommand('LightSOPLang: Lint Workspace');
  await vs.notification('linted 6 plans', 60000);
  const lintRows = await filteredProblems(vs, 'lonecr', "Variable 'c' is never used");
  log('Lint Workspace, lonecr.sop:', JSON.stringify(lintRows));
  const lintC = lintRows.find((r) => r.includes("Variable 'c' is never used"));
  if (!lintC.includes('[Ln 3, Col 1]')) throw new Error(`Lint Workspace puts @c's diagnostic at ${JSON.stringify(lintC)}, not on line 3 where VS Code shows @c`);
  await vs.shot('lint-lone-cr');
  check('Lint Workspace on a plan with a lone CR (not open): "Variable \'c\' is never used" at [Ln 3, Col 1], the line VS Code shows @c on');

  await vs.openFile('plans/lonecr.sop');
  await editor.locator('.view-line', { hasText: '@c assign $a' }).first().waitFor({ state: 'visible', timeout: 30000 });
  const serverRows = await filteredProblems(vs, 'lonecr', "Variable 'b' is never used");
  log('server, lonecr.sop:', JSON.stringify(serverRows));
  const serverC = serverRows.find((r) => r.includes("Variable 'c' is never used"));
  if (!serverC || !serverC.includes('[Ln 3, Col 1]')) throw new Error(`the server puts @c's diagnostic at ${JSON.stringify(serverC)}`);
  if (serverRows.filter((r) => r.includes("Variable 'c' is never used")).length !== 1) throw new Error(`Lint Workspace's entry was not left to the server: ${JSON.stringify(serverRows)}`);
  await clearProblemsFilter(vs);
  await vs.runCommand('LightSOPLang: Run Plan');
  const loneRun = await vs.notification('lonecr.sop: 3 variables', 60000);
  if (!/3 succeeded/.test(loneRun)) throw new Error(`unexpected lonecr.sop run summary ${JSON.stringify(loneRun)}`);
  const loneInline = await waitFor('the inline results of lonecr.sop on their lines', async () => {
    const shown = { a: await inlineResultOn(editor, '@a assign x'), b: await inlineResultOn(editor, '@b assign y'), c: await inlineResultOn(editor, '@c assign $a') };
    return shown.a.includes('✓ x') && shown.b.includes('✓ y') && shown.c.includes('✓ x') ? shown : new Error(JSON.stringify(shown));
  });
  log('inline results, lonecr.sop:', JSON.stringify(loneInline));
  await vs.shot('lone-cr-run');
  check('lonecr.sop opened: the server\'s entry is at [Ln 3, Col 1] too (Lint Workspace\'s is dropped); Run Plan shows each value inline on its own declaration\'s line');

  await debugging(vs);
  await chat(vs);
  await planTests(vs, { check, waitFor, log });

  // 16. Lint Workspace with an invalid lightsop.config.json: refused as `lightsop lint` refuses
  //     it (exit 3, naming the file and the field): an error message, the problem on the config
  //     file, and no plan of the folder linted without its config.
  const configFile = path.join(vs.dirs.ws, 'lightsop.config.json');
  fs.writeFileSync(configFile, '{\n  "skills": "./skills.mjs",\n  "plans": "plans/**/*.sop"\n}\n');
  await vs.runCommand('LightSOPLang: Lint Workspace');
  const refused = await vs.notification('field "plans" must be an array of glob strings', 60000);
  log('invalid config:', JSON.stringify(refused));
  if (!refused.includes(`${configFile}: field "plans" must be an array of glob strings`) || !refused.includes('were not linted')) throw new Error(`unexpected message ${JSON.stringify(refused)}`);
  const none = await vs.notification('linted 0 plans', 60000);
  if (!/linted 0 plans: 1 error/.test(none)) throw new Error(`unexpected lint summary ${JSON.stringify(none)}`);
  const configRows = await filteredProblems(vs, 'lightsop.config', 'field "plans" must be an array of glob strings');
  log('config problems:', JSON.stringify(configRows));
  if (!configRows.some((r) => r.includes('field "plans" must be an array of glob strings') && r.includes('[Ln 3, Col 12]'))) throw new Error(`no problem on the "plans" field: ${JSON.stringify(configRows)}`);
  await clearProblemsFilter(vs);
  await vs.shot('lint-invalid-config');
  check('Lint Workspace with an invalid lightsop.config.json: an error naming the file and the "plans" field, the problem on the config file at [Ln 3, Col 12], and no plan linted');

  if (vs.consoleErrors.length) log(`(browser console had ${vs.consoleErrors.length} error line(s), e.g. ${vs.consoleErrors[0].slice(0, 160)})`);
  await vs.close();
  current = null;
}

async function untrustedWorkspace() {
  // The workspace also tries to choose the LLM endpoint (where an API key would go).
  const llmBase = `http://127.0.0.1:${llm.address().port}/v1`;
  const vs = await launch({
    vsix: VSIX, workspaceFrom: WORKSPACE, name: 'untrusted', trust: false, keep: argv.includes('--keep'),
    files: { '.vscode/settings.json': JSON.stringify({ 'lightsop.llm.baseUrl': llmBase, 'lightsop.llm.model': 'fake-model' }) },
  });
  current = vs;
  const { page, editor } = vs;
  await vs.openFile('plans/hello.sop');
  await editor.locator('.view-line', { hasText: '@greeting greet $name' }).waitFor({ state: 'visible', timeout: 30000 });
  await page.locator('.statusbar-item', { hasText: /^LightSOPLang$/ }).first().waitFor({ state: 'visible', timeout: 30000 });
  await vs.runCommand('LightSOPLang: Run Plan');
  const refusal = await vs.notification('was not loaded because this workspace is not trusted', 30000);
  log('refusal:', JSON.stringify(refusal));
  await vs.shot('untrusted-refusal');
  check('in an untrusted workspace Run Plan refuses to load skills.mjs and says why');

  const requestsBefore = llmRequests.length;
  await vs.openFile('plans/english.sop');
  await editor.locator('.view-line', { hasText: '#!english' }).first().waitFor({ state: 'visible', timeout: 30000 });
  await vs.runCommand('LightSOPLang: Run Plan');
  const untrustedLlm = await vs.notification('This workspace is not trusted, so the endpoint is only taken from your user settings', 30000);
  log('untrusted english:', JSON.stringify(untrustedLlm));
  if (llmRequests.length !== requestsBefore) throw new Error('the LLM endpoint named by the untrusted workspace settings was contacted');
  await vs.shot('untrusted-llm-endpoint');
  check('in an untrusted workspace an #!english plan does not use the LLM endpoint from the workspace settings, and says why');

  // Debugging runs the plan's skills module: VS Code asks for trust first; Cancel starts nothing.
  await vs.openFile('plans/hello.sop');
  await vs.runCommand('LightSOPLang: Debug Plan');
  const trustPrompt = await dialog(page, 'Do you trust the authors of the files in this folder?');
  log('untrusted debug:', JSON.stringify(trustPrompt.message));
  await vs.shot('untrusted-debug-trust-prompt');
  await trustPrompt.box.getByRole('button', { name: 'Cancel' }).click();
  await trustPrompt.box.waitFor({ state: 'hidden', timeout: 10000 });
  if (await page.locator('.debug-toolbar').first().isVisible().catch(() => false)) throw new Error('a debug session started in the untrusted workspace');
  if ((await debugConsole(page)).includes('[debug]')) throw new Error('the plan ran in the untrusted workspace');
  check('in an untrusted workspace Debug Plan asks for workspace trust first; Cancel starts no session and runs nothing');

  // The chat: the skills module is not loaded, and the workspace cannot choose where the key goes.
  const chatRequestsBefore = llmRequests.length;
  await vs.runCommand('LightSOPLang: Open Chat');
  const frame = await chatFrame(page);
  const banners = await waitFor('the chat banners', async () => {
    const texts = await frame.evaluate(() => [...document.querySelectorAll('.banner')].map((b) => b.textContent));
    return texts.some((t) => t.includes('only taken from your user settings')) && texts.some((t) => t.includes('was not loaded because this workspace is not trusted')) ? texts : null;
  });
  log('untrusted chat:', JSON.stringify(banners));
  await frame.locator('#input').fill('e2e chat: shout and count Grace Hopper');
  await frame.locator('#input').press('Enter');
  await waitFor('the notice that no model is configured', () => frame.evaluate(() => (document.getElementById('tab-notice')?.textContent ?? '').includes('No language model is configured')));
  if (llmRequests.length !== chatRequestsBefore) throw new Error('the chat in the untrusted workspace contacted the endpoint named by the workspace');
  await vs.shot('untrusted-chat');
  check('in an untrusted workspace the chat says the skills module was not loaded and that the endpoint comes from user settings only; sending contacts nothing');
  await vs.close();
  current = null;
}

async function main() {
  if (!VSIX || !fs.existsSync(VSIX)) throw new Error(`--vsix FILE is required (got ${JSON.stringify(VSIX)})`);
  await new Promise((resolve, reject) => llm.listen(0, '127.0.0.1', resolve).on('error', reject));
  await trustedWorkspace();
  await untrustedWorkspace();
  await mcpE2e({ vsix: VSIX, keep: argv.includes('--keep'), check, track: (vs) => { current = vs; } });
}

main().then(
  () => {
    clearTimeout(watchdog);
    return finish(0);
  },
  (e) => {
    clearTimeout(watchdog);
    return finish(1, (e && e.stack) || String(e));
  },
);
