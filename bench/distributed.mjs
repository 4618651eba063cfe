// Distributed benchmarks (issue 16), on a private redis-server and worker processes of the built
// CLI, printed as ratios to baselines measured in the same run:
// - batch throughput with 1, 2 and 4 worker processes on a plan whose command waits 20 ms; the
//   scaling efficiency of W workers is throughput(W) / (W x throughput(1)) (goal: >= 0.8 up to 4),
//   and each run is also compared with the ideal W x slots x 50/s;
// - the per-command overhead of `run --redis` against a local run of the same plan (a chain, where
//   every command waits for the one before, and a fan-out, where all run at once).
// Needs redis-server (apt-get install -y redis-server); nothing here asserts timings.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Interpreter, UnlimitedExecutionMonitor, toCommandRegistry } from '../packages/runtime/dist/index.js';
import { openRemoteRegistry, parseRedisUrl, runBatch } from '../packages/distributed/dist/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(root, 'packages/cli/bin/lightsop.js');
const dir = mkdtempSync(path.join(tmpdir(), 'lightsop-bench-distributed-'));
const children = new Set();

const SKILLS = `export default {
  wait20: { description: 'waits 20 ms', run: async (args) => { await new Promise((r) => setTimeout(r, 20)); return String(args[0]); } },
  echo: { description: 'returns its argument', run: async (args) => String(args[0] ?? '') },
};
`;
writeFileSync(path.join(dir, 'skills.mjs'), SKILLS);
const localSkills = toCommandRegistry((await import(path.join(dir, 'skills.mjs'))).default);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function ping(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => done(String(d).includes('+PONG')));
  });
}

