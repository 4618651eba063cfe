// MCP tools as commands (issue 14), against server-everything from node_modules (stdio):
//   - completion latency in the language server (packages/language-server/dist/server.cjs, over
//     JSON-RPC, a trusted workspace whose lightsop.config.json names the server), at a command
//     position after `everything.`, once the server has listed its tools (goal: p50 <= 16 ms);
//     baseline: one full analyzePlan of the same plan, this process;
//   - the overhead of a tool call made by a plan (`lightsop run`, the built CLI) against the SDK's
//     own Client calling the same tool of the same server directly (goal: <= 1.2x). A plan of N
//     echo calls chained one after the other, less a plan of one call, divided by N - 1, is the
//     cost of one call in a run (process and server start-up cancel out); the Client calls echo N
//     times one after the other on one connection. Medians of a few runs each.
// Nothing is asserted; the figures are reported as measured.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
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
const CALLS = 201;
const RUNS = 5;

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

function runPlanOnce(dir, file) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [cliBin, 'run', file, '--json'], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 64 * 1024 * 1024 });
  const time = performance.now() - t0;
  if (r.status !== 0) throw new Error(`lightsop run ${file} exited ${r.status}: ${r.stderr.slice(0, 500)}`);
  return time;
}

function chainPlan(n) {
  const out = ['@v0 everything.echo "x"'];
  for (let i = 1; i < n; i++) out.push(`@v${i} everything.echo $v${i - 1}`);
  return out.join('\n') + '\n';
}

async function directCalls(n) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  for (let k = 0; k < 20; k++) await client.callTool({ name: 'echo', arguments: { message: 'warm' } });
  const t0 = performance.now();
  let previous = 'x';
  for (let i = 0; i < n; i++) {
    // The same messages as the plan's: each call echoes the previous answer.
    const r = await client.callTool({ name: 'echo', arguments: { message: previous } });
    previous = r.content[0].text;
  }
  const time = performance.now() - t0;
  await client.close();
  return time / n;
}

async function callOverhead() {
  const dir = workspace({ 'one.sop': chainPlan(1), 'many.sop': chainPlan(CALLS) });
  runPlanOnce(dir, 'one.sop'); // warm the file cache
  const perCall = [];
  const oneTimes = [];
  const manyTimes = [];
  for (let k = 0; k < RUNS; k++) {
    const one = runPlanOnce(dir, 'one.sop');
    const many = runPlanOnce(dir, 'many.sop');
    oneTimes.push(one);
    manyTimes.push(many);
    perCall.push((many - one) / (CALLS - 1));
  }
  const direct = [];
  for (let k = 0; k < RUNS; k++) direct.push(await directCalls(CALLS));
  rmSync(dir, { recursive: true, force: true });
  return { run: median(perCall), direct: median(direct), oneTimes, manyTimes, perCall, directs: direct };
}

console.log(`server-everything: ${path.relative(root, EVERYTHING)}`);
const c = await completionLatency();
console.log(`completion at "@x everything." in a ${c.declarations}-declaration plan (${c.first.items} everything.* tools; first listed ${ms(c.first.after)} after opening), ${COMPLETIONS} requests:`);
console.log(`  p50 ${ms(median(c.times))}, p95 ${ms(percentile(c.times, 95))}; baseline one full analyzePlan ${ms(c.base)}   goal p50 <= 16 ms: ${median(c.times) <= 16 ? 'met' : 'NOT met'}`);

const o = await callOverhead();
const ratio = o.run / o.direct;
console.log(`one echo call, ${CALLS} chained calls, median of ${RUNS} runs:`);
console.log(`  lightsop run (a plan of ${CALLS} minus a plan of 1, per call): ${ms(o.run)}   runs: 1 call ${o.oneTimes.map((t) => t.toFixed(0)).join('/')} ms, ${CALLS} calls ${o.manyTimes.map((t) => t.toFixed(0)).join('/')} ms`);
console.log(`  SDK Client directly: ${ms(o.direct)} (${o.directs.map((t) => t.toFixed(3)).join('/')})`);
console.log(`  ratio ${ratio.toFixed(2)}x   goal <= 1.2x: ${ratio <= 1.2 ? 'met' : 'NOT met'}`);
console.log('');
row('MCP completion p50 (tools listed)', { value: ms(median(c.times)), baseline: `full analyzePlan ${ms(c.base)}`, ratio: `${(median(c.times) / c.base).toFixed(2)}x`, goal: '<= 16 ms' });
row('MCP tool call overhead (lightsop run vs SDK client)', { value: `${ms(o.run)} per call`, baseline: `SDK Client ${ms(o.direct)} per call`, ratio: `${ratio.toFixed(2)}x`, goal: '<= 1.2x' });
