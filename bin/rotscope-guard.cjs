#!/usr/bin/env node
// Claude Code's PreToolUse and PostToolUse hooks (`rotscope claude-code install` writes this
// command into settings.json): the tool-result guard of src/cli/guard.ts, as CommonJS read with
// synchronous stdin and stdout, so a tool call pays about a bare `node` start
// (npm run bench -- guard). Whatever goes wrong, the tool call goes through unchanged.
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS on purpose */

let guard;
try {
  if (process.env.ROTSCOPE_FROM_SOURCE === '1')
    throw Object.assign(new Error(), { code: 'SOURCE' });
  guard = require('../dist/cjs/cli/guard.js');
} catch (error) {
  // No dist/ yet (a checkout before `npm run build`), or source mode: src/ through tsx.
  if (error.code !== 'MODULE_NOT_FOUND' && error.code !== 'SOURCE') throw error;
  try {
    require('tsx/cjs/api').register();
    guard = require('../src/cli/guard.ts');
  } catch {
    return;
  }
}
process.exitCode = guard.main();