async function startRedis() {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--logfile', ''], { stdio: 'ignore' });
  children.add(child);
  let failed = null;
  child.once('error', (e) => (failed = e));
  while (!(await ping(port))) {
    if (failed) throw new Error(`cannot start redis-server (${failed.message}); install it: apt-get install -y redis-server`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return { port, url: `redis://127.0.0.1:${port}`, child };
}

function startWorker(url, queue, concurrency) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'worker', '--redis', url, '--skills', path.join(dir, 'skills.mjs'), '--queue', queue, '--concurrency', String(concurrency)], { stdio: ['ignore', 'ignore', 'pipe'] });
    children.add(child);
    let log = '';
    child.stderr.setEncoding('utf8').on('data', (d) => {
      log += d;
      if (log.includes(' ready: ')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker exited (${code}): ${log}`)));
  });
}

async function stopWorkers(workers) {
  await Promise.all(workers.map((w) => new Promise((r) => {
    w.once('exit', r);
    w.kill('SIGTERM');
  })));
  for (const w of workers) children.delete(w);
}

function cleanup() {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
process.on('exit', cleanup);

const redis = await startRedis();
const target = parseRedisUrl(redis.url, {});

// --- Batch throughput with 1, 2 and 4 worker processes ---------------------------------------
const plan = '@r wait20 $input\n';
writeFileSync(path.join(dir, 'plan.sop'), plan);

async function batchThroughput(workersCount, slots, perSlot, round) {
  const queue = `bench-${workersCount}-${slots}-${round}`;
  const workers = await Promise.all(Array.from({ length: workersCount }, () => startWorker(redis.url, queue, slots)));
  const count = workersCount * slots * perSlot;
  const inputs = path.join(dir, `${queue}.jsonl`);
  let text = '';
  for (let i = 0; i < count; i++) text += JSON.stringify(`${round}-${i}`) + '\n';
  writeFileSync(inputs, text);
  const out = path.join(dir, `${queue}.out.jsonl`);
  const t = performance.now();
  const summary = await runBatch({
    redis: target, queue, plan,
    inputs: { path: inputs, display: 'inputs' }, out: { path: out, display: 'out' },
    timeoutMs: 0, maxPending: 2000, reconnectTimeoutMs: 30_000,
    progress: { tty: false, columns: 80, intervalMs: 3_600_000 },
    write: () => {},
  });
  const seconds = (performance.now() - t) / 1000;
  await stopWorkers(workers);
  if (summary.written !== count || summary.notOk !== 0) throw new Error(`batch of ${count}: ${summary.written} written, ${summary.notOk} not ok`);
  return count / seconds;
}

for (const slots of [1, 4]) {
  const rows = [];
  let base = null;
  for (const workersCount of [1, 2, 4]) {
    // Best of two rounds, so the figures are about the code rather than other load on the machine.
    let rate = 0;
    for (let round = 0; round < 2; round++) rate = Math.max(rate, await batchThroughput(workersCount, slots, slots === 1 ? 80 : 40, round));
    base ??= rate;
    const ideal = workersCount * slots * 50;
    const previous = rows.at(-1);
    rows.push({
      workers: workersCount,
      'slots/worker': slots,
      'inputs/s': rate.toFixed(1),
      'ideal inputs/s': ideal,
      'vs ideal': (rate / ideal).toFixed(2),
      'scaling efficiency': (rate / (workersCount * base)).toFixed(2),
      // What the added workers brought, against what one worker alone does.
      'per added worker': previous ? ((rate - previous.rate) / ((workersCount - previous.workers) * base)).toFixed(2) : '-',
      rate,
    });
  }
  console.log(`Batch throughput, one command waiting 20 ms per input, ${slots} job slot(s) per worker process (goal: scaling efficiency >= 0.8 up to 4 workers).`);
  console.log('scaling efficiency = throughput(W) / (W x throughput(1)); per added worker = throughput gained / (workers added x throughput(1)).');
  console.table(rows.map(({ rate: _rate, ...row }) => row));
}

// --- Per-command overhead of run --redis against a local run ---------------------------------
function chainPlan(n) {
  let text = '@c0 echo start\n';
  for (let i = 1; i < n; i++) text += `@c${i} echo $c${i - 1}\n`;
  return text;
}
function fanPlan(n) {
  let text = '';
  for (let i = 0; i < n; i++) text += `@f${i} echo ${i}\n`;
  return text;
}

async function timeRun(registry, text) {
  const interpreter = new Interpreter({ registry, executionMonitor: new UnlimitedExecutionMonitor() });
  const t = performance.now();
  const result = await interpreter.updateCode(text);
  const ms = performance.now() - t;
  const bad = interpreter.entries().filter((e) => e.declaration && e.value.status !== 'success');
  if (bad.length > 0) throw new Error(`${bad.length} commands did not succeed: ${bad[0].value.data}`);
  return { ms, commands: result.commands.length };
}

{
  const queue = 'bench-overhead';
  const workers = await Promise.all([startWorker(redis.url, queue, 16), startWorker(redis.url, queue, 16)]);
  const remote = await openRemoteRegistry({ redis: target, queue, reconnectTimeoutMs: 30_000, cancelGraceMs: 5000, log: () => {} });
  const rows = [];
  for (const [shape, make, n] of [['chain', chainPlan, 200], ['fan-out', fanPlan, 500]]) {
    const text = make(n);
    await timeRun(localSkills, text);
    await timeRun(remote.registry, text); // warm-up
    let local = Infinity;
    let distributed = Infinity;
    for (let k = 0; k < 3; k++) {
      local = Math.min(local, (await timeRun(localSkills, text)).ms);
      distributed = Math.min(distributed, (await timeRun(remote.registry, text)).ms);
    }
    rows.push({
      plan: `${shape} of ${n}`,
      'local ms': local.toFixed(1),
      'run --redis ms': distributed.toFixed(1),
      'ratio': (distributed / local).toFixed(1),
      'overhead ms/command': ((distributed - local) / n).toFixed(2),
    });
  }
  await remote.close();
  await stopWorkers(workers);
  console.log('Per-command overhead of run --redis (2 workers x 16 slots) against a local run of the same plan, instant commands.');
  console.log('A chain pays one round trip per command; a fan-out overlaps them.');
  console.table(rows);
}

redis.child.kill('SIGTERM');
