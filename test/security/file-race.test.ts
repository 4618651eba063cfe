// The check-then-use race of the file skills (issue 11, item 2): a child process swaps a file and
// a folder of the workspace between inside targets and symbolic links to outside ones while every
// file skill is called over and over. No call may read, list, write or edit anything outside.
// LIGHTSOP_RACE_SECONDS sets how long the attack runs (default 5).
import { describe, expect, it } from 'vitest';
import { runSwapRace } from './race';

const seconds = Number(process.env.LIGHTSOP_RACE_SECONDS ?? '') || 5;

describe('file skills under a symbolic-link swapping attack', () => {
  it(`no call escapes the workspace while links are swapped (${seconds} s)`, async () => {
    const result = await runSwapRace(seconds);
    console.log(`symlink swap race: ${result.calls} calls in ${seconds} s, ${result.refused} refused, ${result.escapes.length} escapes`);
    expect(result.calls).toBeGreaterThan(0);
    expect(result.escapes).toEqual([]);
    expect(result.outsideChanged).toBe(false);
  }, seconds * 1000 + 60_000);
});
