/** A Claude Code transcript file of a chosen size, for the benches that read one. */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

/** Writes a Claude Code transcript of about `bytes` whose last entry reads 151,003 tokens. */
export async function transcript(file: string, bytes: number): Promise<void> {
  const out = createWriteStream(file);
  const line =
    JSON.stringify({
      type: 'user',
      message: { role: 'user', content: 'lorem ipsum '.repeat(80) },
    }) + '\n';
  const block = line.repeat(Math.ceil((1024 * 1024) / line.length));
  for (let written = 0; written < bytes; written += block.length) {
    if (!out.write(block)) await once(out, 'drain');
  }
  out.write(
    JSON.stringify({
      type: 'assistant',
      isSidechain: false,
      message: {
        id: 'msg_bench',
        model: 'claude-sonnet-4-5',
        usage: {
          input_tokens: 3,
          cache_read_input_tokens: 150_000,
          cache_creation_input_tokens: 1_000,
        },
      },
    }) + '\n',
  );
  out.end();
  await once(out, 'finish');
}
