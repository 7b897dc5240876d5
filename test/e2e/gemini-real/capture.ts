/**
 * Captures what the real Gemini CLI sends, as fixtures: runs scenarios (scenarios.ts) with an
 * OTLP recorder between the CLI and a real `rotscope serve`, saves each traces and logs body
 * byte for byte (gzipped: every `llm_call` span repeats the 23 KB system prompt and 22 KB of
 * tool definitions) under test/fixtures/real/gemini-cli-<version>/<scenario>/, and prints what
 * rotscope made of each run. Not a test:
 *
 *   npx tsx test/e2e/gemini-real/capture.ts [scenario-id ...]   (default: the fixtures' scenarios)
 *
 * With `--chats` it writes under test/fixtures/real/gemini-cli-<version>-chats/<scenario>/ instead,
 * and keeps the session's chat file beside the telemetry (`chat.jsonl.gz`, the CLI's
 * `~/.gemini/tmp/<project>/chats/session-*.jsonl`): one session seen both ways.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { startChildServer } from '../../helpers/child-server.ts';
import {
  GEMINI_CLI_VERSION,
  GEMINI_INSTALL_HINT,
  geminiCliEntry,
} from '../../helpers/gemini-cli.ts';
import { describeSeen, runScenario } from './run-scenario.ts';
import { SCENARIOS } from './scenarios.ts';

const chats = process.argv.includes('--chats');
const OUT = fileURLToPath(
  new URL(
    `../../fixtures/real/gemini-cli-${GEMINI_CLI_VERSION}${chats ? '-chats' : ''}/`,
    import.meta.url,
  ),
);

/** An OTLP/HTTP endpoint that keeps every body and forwards it to `target`. */
async function recorder(target: string) {
  const bodies: Array<{ path: string; body: Buffer }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      bodies.push({ path: req.url ?? '/', body });
      fetch(`${target}${req.url ?? '/'}`, {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body,
      })
        .then(async (answer) => {
          res.writeHead(answer.status, { 'content-type': 'application/json' });
          res.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch((error: unknown) => {
          res.writeHead(502);
          res.end(String(error));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

const entry = geminiCliEntry();
if (!entry) {
  console.error(GEMINI_INSTALL_HINT);
  process.exit(1);
}
/** The scenarios kept as fixtures by default (small, and between them every signal read). */
const FIXTURES = ['healthy', 'cut-off', 'cut-off-no-prompts', 'compression'];
const named = process.argv.slice(2).filter((a) => a !== '--chats');
const wanted = named.length > 0 ? named : FIXTURES;
const tmp = mkdtempSync(join(tmpdir(), 'rotscope-gemini-capture-'));
const server = await startChildServer({
  ROTSCOPE_DATA_DIR: join(tmp, 'serve'),
  ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
  ROTSCOPE_SPLIT_EVIDENCE_SETTLE_MS: '1500',
  ROTSCOPE_EVALUATOR_QUIET_MS: '200',
});
try {
  for (const scenario of SCENARIOS.filter((s) => wanted.includes(s.id))) {
    const rec = await recorder(server.url);
    const outcome = await runScenario(scenario, {
      entry,
      serverUrl: server.url,
      otlpUrl: rec.url,
    });
    await rec.close();
    const dir = join(OUT, scenario.id);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    let n = 0;
    for (const { path, body } of rec.bodies) {
      const signal = path.replace(/^\/v1\//, '');
      n++;
      if (signal === 'metrics') continue;
      writeFileSync(join(dir, `${String(n).padStart(3, '0')}-${signal}.json.gz`), gzipSync(body));
    }
    if (chats)
      for (const chat of outcome.chatFiles)
        writeFileSync(join(dir, 'chat.jsonl.gz'), gzipSync(chat.text));
    console.log(
      `${scenario.id}: ran=${outcome.ran} session=${outcome.sessionId}\n` +
        `  findings: ${outcome.findings === null ? '-' : describeSeen(outcome.findings)}\n` +
        `  stored: ${JSON.stringify(outcome.stored)}\n` +
        `  fake: ${outcome.requests.map((r) => `${r.kind}:${r.answer}`).join(' | ')}`,
    );
  }
} finally {
  server.process.kill('SIGTERM');
  await server.exited;
  rmSync(tmp, { recursive: true, force: true });
}
