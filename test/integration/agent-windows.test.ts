/**
 * The window Claude Code's status line reports reaches the store (issue 34 §1): the status line
 * leaves `model.id` and `context_window.context_window_size` in a per-session file (mode 0600),
 * the next hook run sends it as a `rotscope.window` span to the server (caught here on loopback,
 * then stored through the receiver's pipeline into a real store: PGlite, or PostgreSQL with
 * DATABASE_URL), and the session's calls of that model get it (source `agent`): those stored
 * before it are judged again (the finding they should have raised is created then and queued for
 * the channels like any other), those stored after it get it as they are stored. A model no rule
 * knows (`claude-fable-5`) is judged on it; another session's calls are not.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hookCommand } from '../../src/cli/hook.ts';
import { readWindowNote, statuslineCommand, windowNotePath } from '../../src/cli/statusline.ts';
import { evaluateNow } from '../../src/evaluator/now.ts';
import { decodeTraces } from '../../src/otlp/decode.ts';
import { IngestPipeline } from '../../src/receiver/pipeline.ts';
import { ensureWorkspace } from '../../src/store/workspaces.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

const tmp = mkdtempSync(join(tmpdir(), 'rotscope-agent-windows-'));
const WS = 'agent-windows';
const MODEL = 'claude-fable-5';
const T0 = 1_767_000_000_000;
let store: TestStore;
let pipeline: IngestPipeline;
const hex = (text: string, length: number) =>
  createHash('sha256').update(text).digest('hex').slice(0, length);

/** One Claude Code 2.1.332 `llm_request` span of `session` holding `context` tokens, as OTLP/JSON. */
function llmRequest(session: string, n: number, context: number) {
  const ns = (ms: number) => String(BigInt(ms) * 1_000_000n);
  const attr = (key: string, v: string | number) => ({
    key,
    value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v },
  });
  return JSON.stringify({
    resourceSpans: [
      {
        resource: {
          attributes: [attr('service.name', 'claude-code'), attr('service.version', '2.1.332')],
        },
        scopeSpans: [
          {
            scope: { name: 'com.anthropic.claude_code.tracing' },
            spans: [
              {
                traceId: hex(`trace:${session}`, 32),
                spanId: hex(`span:${session}:${n}`, 16),
                name: 'claude_code.llm_request',
                kind: 1,
                startTimeUnixNano: ns(T0 + n * 10_000),
                endTimeUnixNano: ns(T0 + n * 10_000 + 2_000),
                attributes: [
                  attr('session.id', session),
                  attr('model', MODEL),
                  attr('gen_ai.request.model', MODEL),
                  attr('input_tokens', 8),
                  attr('cache_read_tokens', context - 1_008),
                  attr('cache_creation_tokens', 1_000),
                  attr('output_tokens', 40),
                  attr('stop_reason', 'end_turn'),
                  attr('query_source_safe', 'sdk'),
                ],
              },
            ],
          },
        ],
      },
    ],
  });
}

async function ingest(body: string): Promise<void> {
  const decoded = decodeTraces(body, 'json');
  if (!decoded.ok) throw new Error(decoded.reason);
  await pipeline.ingestSpans(WS, decoded.value.items);
}

async function evaluate(): Promise<void> {
  const dirty = await store.db
    .selectFrom('conversations')
    .select('id')
    .where('workspace_id', '=', WS)
    .where('dirty', '=', true)
    .execute();
  const evaluated = await evaluateNow(
    store,
    WS,
    dirty.map((d) => d.id),
  );
  expect(evaluated.failed).toEqual([]);
}

const callsOf = (session: string) =>
  store.db
    .selectFrom('llm_calls')
    .select(['span_id', 'context_tokens', 'context_window', 'window_source'])
    .where('workspace_id', '=', WS)
    .where('conversation_id', '=', session)
    .orderBy('start_ns')
    .execute();

const findingsOf = (session: string) =>
  store.db
    .selectFrom('findings')
    .select(['id', 'detector', 'severity', 'details', 'late'])
    .where('workspace_id', '=', WS)
    .where('conversation_id', '=', session)
    .execute();

