/**
 * `rotscope analyze` on calls of a model no source knows (issue 34 §2), as a user runs it: the
 * real bin/rotscope.js in a child process. The stream says "window unknown" for the model instead
 * of "peak unknown", the report names the calls not judged and the flag that fixes it, and with
 * that flag the same file is judged.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { hex, jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';

/** No catalog row, family or agent knows it. */
const MODEL = 'zephyr-quill-7';

let dir: string;
let file: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rotscope-analyze-window-'));
  file = join(dir, 'trace.json');
  const start = 1_767_225_600_000_000_000n;
  const traceId = hex(16);
  const spans = [150_000, 170_000, 190_000].map((input, i) =>
    jsonSpan({
      traceId,
      name: `chat ${MODEL}`,
      startNs: start + BigInt(i) * 1_000_000_000n,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': MODEL,
        'gen_ai.conversation.id': 'unknown-window',
        'gen_ai.usage.input_tokens': input,
        'gen_ai.usage.output_tokens': 100,
      },
    }),
  );
  await writeFile(file, JSON.stringify(jsonRequest(spans)));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('rotscope analyze on a model no source knows', () => {
  it('says "window unknown" and the flag that fixes it; with the flag, judges the calls', async () => {
    const [text, json, judged] = await Promise.all([
      runCli(['analyze', file]),
      runCli(['analyze', file, '--json']),
      runCli(['analyze', file, '--window', 'zephyr-*=200000']),
    ]);

    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`main thread: 3 calls, window unknown for ${MODEL}`);
    expect(text.stdout).not.toContain('peak unknown');
    expect(text.stdout).toContain(
      `no window known for ${MODEL}: 3 calls not judged for context too full; pass --window '${MODEL}=TOKENS'`,
    );

    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as {
      conversations: Array<{ streams: Array<{ windowUnknown: string[]; window: number | null }> }>;
      windowsUnknown: Array<{ model: string; calls: number }>;
    };
    expect(report.windowsUnknown).toEqual([{ model: MODEL, calls: 3 }]);
    expect(report.conversations[0]?.streams[0]).toMatchObject({
      window: null,
      windowUnknown: [MODEL],
    });

    expect(judged.code, judged.stderr).toBe(0);
    expect(judged.stdout).toContain('peak 190,000 of 200,000 tokens (95%)');
    expect(judged.stdout).toMatch(/CRITICAL\s+context_too_full/);
    expect(judged.stdout).not.toContain('window unknown');
    expect(judged.stdout).not.toContain('no window known');
  }, 120_000);
});
