/**
 * The status line and the finding write one percent (issue 38: 58,000 of 200,000 was 28% in the
 * status line and 29% in the finding). Walks 0–100% of several windows, in steps of 0.05% plus
 * both sides of every whole-percent boundary, through the status line's command (Claude Code's
 * status JSON in, the line out: src/cli/statusline.ts, the code the real command runs) and the
 * context_too_full finding's summary, and holds both to the exact whole percent
 * floor(tokens · 100 / window). A sample of the values (every one the old status-line rule got
 * wrong among them) goes through the real command too: `bin/rotscope.js statusline` in a child
 * process, the status JSON on stdin and a transcript on disk, as Claude Code runs it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { statuslineCommand } from '../../src/cli/statusline.ts';
import { contextTooFull } from '../../src/detectors/index.ts';
import { DEFAULT_THRESHOLDS } from '../../src/model/findings.ts';
import { runCli } from '../helpers/cli.ts';
import { buildItems } from '../unit/detectors/builder.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'rotscope-percent-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MODEL = 'claude-sonnet-4-6';
/** The windows walked: Claude Code's two, a 2^20 one, and two an override sets. */
const WINDOWS = [200_000, 1_000_000, 128_000, 64_000, 1_048_576] as const;

/**
 * How the status line learns the window: Claude Code declares 1M and larger ones
 * (`context_window.context_window_size`); a smaller one than 200k is the user's override.
 */
const envFor = (window: number): Record<string, string> => ({
  NO_COLOR: '1',
  HOME: dir,
  ROTSCOPE_WINDOWS_DIR: path.join(dir, 'windows'),
  ...(window < 200_000 ? { ROTSCOPE_CONTEXT_WINDOW: String(window) } : {}),
});

/** The exact whole percent, in integers. */
const exactPercent = (tokens: number, window: number) => Math.floor((tokens * 100) / window);

/** Token counts from 1 to the window: every 0.05%, and both sides of each whole percent. */
function walk(window: number): number[] {
  const tokens = new Set<number>([1, window]);
  const step = Math.ceil(window / 2000);
  for (let t = step; t <= window; t += step) tokens.add(t);
  for (let p = 1; p <= 100; p++) {
    const first = Math.ceil((p * window) / 100);
    tokens.add(first);
    tokens.add(first - 1);
  }
  return [...tokens].filter((t) => t >= 1 && t <= window).sort((a, b) => a - b);
}

/** The status line's percent in a line (`ctx 29% 58k/200k`). */
function linePercent(line: string): number {
  const match = /ctx (\d+)% /.exec(line);
  if (!match) throw new Error(`no percent in status line ${JSON.stringify(line)}`);
  return Number(match[1]);
}

/** The status line for `tokens` of `window`, from the status JSON alone (no transcript). */
function statusLinePercent(tokens: number, window: number): number {
  let out = '';
  const status = {
    model: { id: MODEL, display_name: 'Sonnet 4.6' },
    workspace: { current_dir: dir, project_dir: dir },
    context_window: {
      context_window_size: window,
      current_usage: { input_tokens: tokens, output_tokens: 5 },
    },
  };
  statuslineCommand(JSON.stringify(status), { stdout: (t) => (out += t) }, envFor(window));
  return linePercent(out);
}

/** The finding's percent (`Context 29% full (58,000 of 200,000 tokens) …`). */
function findingPercent(tokens: number, window: number): number {
  const [item] = buildItems([{ ctx: tokens, window, model: MODEL }]);
  const context = { thresholds: { ...DEFAULT_THRESHOLDS, usageThreshold: 0, usageCritical: 0 } };
  const { findings } = contextTooFull.step(contextTooFull.initial(), item!, context);
  const summary = findings[0]?.summary ?? '';
  const match = /^Context (\d+)% full \(([\d,]+) of ([\d,]+) tokens\)/.exec(summary);
  if (!match) throw new Error(`no percent in finding ${JSON.stringify(summary)}`);
  expect([match[2], match[3]]).toEqual([tokens, window].map((n) => n.toLocaleString('en-US')));
  return Number(match[1]);
}

describe('one percent: the status line and the finding', () => {
  it.each(WINDOWS)('agree on every percent of a %d-token window', (window) => {
    const seen = new Set<number>();
    const disagreements: string[] = [];
    for (const tokens of walk(window)) {
      const exact = exactPercent(tokens, window);
      const line = statusLinePercent(tokens, window);
      const finding = findingPercent(tokens, window);
      if (line !== exact || finding !== exact)
        disagreements.push(`${tokens}: exact ${exact}%, status line ${line}%, finding ${finding}%`);
      seen.add(exact);
    }
    expect(disagreements).toEqual([]);
    // every whole percent from 0 to 100 was walked
    expect(seen.size).toBe(101);
  });

  it('agree through the real status-line command, as Claude Code runs it', async () => {
    // per window: the values the old status-line rule (floor(r·100)) wrote one lower, and a spread
    const sample: Array<{ tokens: number; window: number }> = [];
    for (const window of WINDOWS) {
      const picks = new Set<number>();
      for (let t = 1; t <= window; t++)
        if (Math.floor((t / window) * 100) !== exactPercent(t, window)) picks.add(t);
      for (const p of [1, 50, 70, 85, 100]) {
        const first = Math.ceil((p * window) / 100);
        if (first >= 1) picks.add(first);
        if (first - 1 >= 1) picks.add(first - 1);
      }
      for (const tokens of picks) sample.push({ tokens, window });
    }
    expect(sample.length).toBeGreaterThanOrEqual(50);
    expect(sample).toContainEqual({ tokens: 58_000, window: 200_000 });

    const run = async ({ tokens, window }: { tokens: number; window: number }) => {
      const transcript = path.join(dir, `transcript-${window}-${tokens}.jsonl`);
      writeFileSync(
        transcript,
        JSON.stringify({
          type: 'assistant',
          isSidechain: false,
          message: {
            id: `msg_${tokens}`,
            model: MODEL,
            usage: {
              input_tokens: Math.min(tokens, 6),
              cache_read_input_tokens: tokens - Math.min(tokens, 6),
              output_tokens: 5,
            },
          },
        }) + '\n',
      );
      const status = JSON.stringify({
        session_id: `percent-${window}-${tokens}`,
        transcript_path: transcript,
        cwd: dir,
        model: { id: MODEL, display_name: 'Sonnet 4.6' },
        workspace: { current_dir: dir, project_dir: dir },
        context_window: { context_window_size: window },
      });
      const result = await runCli(['statusline'], { stdin: status, env: envFor(window) });
      expect(result).toMatchObject({ code: 0, stderr: '' });
      return { tokens, window, line: linePercent(result.stdout) };
    };
    const lines: Array<{ tokens: number; window: number; line: number }> = [];
    for (let i = 0; i < sample.length; i += 4)
      lines.push(...(await Promise.all(sample.slice(i, i + 4).map(run))));

    const disagreements = lines
      .filter(({ tokens, window, line }) => line !== findingPercent(tokens, window))
      .map(({ tokens, window, line }) => `${tokens} of ${window}: status line ${line}%`);
    expect(disagreements).toEqual([]);
    expect(lines.find((l) => l.tokens === 58_000 && l.window === 200_000)?.line).toBe(29);
  }, 120_000);
});
