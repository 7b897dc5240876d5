/**
 * Qwen Code's evidence arrives in two signals on separate export schedules (src/ingest/qwen.ts):
 * the `qwen-code.llm_request` spans are the calls; the logs say which calls are the compressor's
 * (side calls), whether a cut output was text, each compression, and each tool result's size.
 * Whatever arrives first, and with prompt logging off (no request or response text), the stored
 * calls end the same and the detectors find what the real-CLI scenarios find. Data: what the real
 * Qwen Code 0.24.4 exported (test/fixtures/real/qwen-code-0.24.4).
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
import { readInputText } from '../../src/receiver/input-text.ts';
import { getCoverage } from '../../src/reading/coverage.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

const DIR = join(import.meta.dirname, '../fixtures/real/qwen-code-0.24.4');
const WS = 'default';

type Body = { kind: 'spans'; items: Span[] } | { kind: 'logs'; items: LogRecord[] };

function bodies(name: string): Body[] {
  return readdirSync(join(DIR, name))
    .filter((f) => /^\d+-(logs|traces)\.json\.gz$/.test(f))
    .sort()
    .map((f): Body => {
      const text = gunzipSync(readFileSync(join(DIR, name, f))).toString('utf8');
      if (f.includes('-traces.')) {
        const r = decodeTraces(text, 'json');
        if (!r.ok) throw new Error(r.reason);
        return { kind: 'spans', items: r.value.items };
      }
      const r = decodeLogs(text, 'json');
      if (!r.ok) throw new Error(r.reason);
      return { kind: 'logs', items: r.value.items };
    });
}

const spansOf = (b: Body[]) => b.filter((x) => x.kind === 'spans');
const logsOf = (b: Body[]) => b.filter((x) => x.kind === 'logs');
/** The logs without the prompt-logging content (`logPrompts: false`). */
const noPrompts = (b: Body[]): Body[] =>
  b.map((x) =>
    x.kind === 'spans'
      ? x
      : {
          kind: 'logs',
          items: x.items.map((log) => {
            const { request_text: _q, response_text: _r, ...attributes } = log.attributes;
            return { ...log, attributes };
          }),
        },
  );

const ORDERS: Array<[string, (b: Body[]) => Body[]]> = [
  ['as the CLI sent them', (b) => b],
  ['all spans first', (b) => [...spansOf(b), ...logsOf(b)]],
  ['without prompt logging, all logs first', (b) => noPrompts([...logsOf(b), ...spansOf(b)])],
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
  const session = spansOf(all)[0]!.items.find((s) => s.name === 'qwen-code.llm_request')!
    .attributes['gen_ai.conversation.id'] as string;
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
  return { calls: conv.calls, compactions: conv.compactions, found };
}

const shape = (c: LlmCall) => [c.sideCall, c.contextTokens, c.finishReasonRaw, c.outputToolCall];

describe('Qwen Code logs joined to its spans, whatever arrives first', () => {
  for (const [name, order] of ORDERS) {
    const prompts = !name.includes('without');
    it(`compaction: the compressor calls side calls, two compactions, tool parts (${name})`, async () => {
      const r = await ingest('compaction', order);
      expect(r.calls.map(shape)).toEqual([
        [null, 500_000, 'tool_calls', true],
        [null, 870_000, 'tool_calls', true],
        ['compress', 870_500, 'stop', false],
        [null, 30_000, 'stop', false],
        ['compress', 31_000, 'stop', false],
      ]);
      expect(r.calls.map((c) => [c.contextWindow, c.windowSource])).toEqual(
        Array(5).fill([1_000_000, 'agent']),
      );
      expect(r.compactions.map((c) => [c.evidence, c.kind, c.tokensBefore, c.tokensAfter])).toEqual(
        [
          ['qwen_code_event', 'summarize', 876_312, null],
          ['qwen_code_event', 'summarize', 30_000, null],
        ],
      );
      // each read_file result (25,061 characters after the CLI's truncation) joins the next
      // main-thread call, not the compressor's
      expect(r.calls.filter((c) => c.sideCall === null).map((c) => c.parts?.tools ?? null)).toEqual(
        [null, { read_file: 6_265 }, { read_file: 6_265 }],
      );
      expect(r.found).toEqual(['context_too_full/critical', 'history_lost/info/compacted']);
    }, 60_000);

    it(`cut-offs re-sent, the memory extractor a side call (${name})`, async () => {
      const r = await ingest('cutoff', order);
      const extractor = 'managed-auto-memory-extractor';
      expect(r.calls.map(shape)).toEqual([
        // the text cut and its re-send: text when the response was logged, else unknown
        [null, 24_000, 'length', prompts ? false : null],
        [null, 24_000, 'length', prompts ? false : null],
        [null, 24_500, 'stop', false],
        [extractor, 11_098, 'stop', false],
        // the cut write_file call: nothing says it was a tool call
        [null, 25_000, 'length', null],
        [null, 25_400, 'stop', false],
        [extractor, 11_150, 'stop', false],
      ]);
      expect(r.found).toEqual([
        'output_cut_off/warning',
        'output_cut_off/warning',
        'output_cut_off/warning',
      ]);
      // Coverage says what Qwen Code cannot send: a cut tool call
      const coverage = await getCoverage(store!.db, WS);
      const qwen = coverage.producers.find((p) => p.producer === 'qwen_code');
      expect(qwen?.agent).toBe('Qwen Code');
      expect(qwen?.blind).not.toContain('output_cut_off');
      expect(qwen?.limits?.output_cut_off).toContain('tool call cut at the output limit');
    }, 60_000);
  }
});

