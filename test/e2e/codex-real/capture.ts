/**
 * Captures what the real Codex CLI sends, as fixtures (test/fixtures/real/codex-0.171.0/):
 *
 *   npx tsx --import ./test/helpers/network-guard.mjs test/e2e/codex-real/capture.ts [--only <id>,<id>] [--out <dir>]
 *
 * Runs the real-CLI scenarios (./scenarios.ts) with the installed binary (test/helpers/codex-cli.ts),
 * offline, against the loopback fake Responses API, with its telemetry sent to a recorder on
 * loopback instead of a rotscope server. Per scenario it stores the OTLP bodies exactly as Codex
 * sent them, in arrival order (`NNN-traces.pb.br`, `NNN-logs.json.br`, ...; gzip of the transport
 * removed), the session file Codex wrote (`rollout-*.jsonl.br`) and `capture.json` (the fake API's
 * request log and each run's exit code and `--json` events, strings over 500 characters cut).
 * Everything but `capture.json` is
 * brotli-compressed. Never run by the tests; `.ci/run` installs the binary.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gunzipSync } from 'node:zlib';
import {
  CODEX_INSTALL_HINT,
  CODEX_VERSION,
  codexBinary,
  startCodexSession,
} from '../../helpers/codex-cli.ts';
import { CODEX_SCENARIOS } from './scenarios.ts';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = flag('--only')?.split(',');
const out =
  flag('--out') ??
  fileURLToPath(new URL(`../../fixtures/real/codex-${CODEX_VERSION}/`, import.meta.url));
const binary = codexBinary();
if (!binary) {
  process.stderr.write(`${CODEX_INSTALL_HINT}\n`);
  process.exit(2);
}

/** The `--json` events with long strings (a command's whole output) cut to 500 characters. */
function shortened(v: unknown): unknown {
  if (typeof v === 'string')
    return v.length <= 500 ? v : `${v.slice(0, 500)}[... ${v.length - 500} more characters]`;
  if (Array.isArray(v)) return v.map(shortened);
  if (typeof v === 'object' && v !== null)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shortened(x)]));
  return v;
}

for (const scenario of CODEX_SCENARIOS) {
  if (only && !only.includes(scenario.id)) continue;
  const dir = join(out, scenario.id);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  let n = 0;
  const recorder = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const json = (req.headers['content-type'] ?? '').includes('json');
      const signal = (req.url ?? '').endsWith('/v1/logs') ? 'logs' : 'traces';
      const name = `${String(++n).padStart(3, '0')}-${signal}.${json ? 'json' : 'pb'}.br`;
      writeFileSync(join(dir, name), brotliCompressSync(body));
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', () => resolve()));
  const port = (recorder.address() as AddressInfo).port;
  const session = await startCodexSession({
    binary,
    otlpUrl: `http://127.0.0.1:${port}`,
    script: scenario.script,
    ...scenario.options,
  });
  const runs: unknown[] = [];
  try {
    for (const run of scenario.runs) {
      const result = await session.run(run.prompt, { resume: run.resume === true });
      runs.push({
        prompt: run.prompt,
        resume: run.resume === true,
        exitCode: result.exitCode,
        isolated: result.isolated,
        events: shortened(result.events),
      });
      process.stdout.write(`${scenario.id}: exit ${result.exitCode} (thread ${result.threadId})\n`);
    }
    // Codex flushes on exit; the recorder has everything once the last run has ended
    await new Promise((r) => setTimeout(r, 500));
    for (const file of session.sessionFiles())
      writeFileSync(join(dir, `${basename(file)}.br`), brotliCompressSync(readFileSync(file)));
    writeFileSync(
      join(dir, 'capture.json'),
      `${JSON.stringify({ scenario: scenario.id, version: CODEX_VERSION, runs, requests: session.api.requests }, null, 1)}\n`,
    );
  } finally {
    await session.close();
    await new Promise<void>((resolve) => recorder.close(() => resolve()));
  }
}
