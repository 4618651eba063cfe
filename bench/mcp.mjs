// MCP tools as commands (issue 14), against server-everything from node_modules (stdio):
//   - completion latency in the language server (packages/language-server/dist/server.cjs, over
//     JSON-RPC, a trusted workspace whose lightsop.config.json names the server), at a command
//     position after `everything.`, once the server has listed its tools (goal: p50 <= 16 ms);
//     baseline: one full analyzePlan of the same plan, this process;
//   - the overhead of a tool call made by a plan (`lightsop run`, the built CLI) against the SDK's
//     own Client calling the same tool of the same server directly (goal: <= 1.2x). A plan of N
//     echo calls of one message is run with --concurrency 1 (one call after the other); its
//     summary's `(N ms)` is the run's own time (process and server start-up left out); the Client makes the same N calls one after the
//     other on one connection, in a fresh process too (bench/_mcp-direct.mjs), so both start with
//     a cold JIT. One warm-up run of each (not counted), then LIGHTSOP_BENCH_RUNS rounds (default
//     15: a round's ratio moves by a third with where the scheduler puts the two processes, so the
//     median needs many rounds to settle), each measuring both back to back in alternating order (run first, then the Client
//     first), so a change of load hits both sides of a round alike and neither always runs
//     second; the figure is the median of the rounds' ratios (and the min/min ratio), each round
//     printed with the load average it ran at.
// Nothing is asserted; the figures are reported as measured.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node.js';
import { row } from './_rows.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const serverBundle = path.join(root, 'packages/language-server/dist/server.cjs');
const cliBin = path.join(root, 'packages/cli/bin/lightsop.js');
const coreBundle = path.join(root, 'packages/core/dist/index.js');
const EVERYTHING = path.join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
for (const f of [serverBundle, cliBin, coreBundle, EVERYTHING]) {
  if (!existsSync(f)) {
    console.error(`missing ${path.relative(root, f)}: run \`npm ci && npm run build\` first`);
    process.exit(1);
  }
}
const { analyzePlan } = await import(pathToFileURL(coreBundle).href);

const COMPLETIONS = 100;
const CALLS = 1001;
const RUNS = Number(process.env.LIGHTSOP_BENCH_RUNS) || 15;

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
const median = (xs) => percentile(xs, 50);
const ms = (x) => `${x.toFixed(2)} ms`;

function workspace(files) {
  const dir = mkdtempSync(path.join(tmpdir(), 'lightsop-bench-mcp-'));
  writeFileSync(path.join(dir, 'lightsop.config.json'), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

// ---------------------------------------------------------------- completion in the language server

/** A plan of `n` declarations calling the server's tools, and a last line `@x everything.` to complete. */
function completionPlan(n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(i === 0 ? '@v0 everything.echo "start"' : `@v${i} everything.echo $v${i - 1}`);
  out.push(`@x everything.`);
  return out.join('\n') + '\n';
}

async function completionLatency() {
  const text = completionPlan(500);
  const dir = workspace({ 'plan.sop': text });
  const uri = pathToFileURL(path.join(dir, 'plan.sop')).href;
  const child = spawn(process.execPath, [serverBundle, '--stdio'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  connection.onNotification('textDocument/publishDiagnostics', () => undefined);
  connection.onNotification('window/logMessage', () => undefined);
  connection.onNotification('window/showMessage', () => undefined);
  connection.onRequest('client/registerCapability', () => null);
  connection.onRequest('workspace/configuration', () => []);
  connection.listen();
  await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(dir).href,
    workspaceFolders: [{ uri: pathToFileURL(dir).href, name: 'bench' }],
    capabilities: { textDocument: { completion: { completionItem: { snippetSupport: true } } } },
    initializationOptions: { trusted: true },
  });
  await connection.sendNotification('initialized', {});
  await connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'lightsoplang', version: 1, text } });
  const lines = text.split('\n');
  const position = { line: lines.length - 2, character: '@x everything.'.length };
  const complete = async () => {
    const t0 = performance.now();
    const list = await connection.sendRequest('textDocument/completion', { textDocument: { uri }, position });
    return { time: performance.now() - t0, items: list.items ?? list };
  };
  // The first listing: the server starts server-everything in the background and never waits on it.
  const started = performance.now();
  let first = null;
  while (performance.now() - started < 60_000) {
    const r = await complete();
    if (r.items.some((i) => i.label === 'everything.echo')) {
      first = { after: performance.now() - started, items: r.items.filter((i) => String(i.label).startsWith('everything.')).length };
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!first) throw new Error('the language server never listed server-everything\'s tools');
  for (let k = 0; k < 10; k++) await complete();
  const times = [];
  for (let k = 0; k < COMPLETIONS; k++) times.push((await complete()).time);
  await connection.sendRequest('shutdown');
  await connection.sendNotification('exit');
  connection.dispose();
  rmSync(dir, { recursive: true, force: true });

  for (let k = 0; k < 10; k++) analyzePlan(text);
  const base = [];
  for (let k = 0; k < 20; k++) {
    const t = performance.now();
    analyzePlan(text);
    base.push(performance.now() - t);
  }
  return { first, times, base: median(base), declarations: 501 };
}

