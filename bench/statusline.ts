/**
 * `rotscope statusline` on a 1 MB and a 1 GB transcript (DESIGN §10, issue 13): the in-process
 * reading (median of 21), and the whole command as Claude Code runs it, paired with a bare
 * `node -e ''` in the same run (ratio of medians; target ≤ 1.1× and the same on both sizes):
 * `statusline_cjs` is bin/rotscope-statusline.cjs (what `rotscope claude-code install` writes),
 * `rotscope_statusline` is `bin/rotscope.js statusline`. Both run the compiled dist/
 * (`npm run build` first).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readContext } from '../src/cli/statusline.ts';
import { timeProcess, versusBareNode } from './process-timing.ts';
import { transcript } from './transcript-file.ts';

const BIN = fileURLToPath(new URL('../bin/rotscope.js', import.meta.url));
const CJS = fileURLToPath(new URL('../bin/rotscope-statusline.cjs', import.meta.url));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchStatusline() {
  const dir = mkdtempSync(path.join(tmpdir(), 'rotscope-bench-statusline-'));
  try {
    const result: Record<string, unknown> = {};
    for (const [name, bytes] of [
      ['1mb', 1024 * 1024],
      ['1gb', 1024 * 1024 * 1024],
    ] as const) {
      const file = path.join(dir, `${name}.jsonl`);
      await transcript(file, bytes);
      const status = { model: { id: 'claude-sonnet-4-5' }, transcript_path: file };
      const inProcess: number[] = [];
      for (let i = 0; i < 21; i++) {
        const started = performance.now();
        const reading = readContext(status, {});
        inProcess.push(performance.now() - started);
        if (reading?.tokens !== 151_003)
          throw new Error(`wrong reading ${JSON.stringify(reading)}`);
      }
      result[`${name}_in_process_ms`] = Number(median(inProcess).toFixed(2));
      for (const [entry, args] of [
        ['statusline_cjs', [CJS]],
        ['rotscope_statusline', [BIN, 'statusline']],
      ] as const) {
        result[`${name}_${entry}`] = await versusBareNode(async () => {
          const run = await timeProcess([...args], JSON.stringify(status));
          // 151,003 of Claude Sonnet's 200k: a wrong reading means the bench measured nothing.
          if (!run.stdout.includes('ctx 75% 151k/200k'))
            throw new Error(`wrong status line: ${JSON.stringify(run.stdout)}`);
          return run;
        });
      }
      rmSync(file, { force: true });
    }
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
