/**
 * Gemini CLI chat files (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, src/ingest/gemini-sessions.ts)
 * read by `rotscope analyze` / `import`, on the data the real Gemini CLI 0.61.0 wrote in one run
 * beside its telemetry (test/fixtures/real/gemini-cli-0.61.0-chats): the calls, tool results and
 * compression the file holds, the detectors' findings from it alone, and one session counted once
 * when the file is imported after the telemetry.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTimeline, driveDetectors } from '../../src/detectors/index.ts';
import { DEFAULT_THRESHOLDS } from '../../src/model/findings.ts';
import type { Normalized } from '../../src/model/calls.ts';
import { decodeLogs, decodeTraces } from '../../src/otlp/decode.ts';
import { readInputText } from '../../src/receiver/input-text.ts';
import { IngestPipeline } from '../../src/receiver/pipeline.ts';
import { getConversation } from '../../src/store/browse.ts';
import { ensureWorkspace } from '../../src/store/workspaces.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

const DIR = join(import.meta.dirname, '../fixtures/real/gemini-cli-0.61.0-chats');
const WS = 'default';
const CTX = { workspaceId: WS, captureContent: false, windowOverrides: [] };

const chatText = (scenario: string) =>
  gunzipSync(readFileSync(join(DIR, scenario, 'chat.jsonl.gz'))).toString('utf8');

function chatFile(scenario: string, command: 'analyze' | 'import' = 'import'): Normalized {
  const loaded = readInputText(
    `/home/u/.gemini/tmp/work/chats/session-${scenario}.jsonl`,
    chatText(scenario),
    CTX,
    command,
  );
  if (!loaded.ok) throw new Error(loaded.error);
  expect(loaded.file.format).toBe('gemini_session');
  return loaded.file.normalized;
}

const found = (n: Pick<Normalized, 'calls' | 'compactions'>) =>
  driveDetectors({}, buildTimeline(n.calls, n.compactions), { thresholds: DEFAULT_THRESHOLDS })
    .findings.values()
    .map((f) => `${f.detector}/${f.severity}${f.kind ? `/${f.kind}` : ''}`)
    .sort();

let store: TestStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

/** A store holding the scenario's telemetry, as the CLI exported it. */
async function withTelemetry(scenario: string) {
  store = await createTestStore();
  await ensureWorkspace(store.db, WS);
  const pipeline = new IngestPipeline(store);
  for (const f of readdirSync(join(DIR, scenario)).sort()) {
    const m = /^\d+-(traces|logs)\.json\.gz$/.exec(f);
    if (m === null) continue;
    const text = gunzipSync(readFileSync(join(DIR, scenario, f))).toString('utf8');
    if (m[1] === 'traces') {
      const r = decodeTraces(text, 'json');
      if (!r.ok) throw new Error(r.reason);
      await pipeline.ingestSpans(WS, r.value.items);
    } else {
      const r = decodeLogs(text, 'json');
      if (!r.ok) throw new Error(r.reason);
      await pipeline.ingestLogs(WS, r.value.items);
    }
  }
  return pipeline;
}

