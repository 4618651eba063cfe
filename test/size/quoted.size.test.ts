// Quoted arguments at 200,000 declarations: decoding a quoted token looks for backslashes inside
// that token only. It used to search the rest of the plan for one (indexOf to the end of the
// text), so a plan with many quoted tokens and no backslash took time quadratic in its size and
// materialising this plan did not finish within the test's deadline.
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../packages/core/src/index';
import { SIZE } from './plans';

describe('quoted tokens at 200k declarations', () => {
  it('materialises every declaration with its decoded quoted arguments', () => {
    const lines: string[] = [];
    // One escape, on the first line: every later quoted token has no backslash after it.
    lines.push(`@first assign "tab\\there"`);
    for (let i = 0; i < SIZE; i++) lines.push(`@v${i} "assign" "value ${i}" 'single ${i}'`);
    const { plan } = parsePlan(lines.join('\n') + '\n');
    expect(plan.declarations).toHaveLength(SIZE + 1);
    expect(plan.declarations[0]!.arguments[0]).toMatchObject({ kind: 'literal', value: 'tab\there' });
    const last = plan.declarations[SIZE]!;
    expect(last.command?.name).toBe('assign');
    expect(last.arguments.map((a) => (a.kind === 'literal' ? a.value : a.name))).toEqual([`value ${SIZE - 1}`, `single ${SIZE - 1}`]);
  }, 60_000);
});
