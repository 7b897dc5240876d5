/**
 * Replays a real Claude Code capture (test/fixtures/claude-code/<version>/<scenario>: the OTLP
 * bodies the CLI exported, in the order they arrived, brotli-compressed) to a running rotscope
 * over OTLP/HTTP, as the CLI sent them (./capture-replay.ts). Resolves with the session id once
 * every body is in.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { replayCapture } from './capture-replay.ts';

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
  await replayCapture(url, dir);
  return capture.sessionId;
}
