// Language server latency (issues 4 and 13), driven over JSON-RPC against the built server
// (packages/language-server/dist/server.cjs, spawned with --stdio, as editors run it) in a
// workspace with a skills description, on two generated plans: 10,000 declarations, and
// 100,000 lines. For each, a fresh server:
//   - open -> first diagnostics (goal on the 10k-declaration plan: <= 150 ms, the median of 5
//     fresh servers there; includes the config load and the first, full analysis);
//   - one-character edit -> publishDiagnostics for that version, end to end from sending didChange,
//     adaptive debounce included (goals: 10k declarations p50 <= 30 ms, p95 <= 60 ms; 100k lines
//     p50 <= 100 ms);
//   - completion latency at a `$` argument (goal: p50 <= 16 ms), on a settled document and right
//     after an edit (before that version's diagnostics), on the 10k-declaration plan;
//   - the server's start: spawn -> initialize result (no goal; it shows what the server does
//     before the first didOpen, e.g. loading its bundle through the code cache);
// each printed next to one full analyzePlan of the same text with the built @lightsop/core,
// measured in the same run. Before measuring, one server is started and stopped, so that the
// server's V8 code cache exists as it does after an editor's first session (LIGHTSOP_CODE_CACHE=0
// measures without it). Nothing is asserted; the figures are reported as measured.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { row } from './_rows.mjs';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// LIGHTSOP_BENCH_SERVER=path/to/server.cjs measures another build of the server (e.g. an older
// commit's, for before/after figures) against the same baseline.
const serverBundle = process.env.LIGHTSOP_BENCH_SERVER ? path.resolve(process.env.LIGHTSOP_BENCH_SERVER) : path.join(root, 'packages/language-server/dist/server.cjs');
const coreBundle = path.join(root, 'packages/core/dist/index.js');
for (const f of [serverBundle, coreBundle]) {
  if (!existsSync(f)) {
    console.error(`missing ${path.relative(root, f)}: run \`npm run build\` first`);
    process.exit(1);
  }
}
const { analyzePlan } = await import(pathToFileURL(coreBundle).href);

const EDITS = 50;
const COMPLETIONS = 50;
const WARMUP = 10;
/** Fresh servers whose open is measured on the 10k-declaration plan (the row is their median). */
const OPENS = 5;
const SKILLS = { fetch: 'Downloads a URL', summarize: 'Summarizes text', translate: 'Translates text', word_count: 'Counts words' };

/** A realistic plan: comments, quoted arguments, references, multi-line text and here-docs. */
function generatePlan({ lines = Infinity, declarations = Infinity }) {
  const out = [];
  const commands = Object.keys(SKILLS);
  let i = 0;
  while (out.length < lines - 2 && i < declarations - 1) {
    if (i % 7 === 0) out.push(`# Step ${i}: gather and condense`);
    if (i === 0) out.push('@v0 fetch "https://example.org/start"');
    else if (i % 11 === 0) {
      out.push(`@v${i} assign`, `--begin-T${i}--`, `Template ${i} with $literal text`, `--end-T${i}--`);
    } else {
      const deps = [`$v${i - 1}`];
      if (i > 5 && i % 3 === 0) deps.push(`$v${i - 5}`);
      out.push(`@v${i} ${commands[i % commands.length]} ${deps.join(' ')} "arg ${i}" plain${i} # note ${i}`);
      if (i % 5 === 0) out.push('Keep it under three sentences.', '  Mention the main points.');
    }
    out.push('');
    i++;
  }
  out.push(`@lastAnswer final_answer $v${i - 1}`);
  return { text: out.join('\n') + '\n', declarations: i + 1 };
}

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
const ms = (x) => `${x.toFixed(1)} ms`;

const ratio = (x, base) => `${(x / base).toFixed(2)}x`;
const verdict = (x, goal) => (goal === undefined ? '' : x <= goal ? `goal <= ${goal} ms: met` : `goal <= ${goal} ms: NOT met`);

/** One full parse and validation of the same text, in this process, warmed up like the server is by the time it is measured. */
function baselineOf(text) {
  // No forced GC between runs: it makes every run slower and is not what the server sees.
  for (let k = 0; k < 10; k++) analyzePlan(text, { skills: SKILLS });
  globalThis.gc?.();
  const samples = [];
  for (let k = 0; k < 20; k++) {
    const t = performance.now();
    analyzePlan(text, { skills: SKILLS });
    samples.push(performance.now() - t);
  }
  return { p50: percentile(samples, 50), min: Math.min(...samples), runs: samples.length };
}