describe('Gemini CLI chat files', () => {
  it('reads each main-thread call, its tool calls and the results the next call got', () => {
    const { calls, compactions } = chatFile('tool-takeover', 'analyze');
    expect(
      calls.map((c) => [
        c.contextTokens,
        c.outputToolCall,
        c.outputToolName,
        c.parts?.tools ?? null,
      ]),
    ).toEqual([
      [11_764, true, 'read_file', null],
      [22_201, true, 'read_file', { read_file: 10_250 }],
      [32_639, true, 'run_shell_command', { read_file: 10_250 }],
      [32_747, false, null, { run_shell_command: 21 }],
    ]);
    // one session, its window from the model (the file does not say it)
    expect(new Set(calls.map((c) => c.conversationId)).size).toBe(1);
    expect(calls.every((c) => c.sideCall === null && c.finishReasonRaw === null)).toBe(true);
    expect(calls.map((c) => c.windowSource)).toEqual(Array(4).fill('catalog'));
    expect(compactions).toEqual([]);
    expect(found({ calls, compactions })).toEqual(['tool_takeover/warning']);
  });

  it('sees the compression of a resumed session by the state snapshot that opens the history', () => {
    const { calls, compactions } = chatFile('compression', 'analyze');
    expect(calls.map((c) => c.contextTokens)).toEqual([200_000, 260_000, 320_000, 380_000, 14_000]);
    expect(compactions.map((c) => [c.evidence, c.kind, c.trigger, c.tokensBefore])).toEqual([
      ['gemini_cli_session', 'summarize', null, 380_000],
    ]);
    // the drop is explained: compacted, not lost
    expect(found({ calls, compactions })).toEqual(['history_lost/info/compacted']);
  });

  it('reads a resumed session written in two files (the resume began in another minute) as the one file', () => {
    // the CLI names a chat file by the minute it started and, resuming after a compression,
    // writes the header again: in the same minute into the same file, else into a second one
    const text = chatText('compression');
    const resumedAt = text.indexOf('\n{"sessionId"') + 1;
    expect(resumedAt).toBeGreaterThan(0);
    const read = (name: string, part: string) => {
      const loaded = readInputText(`/home/u/.gemini/tmp/work/chats/${name}`, part, CTX, 'analyze');
      if (!loaded.ok) throw new Error(loaded.error);
      return loaded.file.normalized;
    };
    const first = read('session-2026-12-05T03-50-d401056f.jsonl', text.slice(0, resumedAt));
    const second = read('session-2026-12-05T03-51-d401056f.jsonl', text.slice(resumedAt));
    const whole = chatFile('compression', 'analyze');
    const both = {
      calls: [...first.calls, ...second.calls],
      compactions: [...first.compactions, ...second.compactions],
    };
    expect(both.calls.map((c) => [c.spanId, c.contextTokens])).toEqual(
      whole.calls.map((c) => [c.spanId, c.contextTokens]),
    );
    expect(found(both)).toEqual(found(whole));
  });

  for (const scenario of ['tool-takeover', 'compression']) {
    it(`an import of the chat file after its telemetry counts each call once (${scenario})`, async () => {
      const pipeline = await withTelemetry(scenario);
      const file = chatFile(scenario);
      const session = file.calls[0]!.conversationId;
      const before = (await getConversation(store!.db, WS, session))!;
      expect(before.calls.length).toBeGreaterThanOrEqual(file.calls.length);
      const { merged } = await pipeline.ingestNormalized(WS, file);
      expect(merged).toBe(file.calls.length);
      const after = (await getConversation(store!.db, WS, session))!;
      expect(after.calls.map((c) => [c.spanId, c.producer])).toEqual(
        before.calls.map((c) => [c.spanId, c.producer]),
      );
      expect(after.compactions.map((c) => c.evidence)).toEqual(
        before.compactions.map((c) => c.evidence),
      );
    }, 60_000);
  }

  it('a chat file imported with no telemetry of its session is stored, once however often', async () => {
    store = await createTestStore();
    await ensureWorkspace(store.db, WS);
    const pipeline = new IngestPipeline(store);
    const file = chatFile('compression');
    expect((await pipeline.ingestNormalized(WS, file)).merged).toBe(0);
    await pipeline.ingestNormalized(WS, chatFile('compression'));
    const conv = (await getConversation(store.db, WS, file.calls[0]!.conversationId))!;
    expect(conv.calls.map((c) => [c.producer, c.contextTokens])).toEqual(
      file.calls.map((c) => ['gemini_cli_session', c.contextTokens]),
    );
    expect(conv.compactions.map((c) => c.evidence)).toEqual(['gemini_cli_session']);
  }, 60_000);
});
