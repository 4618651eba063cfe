/**
 * The server process (bundled to `dist/server-main.cjs`, which the entry `dist/server.cjs` loads
 * and starts; editors run `lightsop-language-server --stdio` or the entry). `start` only picks
 * the transport and hands the connection to `createServer`. Over stdio the input goes through
 * the framing guard: a bad frame or an oversized message is logged to stderr and ends the
 * process with exit code 1, so that the client restarts the server instead of talking to one
 * that no longer reads.
 */
import { Console } from 'node:console';
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import packageJson from '../package.json';
import { setModuleImporter } from '@lightsop/runtime/skills';
import { FramingGuard } from './framing';
import { createServer } from './server';

/** The stdio transport with the framing guard in front of the reader. */
function stdioConnection() {
  const guard = new FramingGuard();
  guard.on('error', (error: Error) => {
    process.stderr.write(`lightsop-language-server: invalid message framing on stdin: ${error.message}; exiting so that the client restarts the server\n`);
    process.exit(1);
  });
  process.stdin.pipe(guard);
  // stdout carries the protocol: console output of any module goes to stderr instead.
  globalThis.console = new Console({ stdout: process.stderr, stderr: process.stderr });
  // Streams, not readers: the library then also ends the process when stdin ends (exit code 1
  // unless a shutdown request came first).
  return createConnection(ProposedFeatures.all, guard, process.stdout);
}

const USAGE = `Usage: lightsop-language-server --stdio

The LightSOPLang language server. It speaks the Language Server Protocol; start it from an
editor (VS Code, Neovim, Helix, ...). Transports: --stdio, --node-ipc, --socket=PORT, --pipe=NAME.
`;

/**
 * Runs the server for this process's arguments; true when it serves a connection (not for
 * `--version`, `--help` or a missing transport). `importModule` imports skills modules: the
 * entry (`entry.ts`) compiles this bundle from a code cache, where `import()` has no loader.
 */
export function start(importModule?: (url: string) => Promise<unknown>): boolean {
  if (importModule) setModuleImporter(importModule);
  const args = process.argv.slice(2);
  if (args.includes('--version') || args.includes('-v')) {
    process.stdout.write(`${packageJson.version}\n`);
    return false;
  } else if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return false;
  } else if (!args.some((a) => a === '--stdio' || a === '--node-ipc' || a.startsWith('--socket') || a.startsWith('--pipe'))) {
    process.stderr.write(`lightsop-language-server: no transport given\n\n${USAGE}`);
    process.exitCode = 2;
    return false;
  }
  const connection = args.includes('--stdio') ? stdioConnection() : createConnection(ProposedFeatures.all);
  createServer(connection);
  connection.listen();
  return true;
}
