#!/usr/bin/env node
// Claude Code's status line command (`rotscope claude-code install` writes it into settings.json):
// the same as `rotscope statusline`, as CommonJS that reads stdin with fs.readSync and writes with
// fs.writeSync, so Node's ESM loader and the stream modules are never loaded. It runs on every
// render and starts within 1.1x of a bare `node -e ''` (npm run bench -- statusline).
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS on purpose */

let statusline;
try {
  if (process.env.ROTSCOPE_FROM_SOURCE === '1')
    throw Object.assign(new Error(), { code: 'SOURCE' });
  statusline = require('../dist/cjs/cli/statusline.js');
} catch (error) {
  // No dist/ yet (a checkout before `npm run build`), or source mode: src/ through tsx.
  if (error.code !== 'MODULE_NOT_FOUND' && error.code !== 'SOURCE') throw error;
  try {
    require('tsx/cjs/api').register();
    statusline = require('../src/cli/statusline.ts');
  } catch {
    // A status line prints a line, never a trace.
    require('node:fs').writeSync(1, '\n');
    return;
  }
}
process.exitCode = statusline.main(process.argv.slice(2));
