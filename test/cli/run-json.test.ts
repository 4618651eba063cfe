// The streamed `run --json` writer prints exactly what JSON.stringify prints for the same object,
// in pieces no longer than a chunk unless one text is longer (issue 10, item 4).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonLength, writeRunJson } from '../../packages/cli/src/formats/run-json';

const text = fc.string({ unit: 'binary', maxLength: 40 });
const status = fc.constantFrom('success', 'fail', 'undefined', 'canceled');

describe('writeRunJson', () => {
  it('writes the bytes of JSON.stringify', () => {
    fc.assert(fc.property(
      fc.uniqueArray(fc.tuple(text, status, text), { selector: (v) => v[0], maxLength: 20 }),
      fc.array(text, { maxLength: 10 }),
      (vars, commands) => {
        const variables = vars.map(([name, s, value]) => [name, { status: s, value }] as const);
        const failures = vars.filter(([, s]) => s === 'fail').map(([variable, , reason]) => ({ variable, reason }));
        const pieces: string[] = [];
        writeRunJson((t) => pieces.push(t), { variables, failures, commands });
        const expected = JSON.stringify({ variables: Object.fromEntries(variables), failures, commands }) + '\n';
        expect(pieces.join('')).toBe(expected);
      },
    ));
  });

  it('gathers many variables into chunks of about a megabyte', () => {
    const variables = Array.from({ length: 200_000 }, (_, i) => [`v${i}`, { status: 'success', value: 'x'.repeat(20) }] as const);
    const pieces: string[] = [];
    writeRunJson((t) => pieces.push(t), { variables, failures: [], commands: [] });
    expect(pieces.length).toBeGreaterThan(5);
    expect(pieces.length).toBeLessThan(20);
    expect(Object.keys(JSON.parse(pieces.join('')).variables)).toHaveLength(200_000);
  });

  it('measures the JSON form of any text without building it', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => {
      expect(jsonLength(s)).toBe(JSON.stringify(s).length);
    }));
  });
});
