#!/usr/bin/env node
// Runs the compiled CLI in dist/ (built by `npm ci` through the `prepare` script, or `npm run
// build`). ROTSCOPE_FROM_SOURCE=1 runs src/ through tsx's loader instead, with no build between an
// edit and a run: the tests and `npm run dev` do that (tsx is a devDependency). A checkout with no
// dist/ yet runs from source too, when tsx is installed.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const COMPILED = new URL('../dist/entry.js', import.meta.url);
const fromSource = process.env.ROTSCOPE_FROM_SOURCE === '1' || !existsSync(COMPILED);
if (fromSource) {
  await import('tsx/esm/api').then(
    (tsx) => tsx.register(),
    () => {
      process.stderr.write('rotscope: dist/ is missing: run "npm run build" (npm ci does it)\n');
      process.exit(1);
    },
  );
}
const asksForHelp = process.argv.slice(3).some((a) => a === '--help' || a === '-h');
if (!fromSource && process.argv[2] === 'statusline' && !asksForHelp) {
  // Runs on every render of Claude Code's status line: straight to the CommonJS module, with
  // synchronous stdin/stdout (no stream modules). bin/rotscope-statusline.cjs is faster still.
  process.exitCode = createRequire(import.meta.url)('../dist/cjs/cli/statusline.js').main(
    process.argv.slice(3),
  );
} else {
  await runCommand();
}

async function runCommand() {
  const { run } = await import(fromSource ? '../src/entry.ts' : COMPILED.href);
  const io = {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    // All of standard input (statusline). A terminal gives '' at once instead of waiting for ^D.
    readStdin: async () => {
      if (process.stdin.isTTY) return '';
      const chunks = [];
      try {
        for await (const chunk of process.stdin) chunks.push(chunk);
      } catch {
        // A closed or broken stdin reads as what arrived before.
      }
      return Buffer.concat(chunks).toString('utf8');
    },
  };
  try {
    process.exitCode = await run(process.argv.slice(2), io, process.env);
  } catch (error) {
    io.stderr(`rotscope: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
