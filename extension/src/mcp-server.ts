/**
 * Registers `lightsop mcp` with VS Code's agent mode through `lm.registerMcpServerDefinitionProvider`
 * (VS Code 1.101+; feature-detected, since the extension supports 1.100). The server runs the
 * workspace's skills module (run_plan), so it is offered only in a trusted workspace: in an
 * untrusted one the provider is not registered until trust is granted.
 */
import * as vscode from 'vscode';
import { DISPLAY_NAME } from './language';
import { MCP_PROVIDER_ID, mcpLaunches } from './mcp-definitions';

/** What 1.101 adds to the API, typed here because the extension builds against @types/vscode 1.100. */
interface McpStdioServerDefinitionCtor {
  new (label: string, command: string, args?: string[], env?: Record<string, string | number | null>, version?: string): { cwd?: vscode.Uri };
}
interface McpLm {
  registerMcpServerDefinitionProvider(id: string, provider: {
    onDidChangeMcpServerDefinitions?: vscode.Event<void>;
    provideMcpServerDefinitions(token: vscode.CancellationToken): unknown[];
  }): vscode.Disposable;
}

export function registerMcpServer(context: vscode.ExtensionContext, output: vscode.OutputChannel): void {
  const lm = (vscode as unknown as { lm?: Partial<McpLm> }).lm;
  const Definition = (vscode as unknown as { McpStdioServerDefinition?: McpStdioServerDefinitionCtor }).McpStdioServerDefinition;
  if (typeof lm?.registerMcpServerDefinitionProvider !== 'function' || typeof Definition !== 'function') {
    output.appendLine(`[${DISPLAY_NAME}] this VS Code has no MCP server API (1.101+): lightsop mcp is not registered for agent mode`);
    return;
  }
  const register = lm.registerMcpServerDefinitionProvider.bind(lm);
  const changed = new vscode.EventEmitter<void>();
  const version = String((context.extension.packageJSON as { version?: unknown }).version ?? '0.0.0');
  const start = () => {
    let registration: vscode.Disposable;
    try {
      registration = register(MCP_PROVIDER_ID, {
      onDidChangeMcpServerDefinitions: changed.event,
      provideMcpServerDefinitions: () => {
        if (!vscode.workspace.isTrusted) return [];
        const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => ({ name: f.name, fsPath: f.uri.fsPath }));
        return mcpLaunches(context.extensionUri.fsPath, folders, process.execPath).map((launch) => {
          const definition = new Definition(launch.label, launch.command, launch.args, launch.env, version);
          definition.cwd = vscode.Uri.file(launch.cwd);
          return definition;
        });
      },
    });
    } catch (error) {
      // VS Code 1.100 has the function but wants another contribution point and throws: the rest of
      // the extension must still activate.
      output.appendLine(`[${DISPLAY_NAME}] lightsop mcp is not registered for agent mode: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    context.subscriptions.push(changed, vscode.workspace.onDidChangeWorkspaceFolders(() => changed.fire()), registration);
    output.appendLine(`[${DISPLAY_NAME}] lightsop mcp registered for agent mode`);
  };
  if (vscode.workspace.isTrusted) start();
  else {
    output.appendLine(`[${DISPLAY_NAME}] workspace not trusted: lightsop mcp is not offered to agent mode until it is`);
    context.subscriptions.push(vscode.workspace.onDidGrantWorkspaceTrust(start));
  }
}
