/**
 * GitHub Copilot CLI's exporter may send a run's calls in batches before its `invoke_agent` span
 * (which ends last and carries the window, `token_limit`, and the compaction event): the real
 * capture of test/fixtures/real/copilot-1.0.102/fill-compaction, split in two batches before the
 * compaction and stored through the receiver's pipeline into a real store, gives every call
 * Copilot's own 64k window (the calls stored first are judged again), and the same findings as
 * one batch: one `view` takeover, the fill, the compaction. (A cut between a tool span and the
 * call it feeds leaves that call's result unnamed: `unknown`; not handled yet.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateNow } from '../../src/evaluator/now.ts';
import type { Span } from '../../src/model/telemetry.ts';
import { decodeTraces } from '../../src/otlp/decode.ts';
import { IngestPipeline } from '../../src/receiver/pipeline.ts';
import { ensureWorkspace } from '../../src/store/workspaces.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

const WS = 'copilot-batches';
const SESSION = '179d3531-8ce4-438d-96ef-e72265cec5bb';
let store: TestStore;

function capturedSpans(): Span[] {
  const file = join(
    import.meta.dirname,
    '../fixtures/real/copilot-1.0.102/fill-compaction/traces.json.gz',
  );
  const decoded = decodeTraces(gunzipSync(readFileSync(file)).toString('utf8'), 'json');
  if (!decoded.ok) throw new Error(decoded.reason);
  return decoded.value.items;
}

describe('GitHub Copilot CLI calls sent before the span that reports their window', () => {
  beforeAll(async () => {
    store = await createTestStore();
    await ensureWorkspace(store.db, WS);
  });
  afterAll(async () => store?.close());

  it('get its window when it arrives, and the findings are those of one batch', async () => {
    const spans = capturedSpans();
    const agent = spans.find((s) => s.name === 'invoke_agent')!;
    const compacted = BigInt(
      agent.events.find((e) => e.name.endsWith('compaction_complete'))!.timeUnixNano,
    );
    // the cut: before the last tool run ahead of the compaction (a tool span and the call it
    // feeds in one batch: the call's new messages name the tool only by its call id)
    const cut = spans
      .filter((s) => s.name.startsWith('execute_tool') && BigInt(s.startTimeUnixNano) < compacted)
      .map((s) => BigInt(s.startTimeUnixNano))
      .reduce((a, b) => (a > b ? a : b));
    const early = (s: Span) => s !== agent && BigInt(s.endTimeUnixNano) < cut;
    const pipeline = new IngestPipeline(store);
    await pipeline.ingestSpans(WS, spans.filter(early));
    const before = await store.db
      .selectFrom('llm_calls')
      .select(['context_window', 'window_source'])
      .where('workspace_id', '=', WS)
      .execute();
    expect(before.length).toBe(11);
    expect(new Set(before.map((c) => c.window_source))).toEqual(new Set(['catalog']));
    await pipeline.ingestSpans(
      WS,
      spans.filter((s) => !early(s)),
    );
    const calls = await store.db
      .selectFrom('llm_calls')
      .select(['context_window', 'window_source'])
      .where('workspace_id', '=', WS)
      .where('conversation_id', '=', SESSION)
      .execute();
    expect(calls).toHaveLength(18);
    expect(new Set(calls.map((c) => `${c.context_window}/${c.window_source}`))).toEqual(
      new Set(['64000/agent']),
    );
    const evaluated = await evaluateNow(store, WS, [SESSION]);
    expect(evaluated.failed).toEqual([]);
    const findings = await store.db
      .selectFrom('findings')
      .select(['detector', 'severity', 'kind', 'details'])
      .where('workspace_id', '=', WS)
      .execute();
    expect(
      findings
        .map(
          (f) =>
            `${f.detector}/${f.severity}/${f.kind ?? ''}/${(f.details as { tool?: string }).tool ?? ''}`,
        )
        .sort(),
    ).toEqual([
      'context_too_full/critical//',
      'history_lost/info/compacted/',
      'tool_takeover/warning//view',
    ]);
  });
});
