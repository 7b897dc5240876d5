/** `rotscope statusline`: Claude Code's status JSON in, one line out, always. */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  formatStatusLine,
  lastUsageFromTranscript,
  statuslineCommand,
} from '../../../src/cli/statusline.ts';

const TRANSCRIPT = fileURLToPath(
  new URL('../../fixtures/real/claude-code_transcript_sidechains.jsonl', import.meta.url),
);
const dir = mkdtempSync(path.join(tmpdir(), 'rotscope-statusline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function statusline(input: unknown): Promise<string> {
  let out = '';
  const code = await statuslineCommand(typeof input === 'string' ? input : JSON.stringify(input), {
    stdout: (t) => (out += t),
  });
  expect(code).toBe(0);
  return out;
}

const assistant = (tokens: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: 'assistant',
    isSidechain: false,
    message: {
      model: 'claude-sonnet-4-5',
      usage: { input_tokens: 3, cache_read_input_tokens: tokens - 3, output_tokens: 9 },
    },
    ...extra,
  }) + '\n';

describe('rotscope statusline', () => {
  it("uses Claude Code's current_usage and window when sent", async () => {
    expect(
      await statusline({
        model: { id: 'claude-opus-4-6' },
        context_window: {
          context_window_size: 200_000,
          current_usage: {
            input_tokens: 3,
            cache_creation_input_tokens: 2_000,
            cache_read_input_tokens: 150_000,
          },
        },
      }),
    ).toBe('⚠ ctx ▰▰▰▰▰▰▰▰▱▱ 76% (152k/200k)\n');
  });

  it('falls back to the last main-thread entry of the transcript (the real one: 21,552 tokens)', async () => {
    expect(await lastUsageFromTranscript(TRANSCRIPT)).toEqual({
      tokens: 21_552,
      model: 'claude-sonnet-4-20250514',
    });
    expect(
      await statusline({ model: { id: 'claude-sonnet-4-20250514' }, transcript_path: TRANSCRIPT }),
    ).toBe('ctx ▰▱▱▱▱▱▱▱▱▱ 10% (22k/200k)\n');
  });

  it('skips sub-agent lines at the end and finds an entry far back in a large file', async () => {
    const file = path.join(dir, 'big.jsonl');
    writeFileSync(file, assistant(180_000));
    const filler = JSON.stringify({ type: 'user', message: { content: 'x'.repeat(1_000) } }) + '\n';
    appendFileSync(file, filler.repeat(3_000)); // ~3 MB after the entry
    appendFileSync(file, assistant(5_000, { isSidechain: true }));
    expect(await lastUsageFromTranscript(file)).toEqual({
      tokens: 180_000,
      model: 'claude-sonnet-4-5',
    });
    expect(await statusline({ transcript_path: file })).toBe('‼ ctx ▰▰▰▰▰▰▰▰▰▱ 90% (180k/200k)\n');
  });

  it('prints an empty reading for bad input, a missing transcript, or right after /compact', async () => {
    expect(await statusline('not json')).toBe('ctx –\n');
    expect(await statusline({ transcript_path: path.join(dir, 'missing.jsonl') })).toBe('ctx –\n');
    expect(await statusline({ context_window: { current_usage: null } })).toBe('ctx –\n');
    expect(formatStatusLine({ tokens: 1_234, window: null, model: null })).toBe('ctx 1,234 tokens');
  });
});
