/**
 * The stdio entry point (bundled to `dist/server.cjs`, started by `lightsop-language-server
 * --stdio`). It only picks the transport and hands the connection to `createServer`.
 */
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import packageJson from '../package.json';
import { createServer } from './server';

const USAGE = `Usage: lightsop-language-server --stdio

The LightSOPLang language server. It speaks the Language Server Protocol; start it from an
editor (VS Code, Neovim, Helix, ...). Transports: --stdio, --node-ipc, --socket=PORT, --pipe=NAME.
`;

const args = process.argv.slice(2);
if (args.includes('--version') || args.includes('-v')) {
  process.stdout.write(`${packageJson.version}\n`);
} else if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(USAGE);
} else if (!args.some((a) => a === '--stdio' || a === '--node-ipc' || a.startsWith('--socket') || a.startsWith('--pipe'))) {
  process.stderr.write(`lightsop-language-server: no transport given\n\n${USAGE}`);
  process.exitCode = 2;
} else {
  const connection = createConnection(ProposedFeatures.all);
  createServer(connection);
  connection.listen();
}
