#!/usr/bin/env node
// Claude Code's `otelHeadersHelper` (`rotscope claude-code install --token` writes this command
// into settings.json): prints the OTLP exporters' headers as a JSON object, the token read from
// the private file named as the argument (mode 0600, beside settings.json), so the token never
// sits in settings.json. Claude Code runs it at start and about every 29 minutes; it must be fast
// and never fail: no file, no token, `{}`.
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS on purpose: no build, no ESM loader */
const fs = require('node:fs');

let token = '';
try {
  token = fs.readFileSync(process.argv[2] || '', 'utf8').trim();
} catch {
  token = '';
}
process.stdout.write(`${JSON.stringify(token ? { Authorization: `Bearer ${token}` } : {})}\n`);
