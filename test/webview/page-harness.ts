/**
 * What the Chromium page tests share: bundling a page script the way scripts/build.mjs does, and
 * launching Debian's Chromium with the flags these machines need.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';

const root = path.resolve(__dirname, '../..');

function findChromium(): string {
  if (process.env.CHROMIUM) return process.env.CHROMIUM;
  for (const p of ['/usr/bin/chromium', '/usr/bin/chromium-browser']) if (existsSync(p)) return p;
  try {
    return execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('Chromium not found: run `bash test/e2e/setup.sh` (installs Debian\'s chromium) or set CHROMIUM');
  }
}

/** Bundles a page script (relative to the repository root) as a browser IIFE. */
export async function bundlePage(entry: string): Promise<string> {
  const out = await build({
    entryPoints: [path.join(root, entry)],
    bundle: true, write: false, format: 'iife', platform: 'browser', target: 'es2022', logLevel: 'silent',
    mainFields: ['browser', 'module', 'main'],
  });
  return out.outputFiles[0]!.text;
}

/** Debian's Chromium, headless, without the background networking this machine refuses. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: findChromium(),
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}
