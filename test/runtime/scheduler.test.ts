// The dataflow scheduler (spec 7.2) without per-command allocations: readiness counters in a typed
// array and a ready queue that is a bitset over precomputed ranks (level, then name). These tests
// check behaviour only (never timings): the queue against a sorted list, and whole runs on random
// DAGs against a simple reference scheduler: what starts, in which order, each exactly once, each
// only when its dependencies are successes, and nothing ready left behind.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Interpreter, type CommandRegistry } from '@lightsop/runtime';
import { RankQueue, rankOrder, type Ranked } from '../../packages/runtime/src/scheduler';

type Outcome = 'ok' | 'fail' | 'cancel';

interface Decl {
  name: string;
  deps: string[];
  outcome: Outcome;
  /** How many event-loop turns the command takes (0: it settles at once). */
  turns: number;
}

/** UTF-16 code unit order, as the spec says (not localeCompare). */
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe('RankQueue', () => {
  it('pops in rank order, ignores a second push of a queued item, and counts (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3000 }),
        fc.array(fc.tuple(fc.boolean(), fc.nat()), { maxLength: 400 }),
        (n, ops) => {
          const items: Ranked[] = Array.from({ length: n }, (_, i) => ({ name: `n${i}`, level: 0, rank: i }));
          const queue = new RankQueue(items);
          const model = new Set<number>();
          for (const [isPush, x] of ops) {
            if (isPush) {
              const item = items[x % n]!;
              queue.push(item);
              model.add(item.rank);
            } else {
              const expected = model.size === 0 ? undefined : Math.min(...model);
              const got = queue.pop();
              expect(got?.rank).toBe(expected);
              if (expected !== undefined) model.delete(expected);
            }
            expect(queue.size).toBe(model.size);
          }
          const rest: number[] = [];
          for (let item = queue.pop(); item; item = queue.pop()) rest.push(item.rank);
          expect(rest).toEqual([...model].sort((a, b) => a - b));
          queue.push(items[n - 1]!);
          queue.clear();
          expect(queue.size).toBe(0);
          expect(queue.pop()).toBeUndefined();
        },
      ),
      { numRuns: 200 },
    );
  });

  it('ranks by level, then by name in UTF-16 code units', () => {
    const items = ['b', 'a', 'Z', '_u', 'é', 'a1'].map((name, i) => ({ name, level: i % 2, rank: -1 }));
    const sorted = rankOrder(items);
    expect(sorted.map((x) => `${x.level}${x.name}`)).toEqual(['0Z', '0b', '0é', '1_u', '1a', '1a1']);
    expect(sorted.map((x) => x.rank)).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

/** Random DAGs: unique names (mixed case, digits, underscores), each using some earlier ones. */
const dagArb = fc
  .uniqueArray(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,3}$/), { minLength: 1, maxLength: 40 })
  .map((names) => names.filter((n) => n !== 'input' && n !== 'lastAnswer'))
  .filter((names) => names.length > 0)
  .chain((names) =>
    fc.tuple(
      ...names.map((name, i) =>
        fc.record({
          name: fc.constant(name),
          deps: i === 0 ? fc.constant<string[]>([]) : fc.uniqueArray(fc.constantFrom(...names.slice(0, i)), { maxLength: 3 }),
          outcome: fc.constantFrom<Outcome>('ok', 'ok', 'ok', 'ok', 'fail', 'cancel'),
          turns: fc.nat({ max: 3 }),
        }),
      ),
    ),
  );

function planText(decls: readonly Decl[]): string {
  // Declarations in a shuffled-looking but deterministic order: table order is not start order.
  const lines = decls.map((d) => `@${d.name} step ${d.deps.map((x) => `$${x}`).join(' ')} ${d.outcome}`.replace('  ', ' '));
  return lines.reverse().join('\n') + '\n';
}

function levels(decls: readonly Decl[]): Map<string, number> {
  const level = new Map<string, number>();
  for (const d of decls) level.set(d.name, d.deps.reduce((m, x) => Math.max(m, level.get(x)! + 1), 0));
  return level;
}

/**
 * The reference: a fresh plan, one command at a time, each settling before the next starts. It
 * starts the ready declaration of the lowest level, then name, until none is ready.
 */
function referenceRun(decls: readonly Decl[]): { order: string[]; status: Map<string, string> } {
  const level = levels(decls);
  const status = new Map<string, string>(decls.map((d) => [d.name, 'undefined']));
  const order: string[] = [];
  for (;;) {
    const ready = decls.filter((d) => status.get(d.name) === 'undefined' && !order.includes(d.name) && d.deps.every((x) => status.get(x) === 'success'));
    if (ready.length === 0) break;
    ready.sort((a, b) => level.get(a.name)! - level.get(b.name)! || byName(a.name, b.name));
    const next = ready[0]!;
    order.push(next.name);
    status.set(next.name, next.outcome === 'ok' ? 'success' : next.outcome === 'fail' ? 'fail' : 'canceled');
  }
  return { order, status };
}

/**
 * A registry whose `step` settles as its last argument says, after `turns` event-loop turns of its
 * declaration, and checks at every start that the declaration had not started before in this
 * update and that each of its dependencies is a success.
 */
