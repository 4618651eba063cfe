/**
 * `@lightsop/runtime/mcp`: MCP servers' tools as commands (docs/mcp.md). The CLI, the language
 * server and the extension use it; it imports only core, node, the SDK and the registry protocol's
 * types, so the language server can bundle it.
 */
import { parseDurationMs } from '@lightsop/core';
import { DEFAULT_MCP_START_TIMEOUT_MS } from './connection';

export { McpConnection, McpServerError, DEFAULT_MCP_START_TIMEOUT_MS, type McpConnectOptions } from './connection';
export { McpToolSet, progressText, withMcpTools, type McpServerProblem, type McpProgress, type McpProgressListener, type OpenMcpOptions } from './tool-set';
export {
  MCP_SOURCE_KIND, toolArguments, toolCommandSpec, toolEffects, toolProperties, toolResultValue, resultText, ToolArgumentError,
  type McpToolInfo, type McpToolResult, type ToolProperty,
} from './tools';

/** LIGHTSOP_MCP_TIMEOUT is set to something that is not a duration. */
export class McpTimeoutSettingError extends Error {
  constructor() {
    super('LIGHTSOP_MCP_TIMEOUT: expected a positive duration such as 30, 30s, 500ms or 2m, of at most 24 days');
    this.name = 'McpTimeoutSettingError';
  }
}

/** How long starting a server and listing its tools may take: LIGHTSOP_MCP_TIMEOUT, else 30 s. */
export function mcpStartTimeoutMs(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const value = env.LIGHTSOP_MCP_TIMEOUT;
  if (value === undefined || value.trim() === '') return DEFAULT_MCP_START_TIMEOUT_MS;
  const ms = parseDurationMs(value);
  if (ms === null) throw new McpTimeoutSettingError();
  return ms;
}
