#!/usr/bin/env node
// Node 22.1+ keeps the code it compiled in a cache between runs, so the CLI starts faster;
// older versions (Node 20) have no such cache and skip this.
import module from 'node:module';

module.enableCompileCache?.();
await import('../dist/main.js');
