/**
 * Replays what a producer exported (captured OTLP request bodies, one per file:
 * `NNN-traces.json`, `NNN-logs.json`, `.pb` for protobuf, `.br` when brotli-compressed) to a
 * running rotscope over OTLP/HTTP, as the producer sent them: each body must be taken (200).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { expect } from 'vitest';

/** A captured body's file name: its number, signal and encoding. */
const BODY_FILE = /^\d+-(traces|logs)\.(json|pb)(\.br)?$/;

/** POSTs one OTLP body to `${url}/v1/${signal}`; fails the test unless it is taken (200). */
export async function postOtlp(
  url: string,
  signal: 'traces' | 'logs',
  body: string | Buffer,
  options: { protobuf?: boolean; what?: string } = {},
): Promise<void> {
  const response = await fetch(`${url}/v1/${signal}`, {
    method: 'POST',
    headers: { 'content-type': options.protobuf ? 'application/x-protobuf' : 'application/json' },
    body,
  });
  const answer = await response.text();
  expect(response.status, `${options.what ?? signal}: ${answer.slice(0, 200)}`).toBe(200);
}

/**
 * POSTs the captured bodies of `dir` to `url`: `files` in the order given, else every body file
 * of the folder in file-name order (the order they arrived).
 */
export async function replayCapture(
  url: string,
  dir: string,
  files: readonly string[] = readdirSync(dir)
    .filter((f) => BODY_FILE.test(f))
    .sort(),
): Promise<void> {
  for (const file of files) {
    const match = BODY_FILE.exec(file);
    if (!match) throw new Error(`${file} is not a captured OTLP body (NNN-traces.json, …)`);
    const raw = readFileSync(join(dir, file));
    await postOtlp(url, match[1] as 'traces' | 'logs', match[3] ? brotliDecompressSync(raw) : raw, {
      protobuf: match[2] === 'pb',
      what: file,
    });
  }
}