/** The session file Qwen Code wrote (~/.qwen/projects/<cwd>/chats/<session>.jsonl). */
const sessionText = (name: string) =>
  gunzipSync(readFileSync(join(DIR, name, 'session.jsonl.gz'))).toString('utf8');

describe('Qwen Code session files (rotscope analyze / import)', () => {
  it('reads the calls, side calls, windows, tool parts and compressions of a session file', () => {
    const loaded = readInputText(
      'chats/session.jsonl',
      sessionText('compaction'),
      { workspaceId: WS, captureContent: false, windowOverrides: [] },
      'analyze',
    );
    if (!loaded.ok) throw new Error(loaded.error);
    expect(loaded.file.format).toBe('qwen_session');
    const { calls, compactions } = loaded.file.normalized;
    expect(calls.map((c) => [c.sideCall, c.contextTokens, c.outputToolCall])).toEqual([
      [null, 500_000, true],
      [null, 870_000, true],
      ['compress', 870_500, false],
      [null, 30_000, false],
      ['compress', 31_000, false],
    ]);
    expect(calls.map((c) => [c.contextWindow, c.windowSource])).toEqual(
      Array(5).fill([1_000_000, 'agent']),
    );
    expect(calls.filter((c) => c.sideCall === null).map((c) => c.parts?.tools ?? null)).toEqual([
      null,
      { read_file: 6_265 },
      { read_file: 6_265 },
    ]);
    expect(compactions.map((c) => [c.evidence, c.trigger])).toEqual([
      ['qwen_code_session', 'auto'],
      ['qwen_code_session', 'manual'],
    ]);
  });

  it('an import of the session file after its telemetry counts each call once', async () => {
    store = await createTestStore();
    await ensureWorkspace(store.db, WS);
    const pipeline = new IngestPipeline(store);
    for (const b of bodies('compaction')) {
      if (b.kind === 'spans') await pipeline.ingestSpans(WS, b.items);
      else await pipeline.ingestLogs(WS, b.items);
    }
    const loaded = readInputText(
      'chats/session.jsonl',
      sessionText('compaction'),
      { workspaceId: WS, captureContent: false, windowOverrides: [] },
      'import',
    );
    if (!loaded.ok) throw new Error(loaded.error);
    const { merged } = await pipeline.ingestNormalized(WS, loaded.file.normalized);
    expect(merged).toBe(5);
    const session = loaded.file.normalized.calls[0]!.conversationId;
    const conv = (await getConversation(store.db, WS, session))!;
    expect(conv.calls.map((c) => [c.producer, c.sideCall, c.contextTokens])).toEqual([
      ['qwen_code', null, 500_000],
      ['qwen_code', null, 870_000],
      ['qwen_code', 'compress', 870_500],
      ['qwen_code', null, 30_000],
      ['qwen_code', 'compress', 31_000],
    ]);
    // each compression once, its trigger from the file
    expect(conv.compactions.map((c) => [c.kind, c.trigger, c.tokensBefore])).toEqual([
      ['summarize', 'auto', 876_312],
      ['summarize', 'manual', 30_000],
    ]);
  }, 60_000);
});
