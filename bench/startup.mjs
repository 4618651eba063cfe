// CLI startup (issue 15 item 5): the wall time of `lightsop lint` and of a plain `lightsop run` of
// a two-line plan, as ratios to a bare `node -e ''` measured in the same run, and a run with
// traces on (OTEL_EXPORTER_OTLP_ENDPOINT pointing at a receiver started here) for comparison.
// OpenTelemetry loads only in the last case, so the first two must not move when tracing changes.
// Nothing here asserts timings.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(root, 'packages/cli/bin/lightsop.js');
const dir = mkdtempSync(path.join(tmpdir(), 'lightsop-bench-startup-'));
writeFileSync(path.join(dir, 'plan.sop'), '@a assign hello\n@lastAnswer assign $a\n');
const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));

const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${receiver.address().port}`;

function once(args, env = {}) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { cwd: dir, env: { ...base, NO_COLOR: '1', ...env }, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`${args.join(' ')} exited ${code}`))));
  });
}

async function median(args, env, n = 15) {
  const times = [];
  for (let i = 0; i < n; i++) times.push(await once(args, env));
  times.sort((a, b) => a - b);
  return times[Math.floor(n / 2)];
}

try {
  const node = await median(['-e', '']);
  const lint = await median([BIN, 'lint', 'plan.sop']);
  const run = await median([BIN, 'run', 'plan.sop', '--json']);
  const traced = await median([BIN, 'run', 'plan.sop', '--json'], { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
  console.log(`node -e '' (baseline)        ${node.toFixed(0)} ms`);
  console.log(`lightsop lint                 ${lint.toFixed(0)} ms  ${(lint / node).toFixed(2)}x baseline`);
  console.log(`lightsop run (no traces)      ${run.toFixed(0)} ms  ${(run / node).toFixed(2)}x baseline`);
  console.log(`lightsop run (traces on)      ${traced.toFixed(0)} ms  ${(traced / run).toFixed(2)}x the run without traces`);
} finally {
  receiver.close();
  rmSync(dir, { recursive: true, force: true });
}
