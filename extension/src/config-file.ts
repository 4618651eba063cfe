/**
 * Reading a workspace's `lightsop.config.json` in the extension host, synchronously (Run Plan and
 * Debug Plan decide their skills before they start). The file comes from the repository, so it is
 * read only when it is a regular file, without blocking and at most 8 MiB (as the CLI and the
 * language server read it): a FIFO or a device named `lightsop.config.json` must not hang the
 * extension host. No `vscode` import, so tests run it directly.
 */
import { parseConfigText, type WorkspaceConfig } from '@lightsop/core';
import { readLimitedTextFileSync } from '@lightsop/runtime';

export interface ConfigFileRead {
  /** The parsed config, or null when it could not be read or parsed. */
  readonly config: WorkspaceConfig | null;
  /** Error messages about the file (the language server also shows them on the file). */
  readonly problems: readonly string[];
}

/** Reads and parses a config file; never throws and never blocks on a special file. */
export function readConfigFileSync(file: string): ConfigFileRead {
  let text: string;
  try {
    text = readLimitedTextFileSync(file);
  } catch (error) {
    return { config: null, problems: [`cannot read: ${(error as Error).message}`] };
  }
  const parsed = parseConfigText(text);
  const problems: string[] = [];
  for (const p of parsed.problems) if (p.severity === 'error') problems.push(p.message);
  return { config: parsed.config, problems };
}
