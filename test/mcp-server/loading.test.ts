/**
 * Only `lightsop mcp` loads the MCP SDK: it sits in a chunk of the CLI bundle that main.ts imports
 * dynamically. A loader hook records every module the built CLI loads (the distributed tests'
 * fixture); the control case (`mcp`) shows that the check sees the SDK when it is loaded.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/cli';
import { loadsCliBundle, loadsPackage, modulesLoadedBy } from '../helpers/loading';
import { removeTempDirs, tempDir } from '../distributed/procs';

// Strings found only in the MCP SDK's code (its server and its protocol layer).
const MARKERS = ['Server does not support tools (required for ', 'Received a progress notification for an unknown token'];
const loadsSdk = (files: string[]): boolean => loadsPackage(files, /[\\/]@modelcontextprotocol[\\/]/, MARKERS);

describe('the CLI loads the MCP SDK only for lightsop mcp', () => {
  let dir: string;
  beforeAll(() => {
    ensureBuilt();
    dir = tempDir('lightsop-loading-');
    writeFileSync(path.join(dir, 'plan.sop'), '@a assign hello\n@lastAnswer assign $a\n');
  });
  afterAll(() => removeTempDirs());

  it('lint, fmt, graph and run do not load it', () => {
    for (const args of [['lint', 'plan.sop'], ['fmt', 'plan.sop'], ['graph', 'plan.sop'], ['run', 'plan.sop', '--json']]) {
      const res = modulesLoadedBy(args, dir);
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(0);
      expect(loadsCliBundle(res.files)).toBe(true);
      expect(loadsSdk(res.files), `lightsop ${args.join(' ')} loaded the MCP SDK`).toBe(false);
    }
  });

  it('mcp does (the control: the check sees it when it loads)', () => {
    // Standard input closes at once: the server starts, sees the end of its input and exits 0.
    const res = modulesLoadedBy(['mcp'], dir);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/serving .* on stdio/);
    expect(loadsSdk(res.files)).toBe(true);
  });
});
