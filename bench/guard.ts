/**
 * The tool-result guard (issue 25 §2) as Claude Code runs it on every tool call:
 * bin/rotscope-guard.cjs (what `rotscope claude-code install` writes) with a PostToolUse input of
 * a small result (the common case: it passes, writes nothing) and a PreToolUse Read of a large
 * file (it narrows), on a 1 MB and a 1 GB transcript, each paired with a bare `node -e ''` in the
 * same run (ratio of medians; target ≤ 1.1× and flat in transcript size). Runs the compiled
 * dist/ (`npm run build` first).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { timeProcess, versusBareNode } from './process-timing.ts';
import { transcript } from './transcript-file.ts';

const GUARD = fileURLToPath(new URL('../bin/rotscope-guard.cjs', import.meta.url));

export async function benchGuard() {
  const dir = mkdtempSync(path.join(tmpdir(), 'rotscope-bench-guard-'));
  try {
    const big = path.join(dir, 'big.log');
    writeFileSync(big, `${'lorem ipsum dolor sit amet '.repeat(3)}\n`.repeat(40_000)); // ~3.3 MB
    // The guard's log and config under this temp HOME (timeProcess passes the environment on).
    process.env.ROTSCOPE_GUARD_LOG = path.join(dir, 'guard.log');
    process.env.ROTSCOPE_GUARD_CONFIG = path.join(dir, 'guard.json');
    const result: Record<string, unknown> = {};
    for (const [name, bytes] of [
      ['1mb', 1024 * 1024],
      ['1gb', 1024 * 1024 * 1024],
    ] as const) {
      const file = path.join(dir, `${name}.jsonl`);
      await transcript(file, bytes);
      const pass = JSON.stringify({
        session_id: 'bench',
        transcript_path: file,
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'ls' },
        tool_response: { stdout: 'a\nb\n', stderr: '' },
      });
      const narrow = JSON.stringify({
        session_id: 'bench',
        transcript_path: file,
        hook_event_name: 'PreToolUse',
        tool_name: 'Read',
        tool_input: { file_path: big },
      });
      result[`${name}_small_result`] = await versusBareNode(async () => {
        const run = await timeProcess([GUARD], pass);
        if (run.stdout !== '') throw new Error(`a small result was not passed: ${run.stdout}`);
        return run;
      });
      result[`${name}_large_read`] = await versusBareNode(async () => {
        const run = await timeProcess([GUARD], narrow);
        if (!run.stdout.includes('"updatedInput"'))
          throw new Error(`the large Read was not narrowed: ${run.stdout}`);
        return run;
      });
      rmSync(file, { force: true });
    }
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
