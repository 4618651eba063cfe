// Generators of benchmark plans, shared by the benchmarks. Deterministic (seeded).
export function rng(seed = 42) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/** A chain: each declaration uses the previous one. */
export function chainPlan(n) {
  const lines = ['@v0 emit start'];
  for (let i = 1; i < n; i++) lines.push(`@v${i} step $v${i - 1} x${i}`);
  return lines.join('\n') + '\n';
}

/** A random DAG: each declaration uses up to three earlier ones. */
export function dagPlan(n, seed = 7) {
  const r = rng(seed);
  const lines = [];
  for (let i = 0; i < n; i++) {
    const deps = new Set();
    const k = i === 0 ? 0 : Math.floor(r() * 4);
    for (let j = 0; j < k; j++) deps.add(Math.floor(r() * i));
    lines.push(`@v${i} step ${[...deps].map((d) => `$v${d}`).join(' ')} "arg ${i}"`.replace('  ', ' '));
  }
  return lines.join('\n') + '\n';
}

/** Fan-out: one root, every other declaration uses it. */
export function fanOutPlan(n) {
  const lines = ['@root emit start'];
  for (let i = 1; i < n; i++) lines.push(`@v${i} step $root ${i}`);
  return lines.join('\n') + '\n';
}

/** Declarations with long multi-line texts and comments. */
export function textPlan(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push(`# Step ${i}: summarise the previous result`);
    out.push(i === 0 ? `@v0 summarize "seed text"` : `@v${i} summarize $v${i - 1}`);
    out.push('Keep it under three sentences and mention the main points.');
    out.push('Use plain words; the reader is busy and reads on a phone.');
    out.push('');
  }
  return out.join('\n');
}