describe('the window Claude Code reports, from its status line to the store', () => {
  beforeAll(async () => {
    store = await createTestStore();
    await ensureWorkspace(store.db, WS);
    const channel = await store.db
      .insertInto('channels')
      .values({ workspace_id: WS, type: 'webhook', name: 'hook', config: '{"url":"http://x"}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await store.db
      .insertInto('alert_channels')
      .values({ workspace_id: WS, channel_id: channel.id, min_severity: 'info' })
      .execute();
    pipeline = new IngestPipeline(store);
  });
  afterAll(async () => {
    await store?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('a model no rule knows: unjudged, then judged on the window the status line reported', async () => {
    // two sessions of a model no catalog row knows, at 180,000 tokens
    for (const session of ['sess1', 'sess2']) {
      await ingest(llmRequest(session, 1, 90_000));
      await ingest(llmRequest(session, 2, 180_000));
    }
    await evaluate();
    expect((await callsOf('sess1')).map((c) => c.context_window)).toEqual([null, null]);
    expect(await findingsOf('sess1')).toEqual([]);

    // the status line renders: the pair is left for the hooks, in a file only the user reads
    const env: Record<string, string> = { HOME: tmp, NO_COLOR: '1' };
    const status = {
      session_id: 'sess1',
      model: { id: MODEL, display_name: 'Fable 5' },
      context_window: { context_window_size: 200_000, current_usage: null },
    };
    const out: string[] = [];
    statuslineCommand(JSON.stringify(status), { stdout: (t) => out.push(t) }, env);
    expect(out).toEqual(['ctx –\n']);
    const file = windowNotePath(env, 'sess1')!;
    expect(readWindowNote(env, 'sess1')).toEqual({
      sessionId: 'sess1',
      model: MODEL,
      window: 200_000,
      sent: false,
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(tmp, '.rotscope', 'windows')).mode & 0o777).toBe(0o700);
    // the next render with the same pair writes nothing
    const before = readFileSync(file, 'utf8');
    const mtime = statSync(file).mtimeMs;
    statuslineCommand(JSON.stringify(status), { stdout: () => {} }, env);
    expect([readFileSync(file, 'utf8'), statSync(file).mtimeMs]).toEqual([before, mtime]);

    // the next hook run sends it, once
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.url === '/v1/traces') bodies.push(body);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const hookEnv = { ...env, ROTSCOPE_URL: url };
      const input = JSON.stringify({
        session_id: 'sess1',
        hook_event_name: 'PreCompact',
        trigger: 'auto',
      });
      await hookCommand(input, { stderr: () => {} }, hookEnv);
      await hookCommand(input, { stderr: () => {} }, hookEnv);
    } finally {
      server.close();
    }
    const windowBodies = bodies.filter((b) => b.includes('rotscope.window'));
    expect(windowBodies).toHaveLength(1);
    expect(readWindowNote(env, 'sess1')?.sent).toBe(true);

    // stored: the session's calls have the agent's window and are judged again
    await ingest(windowBodies[0]!);
    expect((await callsOf('sess1')).map((c) => [c.context_window, c.window_source])).toEqual([
      [200_000, 'agent'],
      [200_000, 'agent'],
    ]);
    expect((await callsOf('sess2')).map((c) => c.context_window)).toEqual([null, null]);
    await evaluate();
    const found = await findingsOf('sess1');
    expect(found.map((f) => [f.detector, f.severity])).toEqual([['context_too_full', 'critical']]);
    expect(await findingsOf('sess2')).toEqual([]);
    // late: the calls were judged before the window came; sent like any other finding
    expect(found[0]!.late).toBe(true);
    const deliveries = await store.db
      .selectFrom('deliveries')
      .select(['event'])
      .where('finding_id', '=', found[0]!.id)
      .execute();
    expect(deliveries.map((d) => d.event)).toEqual(['created']);

    // the same report again changes nothing; a later call gets the window as it is stored
    await ingest(windowBodies[0]!);
    await ingest(llmRequest('sess1', 3, 100_000));
    expect((await callsOf('sess1')).map((c) => [c.context_window, c.window_source])).toEqual([
      [200_000, 'agent'],
      [200_000, 'agent'],
      [200_000, 'agent'],
    ]);
  });
});
