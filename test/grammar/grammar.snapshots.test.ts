// Grammar snapshot tests: every fixture under test/grammar/fixtures is tokenized with the committed
// grammar (vscode-textmate + vscode-oniguruma, as in VS Code) and compared with its snapshot in
// __snapshots__/. Review snapshot diffs like code; `npx vitest run test/grammar -u` rewrites them.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GRAMMAR_PATH, render, tokenize } from './tokenize';

const fixtures = path.join(__dirname, 'fixtures');

describe('grammar snapshots', () => {
  it('the committed grammar is the output of grammars/generate.mjs', async () => {
    const { GRAMMAR_JSON } = (await import('../../grammars/generate.mjs')) as { GRAMMAR_JSON: string };
    expect(readFileSync(GRAMMAR_PATH, 'utf8')).toBe(GRAMMAR_JSON);
  });

  const files = readdirSync(fixtures).filter((f) => f.endsWith('.sop')).sort();
  it('has fixtures', () => {
    expect(files.length).toBeGreaterThanOrEqual(8);
  });
  for (const file of files) {
    it(file, async () => {
      const text = readFileSync(path.join(fixtures, file), 'utf8');
      const rendered = render(text, await tokenize(text));
      await expect(rendered).toMatchFileSnapshot(path.join(__dirname, '__snapshots__', `${file}.snap`));
    });
  }
});
