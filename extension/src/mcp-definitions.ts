/**
 * How VS Code starts `lightsop mcp` for a workspace folder (agent mode, VS Code 1.101+): the CLI
 * bundled into the extension (`dist/cli/main.js`, copied there by the build), run by the editor's
 * own runtime as Node (`ELECTRON_RUN_AS_NODE`), over stdio, with the folder as the workspace root.
 * No `vscode` import, so tests start exactly what VS Code would.
 */
import path from 'node:path';

/** The id declared under `contributes.mcpServerDefinitionProviders` in package.json. */
export const MCP_PROVIDER_ID = 'lightsoplang.mcpServer';

export interface McpLaunch {
  readonly label: string;
  readonly command: string;
  readonly args: string[];
  readonly cwd: string;
  readonly env: Record<string, string>;
}

/** The path of the bundled CLI inside the extension. */
export function bundledCli(extensionPath: string): string {
  return path.join(extensionPath, 'dist', 'cli', 'main.js');
}

/** One server per workspace folder on disk. */
export function mcpLaunches(extensionPath: string, folders: readonly { name: string; fsPath: string }[], execPath: string): McpLaunch[] {
  return folders.map((folder) => ({
    label: folders.length > 1 ? `LightSOPLang plans (${folder.name})` : 'LightSOPLang plans',
    command: execPath,
    args: [bundledCli(extensionPath), 'mcp', '--root', folder.fsPath],
    cwd: folder.fsPath,
    env: { ELECTRON_RUN_AS_NODE: '1' },
  }));
}
