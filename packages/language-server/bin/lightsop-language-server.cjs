#!/usr/bin/env node
// The `lightsop-language-server` command: the bundled server (run `npm run build` first).
require('../dist/server.cjs');
