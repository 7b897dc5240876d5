/**
 * Gemini CLI's evidence arrives in two signals on separate export schedules (conventions
 * §5.0.2): the `llm_call` spans are the calls; the logs hold each call's role (side calls), its
 * finish reasons (streamed responses without span context) and its tool results. Whatever
 * arrives first, and however the logs are split into batches, the stored calls end the same:
 * finish reasons joined, the compressor's calls side calls, tool results in the next main-thread
 * call's parts, and the detectors find what the real-CLI scenarios find. Data: what the real CLI
 * 0.61.0 exported (test/fixtures/real/gemini-cli-0.61.0).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTimeline, driveDetectors } from '../../src/detectors/index.ts';
import type { LlmCall } from '../../src/model/calls.ts';
import { DEFAULT_THRESHOLDS } from '../../src/model/findings.ts';
import type { LogRecord, Span } from '../../src/model/telemetry.ts';
import { decodeLogs, decodeTraces } from '../../src/otlp/decode.ts';
import { IngestPipeline } from '../../src/receiver/pipeline.ts';
import { getConversation } from '../../src/store/browse.ts';
import { ensureWorkspace } from '../../src/store/workspaces.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

const DIR = join(import.meta.dirname, '../fixtures/real/gemini-cli-0.61.0');
const WS = 'default';

type Body = { kind: 'spans'; items: Span[] } | { kind: 'logs'; items: LogRecord[] };

function bodies(name: string): Body[] {
  return readdirSync(join(DIR, name))
    .sort()
    .flatMap((f): Body[] => {
      const text = gunzipSync(readFileSync(join(DIR, name, f))).toString('utf8');
      if (f.includes('-traces.')) {
        const r = decodeTraces(text, 'json');
        if (!r.ok) throw new Error(r.reason);
        return [{ kind: 'spans', items: r.value.items }];
      }
      const r = decodeLogs(text, 'json');
      if (!r.ok) throw new Error(r.reason);
      return [{ kind: 'logs', items: r.value.items }];
    });
}

const spansOf = (b: Body[]) => b.filter((x) => x.kind === 'spans');
const logsOf = (b: Body[]) => b.filter((x) => x.kind === 'logs');
/** Every log record a batch of its own: each response arrives after its request was stored. */
const oneByOne = (b: Body[]): Body[] =>
  logsOf(b).flatMap((x) => x.items.map((item) => ({ kind: 'logs', items: [item] }) as Body));

const ORDERS: Array<[string, (b: Body[]) => Body[]]> = [
  ['as the CLI sent them', (b) => b],
  ['all logs first', (b) => [...logsOf(b), ...spansOf(b)]],
  ['all spans first', (b) => [...spansOf(b), ...logsOf(b)]],
  ['one log record per batch, then the spans', (b) => [...oneByOne(b), ...spansOf(b)]],
  [
    'the spans, then one log record per batch (twice: a retry)',
    (b) => [...spansOf(b), ...oneByOne(b), ...oneByOne(b)],
  ],
];

let store: TestStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

async function ingest(name: string, order: (b: Body[]) => Body[]) {
  store = await createTestStore();
  await ensureWorkspace(store.db, WS);
  const pipeline = new IngestPipeline(store);
  const all = bodies(name);
  const session = spansOf(all)[0]!.items.find((s) => s.name === 'llm_call')!.attributes[
    'gen_ai.conversation.id'
  ] as string;
  for (const b of order(all)) {
    if (b.kind === 'spans') await pipeline.ingestSpans(WS, b.items);
    else await pipeline.ingestLogs(WS, b.items);
  }
  const conv = (await getConversation(store.db, WS, session))!;
  const found = driveDetectors({}, buildTimeline(conv.calls, conv.compactions), {
    thresholds: DEFAULT_THRESHOLDS,
  })
    .findings.values()
    .map((f) => `${f.detector}/${f.severity}${f.kind ? `/${f.kind}` : ''}`)
    .sort();
  const logRows = await store.db
    .selectFrom('log_records')
    .select(['event_name', 'trace_id'])
    .where('workspace_id', '=', WS)
    .execute();
  return { calls: conv.calls, compactions: conv.compactions, found, logRows };
}

const shape = (c: LlmCall) => [c.sideCall, c.finishReasonRaw, c.outputToolCall, c.outputToolName];

describe('Gemini CLI logs joined to its spans, whatever arrives first', () => {
  for (const [name, order] of ORDERS) {
    it(`cut-offs: finish reasons from the responses, the cut function call critical (${name})`, async () => {
      const r = await ingest('cut-off', order);
      expect(r.calls.map(shape)).toEqual([
        [null, 'length', false, null],
        [null, 'length', true, 'write_file'],
        [null, 'stop', false, null],
      ]);
      expect(r.found).toEqual(['output_cut_off/critical', 'output_cut_off/warning']);
      // stored once each, every response with its request's span context
      const responses = r.logRows.filter((row) => row.event_name === 'gemini_cli.api_response');
      expect(responses).toHaveLength(3);
      expect(responses.every((row) => row.trace_id !== null)).toBe(true);
    }, 60_000);

    it(`compression: side calls, a compaction, tool parts, history_lost compacted (${name})`, async () => {
      const r = await ingest('compression', order);
      expect(r.calls.map((c) => c.sideCall)).toEqual([
        null,
        null,
        null,
        null,
        'utility_compressor',
        'utility_compressor',
        null,
      ]);
      expect(r.compactions.map((c) => [c.evidence, c.tokensBefore, c.tokensAfter])).toEqual([
        ['gemini_cli_event', 124_530, 169],
      ]);
      // each read_file result (81,999 characters, ~20,500 tokens) joins the next main-thread call
      expect(r.calls.filter((c) => c.sideCall === null).map((c) => c.parts?.tools)).toEqual([
        {},
        { read_file: 20_500 },
        { read_file: 20_500 },
        { read_file: 20_500 },
        {},
      ]);
      // the compressor's own 380k calls are not the main thread's: the drop is explained
      expect(r.found).toEqual(['history_lost/info/compacted']);
    }, 60_000);
  }
});
