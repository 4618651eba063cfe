/**
 * Only `lightsop mcp` loads the MCP SDK: it sits in a chunk of the CLI bundle that main.ts imports
 * dynamically. A loader hook records every module the built CLI loads (the distributed tests'
 * fixture); the control case (`mcp`) shows that the check sees the SDK when it is loaded.
 */
import { describe, expect, it } from 'vitest';
import { expectLoadsNone, LIGHT_COMMANDS, loadsPackage, modulesLoadedBy, usePlanFolder } from '../helpers/loading';

// Strings found only in the MCP SDK's code (its server and its protocol layer).
const MARKERS = ['Server does not support tools (required for ', 'Received a progress notification for an unknown token'];
const loadsSdk = (files: string[]): boolean => loadsPackage(files, /[\\/]@modelcontextprotocol[\\/]/, MARKERS);

describe('the CLI loads the MCP SDK only for lightsop mcp', () => {
  const dir = usePlanFolder('lightsop-loading-');

  it('lint, fmt, graph and run do not load it', () => {
    expectLoadsNone(LIGHT_COMMANDS, dir(), { 'the MCP SDK': loadsSdk });
  });

  it('mcp does (the control: the check sees it when it loads)', () => {
    // Standard input closes at once: the server starts, sees the end of its input and exits 0.
    const res = modulesLoadedBy(['mcp'], dir());
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/serving .* on stdio/);
    expect(loadsSdk(res.files)).toBe(true);
  });
});
