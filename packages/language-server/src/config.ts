/**
 * Reading `lightsop.config.json` for the editor: core's parser (shared with the CLI), with each
 * problem's message prefixed by the file name, as the server and the extension show it.
 */
import { CONFIG_FILE, parseConfigText as parseConfig, type ParsedConfig } from '@lightsop/core';

export { CONFIG_FILE };
export type { ConfigProblem, ConfigProblemCode, ParsedConfig, WorkspaceConfig } from '@lightsop/core';

/** Parses a config file's text, collecting every problem with its location. */
export function parseConfigText(text: string): ParsedConfig {
  const parsed = parseConfig(text);
  return { config: parsed.config, problems: parsed.problems.map((p) => ({ ...p, message: `${CONFIG_FILE}: ${p.message}` })) };
}
