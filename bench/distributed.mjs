// Distributed benchmarks (issue 16), on a private redis-server and worker processes of the built
// CLI, printed as ratios to baselines measured in the same run:
// - batch throughput with 1, 2 and 4 worker processes on a plan whose command waits 20 ms; the
//   scaling efficiency of W workers is throughput(W) / (W x throughput(1)) (goal: >= 0.8 up to 4),
//   and each run is also compared with the ideal W x slots x 50/s;
// - the per-command overhead of `run --redis` against a local run of the same plan (a chain, where
//   every command waits for the one before, and a fan-out, where all run at once).
// Needs redis-server (apt-get install -y redis-server); nothing here asserts timings.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Interpreter, UnlimitedExecutionMonitor, toCommandRegistry } from '../packages/runtime/dist/index.js';
import { openRemoteRegistry, parseRedisUrl, runBatch } from '../packages/distributed/dist/index.js';
import { row } from './_rows.mjs';

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
// The pools of 1, 2 and 4 workers run side by side on queues of their own and are warmed (a batch
// each) before anything is measured; then the rounds are interleaved (1, 2, 4, 1, 2, 4, ...), so a
// change of load on the shared machine falls on every pool alike. Each figure comes with the CPU
// time the coordinator, the workers and Redis spent per input, and the load average.
const plan = '@r wait20 $input\n';
writeFileSync(path.join(dir, 'plan.sop'), plan);
const ROUNDS = Number(process.env.LIGHTSOP_BENCH_DIST_ROUNDS ?? 5);

/** CPU time (ms) a process has used, from /proc (Linux); NaN elsewhere. */
function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in 10 ms ticks (USER_HZ 100)
  } catch {
    return NaN;
  }
}
const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function batchOnce(queue, count, tag) {
  const inputs = path.join(dir, `${queue}-${tag}.jsonl`);
  let text = '';
  for (let i = 0; i < count; i++) text += JSON.stringify(`${tag}-${i}`) + '\n';
  writeFileSync(inputs, text);
  const out = path.join(dir, `${queue}-${tag}.out.jsonl`);
  const t = performance.now();
  const summary = await runBatch({
    redis: target, queue, plan,
    inputs: { path: inputs, display: 'inputs' }, out: { path: out, display: 'out' },
    timeoutMs: 0, maxPending: 2000, reconnectTimeoutMs: 30_000,
    progress: { tty: false, columns: 80, intervalMs: 3_600_000 },
    write: () => {},
  });
  const seconds = (performance.now() - t) / 1000;
  if (summary.written !== count || summary.notOk !== 0) throw new Error(`batch of ${count}: ${summary.written} written, ${summary.notOk} not ok`);
  return seconds;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const scaling = {};
for (const slots of [1, 4]) {
  const perSlot = 80;
  const pools = [];
  for (const workersCount of [1, 2, 4]) {
    const queue = `bench-${workersCount}x${slots}`;
    const workers = await Promise.all(Array.from({ length: workersCount }, () => startWorker(redis.url, queue, slots)));
    pools.push({ workersCount, queue, workers, count: workersCount * slots * perSlot, runs: [] });
  }
  for (const pool of pools) await batchOnce(pool.queue, pool.count, 'warm');
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved, and in a rotated order each round.
    for (let k = 0; k < pools.length; k++) {
      const pool = pools[(k + round) % pools.length];
      const load = loadavg()[0];
      const cpu0 = { coordinator: ownCpuMs(), workers: pool.workers.reduce((n, w) => n + cpuMsOf(w.pid), 0), redis: cpuMsOf(redis.child.pid) };
      const seconds = await batchOnce(pool.queue, pool.count, `r${round}`);
      const cpu1 = { coordinator: ownCpuMs(), workers: pool.workers.reduce((n, w) => n + cpuMsOf(w.pid), 0), redis: cpuMsOf(redis.child.pid) };
      pool.runs.push({
        rate: pool.count / seconds,
        load,
        coordinator: (cpu1.coordinator - cpu0.coordinator) / pool.count,
        workers: (cpu1.workers - cpu0.workers) / pool.count,
        redis: (cpu1.redis - cpu0.redis) / pool.count,
      });
    }
  }
  for (const pool of pools) await stopWorkers(pool.workers);
  const rows = [];
  const base = median(pools[0].runs.map((r) => r.rate));
  let previous = null;
  for (const pool of pools) {
    const rate = median(pool.runs.map((r) => r.rate));
    const best = pool.runs.reduce((m, r) => Math.max(m, r.rate), 0);
    const ideal = pool.workersCount * slots * 50;
    rows.push({
      workers: pool.workersCount,
      'slots/worker': slots,
      'inputs/s (median)': rate.toFixed(1),
      'best': best.toFixed(1),
      'vs ideal': (rate / ideal).toFixed(2),
      'scaling efficiency': (rate / (pool.workersCount * base)).toFixed(2),
      'per added worker': previous ? ((rate - previous.rate) / ((pool.workersCount - previous.workersCount) * base)).toFixed(2) : '-',
      'CPU ms/input: coordinator': median(pool.runs.map((r) => r.coordinator)).toFixed(2),
      'all workers': median(pool.runs.map((r) => r.workers)).toFixed(2),
      'redis-server': median(pool.runs.map((r) => r.redis)).toFixed(2),
      'load avg': `${pool.runs.reduce((m, r) => Math.min(m, r.load), Infinity).toFixed(1)}-${pool.runs.reduce((m, r) => Math.max(m, r.load), 0).toFixed(1)}`,
    });
    previous = { rate, workersCount: pool.workersCount };
    scaling[`${pool.workersCount}x${slots}`] = { rate, base, efficiency: rate / (pool.workersCount * base) };
  }
  console.log(`\nBatch throughput, one command waiting 20 ms per input, ${slots} job slot(s) per worker process, ${pools.map((p) => p.count).join('/')} inputs per batch, median of ${ROUNDS} interleaved rounds after a warm-up batch per pool (goal: scaling efficiency >= 0.8 up to 4 workers).`);
  console.log(`scaling efficiency = throughput(W) / (W x throughput(1)); per added worker = throughput gained / (workers added x throughput(1)); CPU: ms per input (coordinator = this process, /proc for the others); ${cpus().length} CPU(s).`);
  console.table(rows);
}
for (const slots of [1, 4]) {
  const s = scaling[`4x${slots}`];
  row(`batch scaling efficiency, 4 workers x ${slots} slot(s) vs 1 worker, commands waiting 20 ms`, {
    value: `${s.rate.toFixed(1)} inputs/s`,
    baseline: `1 worker ${s.base.toFixed(1)} inputs/s`,
    ratio: `${s.efficiency.toFixed(2)} efficiency`,
    goal: '>= 0.8',
  });
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
    if (shape === 'chain') {
      row(`run --redis per-command overhead, chain of ${n} instant commands, 2 workers`, {
        value: `${((distributed - local) / n).toFixed(2)} ms/command`,
        baseline: `local run ${(local / n).toFixed(3)} ms/command`,
        ratio: `${(distributed / local).toFixed(1)}x the local run`,
        goal: 'report',
      });
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
  console.log(`\nPer-command overhead of run --redis (2 workers x 16 slots) against a local run of the same plan, instant commands, best of 3 (load average ${loadavg()[0].toFixed(1)}).`);
  console.log('A chain pays one round trip per command; a fan-out overlaps them.');
  console.table(rows);
}

redis.child.kill('SIGTERM');
