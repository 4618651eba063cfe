// Runs before `vsce package` (vscode:prepublish): copies the TextMate grammar from the repository's
// grammars/ folder into the extension, since a .vsix may only contain files under extension/, and
// checks that the bundles built by `npm run build` (scripts/build.mjs) are there.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ext = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
mkdirSync(path.join(ext, 'syntaxes'), { recursive: true });
copyFileSync(path.join(ext, '..', 'grammars', 'lightsoplang.tmLanguage.json'), path.join(ext, 'syntaxes', 'lightsoplang.tmLanguage.json'));
const missing = ['dist/extension.cjs', 'dist/server.cjs', 'dist/server-main.cjs', 'dist/graph-webview.js', 'dist/chat-webview.js', 'dist/cli/main.js'].filter((f) => !existsSync(path.join(ext, f)));
if (missing.length > 0) {
  console.error(`extension: missing ${missing.join(', ')}; run \`npm run build\` at the repository root first (or \`npm run package\`, which does both)`);
  process.exit(1);
}
console.log('extension: grammar copied, bundles present');