function stepRegistry(getDecls: () => readonly Decl[], getInterpreter: () => Interpreter) {
  const started: string[] = [];
  const problems: string[] = [];
  const registry: CommandRegistry = {
    listCommands: () => [{ name: 'step', description: 'settles as told' }],
    async executeCommand(payload, responder) {
      const name = payload.variable;
      const decl = getDecls().find((d) => d.name === name)!;
      if (started.includes(name)) problems.push(`${name} started twice`);
      started.push(name);
      for (const dep of decl.deps) {
        const status = getInterpreter().getValue(dep)?.status;
        if (status !== 'success') problems.push(`${name} started while ${dep} was ${String(status)}`);
      }
      for (let i = 0; i < decl.turns; i++) await new Promise((resolve) => setImmediate(resolve));
      const outcome = String(payload.args[payload.args.length - 1]);
      if (outcome === 'fail') return responder.fail(`${name} failed`);
      if (outcome === 'cancel') return responder.cancel(`${name} canceled`);
      return responder.success(name);
    },
  };
  return { registry, started, problems };
}

/** After a run: nothing is left that could start (no lost runs). */
function leftReady(interpreter: Interpreter, decls: readonly Decl[]): string[] {
  const status = (n: string) => interpreter.getValue(n)?.status;
  return decls.filter((d) => status(d.name) === 'undefined' && d.deps.every((x) => status(x) === 'success')).map((d) => d.name);
}

describe('the scheduler against a reference scheduler on random DAGs (property)', () => {
  it('one command at a time: the same start order, each once, and the same statuses', async () => {
    await fc.assert(
      fc.asyncProperty(dagArb, async (decls) => {
        let interpreter!: Interpreter;
        const { registry, started, problems } = stepRegistry(() => decls, () => interpreter);
        interpreter = new Interpreter({ registry, concurrency: 1 });
        await interpreter.updateCode(planText(decls));
        const ref = referenceRun(decls);
        expect(problems).toEqual([]);
        expect(started).toEqual(ref.order);
        for (const d of decls) {
          const expected = ref.status.get(d.name)!;
          const got = interpreter.getValue(d.name)!.status;
          if (started.includes(d.name)) expect(got, d.name).toBe(expected);
          else expect(got, d.name).not.toBe('success');
        }
        expect(leftReady(interpreter, decls)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('unbounded, commands taking different turns: the same set starts, each once, after its dependencies', async () => {
    await fc.assert(
      fc.asyncProperty(dagArb, async (decls) => {
        let interpreter!: Interpreter;
        const { registry, started, problems } = stepRegistry(() => decls, () => interpreter);
        interpreter = new Interpreter({ registry });
        await interpreter.updateCode(planText(decls));
        const ref = referenceRun(decls);
        expect(problems).toEqual([]);
        expect([...started].sort()).toEqual([...ref.order].sort());
        for (const name of started) expect(interpreter.getValue(name)!.status, name).toBe(ref.status.get(name));
        expect(leftReady(interpreter, decls)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('incremental reruns after random edits: each start once, after its dependencies, lowest rank first; nothing ready left', async () => {
    const editsArb = dagArb.chain((decls) =>
      fc.tuple(
        fc.constant(decls),
        fc.array(fc.array(fc.constantFrom<Outcome>('ok', 'ok', 'fail', 'cancel'), { minLength: decls.length, maxLength: decls.length }), { minLength: 1, maxLength: 3 }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(editsArb, async ([first, edits]) => {
        let decls: readonly Decl[] = first;
        let interpreter!: Interpreter;
        const level = levels(first);
        const { registry, started, problems } = stepRegistry(() => decls, () => interpreter);
        // One at a time, so that the declaration starting is the lowest-ranked ready one.
        const ordered: CommandRegistry = {
          listCommands: registry.listCommands,
          executeCommand(payload, responder) {
            const ready = decls
              .filter((d) => interpreter.getValue(d.name)!.status === 'undefined' && d.deps.every((x) => interpreter.getValue(x)!.status === 'success'))
              .sort((a, b) => level.get(a.name)! - level.get(b.name)! || byName(a.name, b.name));
            if (ready[0]?.name !== payload.variable) problems.push(`${payload.variable} started before ${String(ready[0]?.name)}`);
            return registry.executeCommand(payload, responder);
          },
        };
        interpreter = new Interpreter({ registry: ordered, concurrency: 1 });
        await interpreter.updateCode(planText(decls));
        for (const outcomes of edits) {
          decls = decls.map((d, i) => ({ ...d, outcome: outcomes[i]! }));
          started.length = 0;
          await interpreter.updateCode(planText(decls));
          expect(problems).toEqual([]);
          expect(leftReady(interpreter, decls)).toEqual([]);
          // Whatever did not start kept a settled value or is not a success.
          for (const d of decls) {
            if (!started.includes(d.name) && interpreter.getValue(d.name)!.status === 'success') {
              expect(d.outcome, `${d.name} kept a success its new outcome would not give`).toBe('ok');
            }
          }
        }
      }),
      { numRuns: 150 },
    );
  });
});
