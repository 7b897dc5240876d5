/**
 * Replays a real Claude Code capture (test/fixtures/claude-code/<version>/<scenario>: the OTLP
 * bodies the CLI exported, in the order they arrived, brotli-compressed) to a running rotscope
 * over OTLP/HTTP, as the CLI sent them. Resolves with the session id once every body is in.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';

const ROOT = join(import.meta.dirname, '../fixtures/claude-code');

export async function sendClaudeCodeCapture(
  url: string,
  version: string,
  scenario: string,
): Promise<string> {
  const dir = join(ROOT, version, scenario);
  const capture = JSON.parse(readFileSync(join(dir, 'capture.json'), 'utf8')) as {
    sessionId: string;
  };
  for (const file of readdirSync(dir).sort()) {
    const match = /^\d+-(traces|logs)\.(json|pb)\.br$/.exec(file);
    if (!match) continue;
    const response = await fetch(`${url}/v1/${match[1]}`, {
      method: 'POST',
      headers: {
        'content-type': match[2] === 'json' ? 'application/json' : 'application/x-protobuf',
      },
      body: brotliDecompressSync(readFileSync(join(dir, file))),
    });
    if (response.status !== 200)
      throw new Error(`${scenario}/${file}: ${response.status} ${await response.text()}`);
  }
  return capture.sessionId;
}