/** Starts a server in a fresh workspace, opens the plan and measures it; the server is shut down at the end. */
async function measure(text, { completions, openOnly = false }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'lightsop-bench-'));
  writeFileSync(path.join(dir, 'lightsop.config.json'), JSON.stringify({ skills: './skills.json' }));
  writeFileSync(path.join(dir, 'skills.json'), JSON.stringify(SKILLS));
  const uri = pathToFileURL(path.join(dir, 'plan.sop')).href;

  const spawned = performance.now();
  const child = spawn(process.execPath, [serverBundle, '--stdio'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const waiting = new Map(); // version -> resolve
  const arrived = new Map(); // version -> time
  connection.onNotification('textDocument/publishDiagnostics', (p) => {
    if (p.uri !== uri) return;
    arrived.set(p.version, performance.now());
    waiting.get(p.version)?.();
  });
  connection.onNotification('window/logMessage', () => undefined);
  connection.onRequest('client/registerCapability', () => null);
  connection.listen();

  const diagnosticsFor = (version) => new Promise((resolve, reject) => {
    if (arrived.has(version)) return resolve(arrived.get(version));
    const timer = setTimeout(() => reject(new Error(`no diagnostics for version ${version} after 30 s`)), 30_000);
    waiting.set(version, () => {
      clearTimeout(timer);
      resolve(arrived.get(version));
    });
  });

  await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(dir).href,
    workspaceFolders: [{ uri: pathToFileURL(dir).href, name: 'bench' }],
    capabilities: { textDocument: { completion: { completionItem: { snippetSupport: true } } } },
  });
  const startTime = performance.now() - spawned;
  await connection.sendNotification('initialized', {});
  let version = 1;
  const openStart = performance.now();
  await connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'lightsoplang', version, text } });
  const openTime = (await diagnosticsFor(version)) - openStart;
  if (openOnly) {
    await stop(child, connection, dir);
    return { startTime, openTime };
  }

  // The edit site: the quoted argument of a declaration in the middle of the plan.
  const lines = text.split('\n');
  const editLine = lines.findIndex((l, n) => n > lines.length / 2 && /^@v\d+ \w+ \$v\d+ "arg/.test(l));
  const editChar = lines[editLine].indexOf('"arg') + 1;
  // The completion site: after the `$` of that line's first reference.
  const completeChar = lines[editLine].indexOf('$') + 1;

  let inserted = false;
  async function oneEdit() {
    // Alternately insert and delete one character, so the plan stays the same size.
    const range = inserted
      ? { start: { line: editLine, character: editChar }, end: { line: editLine, character: editChar + 1 } }
      : { start: { line: editLine, character: editChar }, end: { line: editLine, character: editChar } };
    const change = { range, text: inserted ? '' : 'x' };
    inserted = !inserted;
    version++;
    const t0 = performance.now();
    await connection.sendNotification('textDocument/didChange', { textDocument: { uri, version }, contentChanges: [change] });
    return { t0, version };
  }
  const complete = async () => {
    const t0 = performance.now();
    const list = await connection.sendRequest('textDocument/completion', { textDocument: { uri }, position: { line: editLine, character: completeChar } });
    return { time: performance.now() - t0, items: list.items.length, incomplete: list.isIncomplete };
  };

  for (let k = 0; k < WARMUP; k++) {
    const e = await oneEdit();
    await diagnosticsFor(e.version);
  }
  const diagnosticsTimes = [];
  for (let k = 0; k < EDITS; k++) {
    const e = await oneEdit();
    diagnosticsTimes.push((await diagnosticsFor(e.version)) - e.t0);
  }

  const settledTimes = [];
  const afterEditTimes = [];
  let sample;
  if (completions) {
    for (let k = 0; k < COMPLETIONS; k++) {
      sample = await complete();
      settledTimes.push(sample.time);
    }
    for (let k = 0; k < COMPLETIONS; k++) {
      const e = await oneEdit();
      afterEditTimes.push((await complete()).time);
      await diagnosticsFor(e.version);
    }
  }

  await stop(child, connection, dir);
  return { startTime, openTime, diagnosticsTimes, settledTimes, afterEditTimes, sample };
}

/** Shuts a server down, waits for its exit (when it writes its code cache) and removes its workspace. */
async function stop(child, connection, dir) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await connection.sendRequest('shutdown');
  await connection.sendNotification('exit');
  await exited;
  connection.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/** The open and start times of `runs` fresh servers on the same text (the first one's from `first`). */
async function opens(text, first, runs) {
  const out = [first];
  for (let k = 1; k < runs; k++) out.push(await measure(text, { openOnly: true }));
  return { open: out.map((r) => r.openTime), start: out.map((r) => r.startTime) };
}