// ---------------------------------------------------------------- tool-call overhead

/**
 * One `lightsop run` of a plan of `n` echo calls, one after the other (--concurrency 1): the time
 * per call from the run's own clock, the `(N ms)` of its summary, which starts when the plan
 * starts (the process's and the server's start-up, which vary by hundreds of ms on a loaded
 * machine, are left out; checking the plan is in).
 */
function runPerCall(dir, n, nodeArgs = [], env = {}) {
  const r = spawnSync(process.execPath, [...nodeArgs, cliBin, 'run', 'many.sop', '--concurrency', '1'], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', ...env }, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`lightsop run exited ${r.status}: ${r.stderr.slice(0, 500)}`);
  const m = new RegExp(`${n} variables: ${n} succeeded, 0 failed, 0 canceled, 0 not run \\((\\d+) ms\\)`).exec(r.stdout);
  if (!m) throw new Error(`no summary of ${n} successful calls: ${r.stdout.slice(-300)}`);
  return Number(m[1]) / n;
}

/** `n` echo calls of the same message (run with --concurrency 1: one after the other, like the Client's). */
function callsPlan(n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(`@v${i} everything.echo hello`);
  return out.join('\n') + '\n';
}

/**
 * The SDK's Client, in a fresh process like `lightsop run` (bench/_mcp-direct.mjs): the same `n`
 * chained calls on one connection, timed from the first call's start to the last one's end.
 */
function directPerCall(n, nodeArgs = [], env = {}) {
  const r = spawnSync(process.execPath, [...nodeArgs, path.join(root, 'bench/_mcp-direct.mjs'), EVERYTHING, String(n)], { cwd: root, encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`bench/_mcp-direct.mjs exited ${r.status}: ${r.stderr.slice(0, 500)}`);
  return Number(r.stdout.trim());
}

async function callOverhead() {
  const dir = workspace({ 'many.sop': callsPlan(CALLS) });
  // Warm-up of both sides: the file cache, the server's and Node's first start.
  runPerCall(dir, CALLS);
  directPerCall(CALLS);
  const rounds = [];
  for (let k = 0; k < RUNS; k++) {
    const load = os.loadavg()[0];
    let run;
    let direct;
    if (k % 2 === 0) {
      run = runPerCall(dir, CALLS);
      direct = directPerCall(CALLS);
    } else {
      direct = directPerCall(CALLS);
      run = runPerCall(dir, CALLS);
    }
    rounds.push({ run, direct, ratio: run / direct, load });
  }
  rmSync(dir, { recursive: true, force: true });
  const runs = rounds.map((r) => r.run);
  const directs = rounds.map((r) => r.direct);
  return { run: median(runs), direct: median(directs), ratio: median(rounds.map((r) => r.ratio)), minMin: Math.min(...runs) / Math.min(...directs), rounds };
}

/**
 * Where a call's time goes, seen from inside each process (a diagnostic; the figure above is the
 * row): a hook loaded with --require stamps each `tools/call` request written to the server and
 * each echo result read from it. Per call (calls 101 to N-1, past the cold start): the client's
 * own time, from reading a result to writing the next request (the SDK's parsing of the result
 * included), and the round trip, from writing a request to reading its result (the server, the
 * pipes and the scheduler). For lightsop run also the part of its clock outside the calls (from
 * its summary's time: checking and applying the plan before the first request, the results after
 * the last one).
 */
const LATENCY_HOOK = `'use strict';
const net = require('node:net');
const { EventEmitter } = require('node:events');
const write = net.Socket.prototype.write;
const emit = EventEmitter.prototype.emit;
const writes = [];
const reads = [];
net.Socket.prototype.write = function (chunk, ...rest) {
  if (typeof chunk === 'string' && chunk.includes('"tools/call"')) writes.push(performance.now());
  return write.call(this, chunk, ...rest);
};
EventEmitter.prototype.emit = function (event, chunk, ...rest) {
  if (event === 'data' && this instanceof net.Socket && writes.length > reads.length && chunk && chunk.length > 0 && String(chunk).includes('Echo: ')) reads.push(performance.now());
  return emit.call(this, event, chunk, ...rest);
};
process.on('exit', () => require('node:fs').writeFileSync(process.env.LIGHTSOP_BENCH_LATENCY_OUT, JSON.stringify({ writes, reads })));
`;

function latencySplit(runs) {
  const dir = workspace({ 'many.sop': callsPlan(CALLS), 'latency-hook.cjs': LATENCY_HOOK });
  const out = path.join(dir, 'latency.json');
  const hook = ['--require', path.join(dir, 'latency-hook.cjs')];
  const env = { LIGHTSOP_BENCH_LATENCY_OUT: out };
  const read = () => {
    const { writes, reads } = JSON.parse(readFileSync(out, 'utf8'));
    if (writes.length !== CALLS || reads.length !== CALLS) throw new Error(`the latency hook saw ${writes.length} requests and ${reads.length} results`);
    const client = [];
    const trip = [];
    for (let i = 100; i < CALLS - 1; i++) {
      trip.push(reads[i] - writes[i]);
      client.push(writes[i + 1] - reads[i]);
    }
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
    return { client: median(client), trip: median(trip), clientMean: mean(client), tripMean: mean(trip), span: reads[CALLS - 1] - writes[0] };
  };
  const sides = { run: [], direct: [] };
  for (let k = 0; k < runs; k++) {
    const perCall = runPerCall(dir, CALLS, hook, env);
    const seen = read();
    sides.run.push({ ...seen, outside: perCall * CALLS - seen.span });
    directPerCall(CALLS, hook, env);
    sides.direct.push(read());
  }
  rmSync(dir, { recursive: true, force: true });
  const of = (xs, key) => median(xs.map((x) => x[key]));
  const side = (xs) => ({ client: of(xs, 'client'), trip: of(xs, 'trip'), clientMean: of(xs, 'clientMean'), tripMean: of(xs, 'tripMean') });
  return { run: { ...side(sides.run), outside: of(sides.run, 'outside') }, direct: side(sides.direct) };
}

console.log(`server-everything: ${path.relative(root, EVERYTHING)}`);
const c = await completionLatency();
console.log(`completion at "@x everything." in a ${c.declarations}-declaration plan (${c.first.items} everything.* tools; first listed ${ms(c.first.after)} after opening), ${COMPLETIONS} requests:`);
console.log(`  p50 ${ms(median(c.times))}, p95 ${ms(percentile(c.times, 95))}; baseline one full analyzePlan ${ms(c.base)}   goal p50 <= 16 ms: ${median(c.times) <= 16 ? 'met' : 'NOT met'}`);

const o = await callOverhead();
console.log(`one echo call of ${CALLS} made one after the other, ${RUNS} rounds after a warm-up (per call: lightsop run's own time from its summary / the SDK Client's):`);
o.rounds.forEach((r, k) => console.log(`  round ${String(k + 1).padStart(2)} (${k % 2 === 0 ? 'run first   ' : 'Client first'}, load ${r.load.toFixed(1)}): ${r.run.toFixed(3)} / ${r.direct.toFixed(3)} ms = ${r.ratio.toFixed(3)}x`));
console.log(`  medians: lightsop run ${ms(o.run)}, SDK Client ${ms(o.direct)} per call; ratio ${o.ratio.toFixed(2)}x (median of the rounds), min/min ${o.minMin.toFixed(2)}x   goal <= 1.2x: ${o.ratio <= 1.2 ? 'met' : 'NOT met'}   (load average ${os.loadavg()[0].toFixed(1)} at the end)`);
const l = latencySplit(3);
const us = (x) => `${(x * 1000).toFixed(0)} us`;
console.log('where a call\'s time goes, from inside each process (3 runs each with a stamping hook; calls 101-1000, median and mean per call, medians of the runs):');
console.log(`  the client's own time, result read -> next request written: lightsop run ${us(l.run.client)} (mean ${us(l.run.clientMean)}), SDK Client ${us(l.direct.client)} (mean ${us(l.direct.clientMean)})`);
console.log(`  the round trip, request written -> result read:              lightsop run ${us(l.run.trip)} (mean ${us(l.run.tripMean)}), SDK Client ${us(l.direct.trip)} (mean ${us(l.direct.tripMean)})`);
console.log(`  lightsop run's clock outside the calls (plan checked and applied before the first request, results after the last): ${l.run.outside.toFixed(0)} ms, ${us(l.run.outside / CALLS)} per call`);
console.log('');
row('MCP completion p50 (tools listed)', { value: ms(median(c.times)), baseline: `full analyzePlan ${ms(c.base)}`, ratio: `${(median(c.times) / c.base).toFixed(2)}x`, goal: '<= 16 ms' });
row('MCP tool call overhead (lightsop run vs SDK client)', { value: `${ms(o.run)} per call`, baseline: `SDK Client ${ms(o.direct)} per call`, ratio: `${o.ratio.toFixed(2)}x (min/min ${o.minMin.toFixed(2)}x; load ${Math.min(...o.rounds.map((r) => r.load)).toFixed(1)}-${Math.max(...o.rounds.map((r) => r.load)).toFixed(1)})`, goal: '<= 1.2x' });
