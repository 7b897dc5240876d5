#!/usr/bin/env node
// Runs the TypeScript sources through tsx's loader, so `rotscope` needs no build step.
import { register } from 'tsx/esm/api';

register();
const { run } = await import('../src/cli/index.ts');
const io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};
try {
  process.exitCode = await run(process.argv.slice(2), io, process.env);
} catch (error) {
  io.stderr(`rotscope: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
