// ARCHITECTURE.md: no request ever gets an error response because of plan text. Features are
// written not to throw, and the server's one request wrapper is the net under them: an exception
// becomes the request's empty result and a log line. Here hover is made to throw on one plan, as
// a feature bug would, to check that net through a real JSON-RPC connection.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Hover } from 'vscode-languageserver';
import { openPlan, positionOf, type TestClient } from './helpers';

vi.mock('../../packages/language-server/src/features/hover', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../packages/language-server/src/features/hover')>();
  return {
    ...original,
    getHover: (...args: Parameters<typeof original.getHover>) => {
      if (args[0].text.includes('@boom')) throw new Error('a feature bug triggered by this plan');
      return original.getHover(...args);
    },
  };
});

let client: TestClient | null = null;
afterEach(() => {
  client?.dispose();
  client = null;
});

describe('the request wrapper', () => {
  it('turns an exception of a feature into the empty result and a logged error, not an error response', async () => {
    const text = '@boom emit 1\n@b upper $boom\n';
    let uri: string;
    ({ client, uri } = await openPlan(text));
    const hover = await client.request<Hover | null>('textDocument/hover', { textDocument: { uri }, position: positionOf(text, '$boom', 1) });
    expect(hover).toBeNull();
    expect(client.logs.filter((l) => l.type === 1).map((l) => l.message)).toEqual([expect.stringContaining('hover failed: Error: a feature bug triggered by this plan')]);
    // The server goes on answering.
    const fine = '@a emit 1\n@b upper $a\n';
    await client.change(uri, fine);
    const next = await client.request<Hover>('textDocument/hover', { textDocument: { uri }, position: positionOf(fine, '$a', 1) });
    expect(next).not.toBeNull();
  });
});