/** Starts a server and stops it: a server that found no code cache writes one when it exits. */
async function primeCodeCache() {
  const child = spawn(process.execPath, [serverBundle, '--stdio'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  connection.onNotification('window/logMessage', () => undefined);
  connection.listen();
  await connection.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
  await stop(child, connection, null);
}

function describePlan(label, { text, declarations }) {
  const lineCount = text.split('\n').length - 1;
  console.log(`${label}: ${lineCount} lines, ${declarations} declarations, ${(text.length / 1024).toFixed(0)} KiB; skills description with ${Object.keys(SKILLS).length} commands`);
}

function report(result, starts, openTimes, base, goals) {
  const spread = (xs) => (xs.length > 1 ? ` (median of ${xs.length} fresh servers; min ${ms(Math.min(...xs))}, max ${ms(Math.max(...xs))})` : '');
  const open = percentile(openTimes, 50);
  console.log(`  baseline: one full analyzePlan (built @lightsop/core, this process): p50 ${ms(base.p50)} (min ${ms(base.min)}, ${base.runs} runs)`);
  console.log(`  server start (spawn -> initialize result): ${ms(percentile(starts, 50)).padStart(9)}${spread(starts)}; node -e 0: ${ms(nodeStart)}`);
  console.log(`  open -> first diagnostics: ${ms(open).padStart(9)} = ${ratio(open, base.p50).padStart(6)} baseline   ${verdict(open, goals.open)}${spread(openTimes)}`);
  console.log(`  one-character edit -> publishDiagnostics for that version, ${EDITS} edits, from didChange (adaptive debounce included):`);
  for (const [p, goal] of [[50, goals.p50], [95, goals.p95]]) {
    const x = percentile(result.diagnosticsTimes, p);
    console.log(`    p${p} ${ms(x).padStart(9)} = ${ratio(x, base.p50).padStart(6)} baseline   ${verdict(x, goal)}`);
  }
  console.log(`    max ${ms(Math.max(...result.diagnosticsTimes)).padStart(9)}`);
}

console.log(`server: ${path.relative(root, serverBundle) || serverBundle}${process.env.LIGHTSOP_CODE_CACHE === '0' ? ' (code cache off)' : ''}`);
await primeCodeCache();
/** The start row's baseline: a process that does nothing, spawned to its exit (median of 5). */
const nodeStart = percentile(Array.from({ length: 5 }, () => {
  const t = performance.now();
  spawnSync(process.execPath, ['-e', '0']);
  return performance.now() - t;
}), 50);
const large = generatePlan({ declarations: 10_000 });
const huge = generatePlan({ lines: 100_000 });

describePlan('plan A', large);
const baseA = baselineOf(large.text);
const a = await measure(large.text, { completions: true });
const aOpens = await opens(large.text, a, OPENS);
report(a, aOpens.start, aOpens.open, baseA, { open: 150, p50: 30, p95: 60 });
console.log(`  completion at a \`$\` argument (${a.sample.items} items${a.sample.incomplete ? ', capped, isIncomplete' : ''}), ${COMPLETIONS} requests each:`);
for (const [label, xs] of [['settled document', a.settledTimes], ['right after an edit', a.afterEditTimes]]) {
  const p50 = percentile(xs, 50);
  console.log(`    ${label.padEnd(20)} p50 ${ms(p50).padStart(8)} = ${ratio(p50, baseA.p50).padStart(6)} baseline, p95 ${ms(percentile(xs, 95)).padStart(8)}   ${verdict(p50, 16)}`);
}
console.log('');

describePlan('plan B', huge);
const baseB = baselineOf(huge.text);
const b = await measure(huge.text, { completions: false });
report(b, [b.startTime], [b.openTime], baseB, { p50: 100 });

// The runner's summary rows (scripts/bench.mjs reads ROW lines).
const rowOf = (measure, x, base, goal) => row(measure, { value: ms(x), baseline: `full analyzePlan ${ms(base)}`, ratio: `${(x / base).toFixed(2)}x`, goal });
console.log('');
rowOf(`LSP edit -> diagnostics p50, ${large.declarations} declarations`, percentile(a.diagnosticsTimes, 50), baseA.p50, '<= 30 ms');
rowOf(`LSP edit -> diagnostics p95, ${large.declarations} declarations`, percentile(a.diagnosticsTimes, 95), baseA.p50, '<= 60 ms');
rowOf(`LSP open -> first diagnostics, ${large.declarations} declarations`, percentile(aOpens.open, 50), baseA.p50, '<= 150 ms');
rowOf('LSP completion p50 (settled)', percentile(a.settledTimes, 50), baseA.p50, '<= 16 ms');
rowOf('LSP completion p50 right after an edit (before its diagnostics)', percentile(a.afterEditTimes, 50), baseA.p50, '<= 16 ms');
const start = percentile(aOpens.start, 50);
row('LSP server start (spawn -> initialize result)', { value: ms(start), baseline: `node -e 0 ${ms(nodeStart)}`, ratio: `${(start / nodeStart).toFixed(2)}x`, goal: '-' });
rowOf(`LSP edit -> diagnostics p50, 100,000 lines`, percentile(b.diagnosticsTimes, 50), baseB.p50, '<= 100 ms');
