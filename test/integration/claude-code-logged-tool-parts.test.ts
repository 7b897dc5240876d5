/**
 * Claude Code's tool result sizes arrive only in `tool_result` log events (conventions §5.0),
 * on another export schedule than the spans. Whatever arrives first, each logged result joins
 * the next call of its stream, is held until a compaction, and a Read that stays in context is
 * reported. Data: what the real CLI 2.1.197 exported reading two 80 KB files
 * (test/fixtures/real/claude-code-2.1.197/large-results).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IngestPipeline } from '../../src/receiver/pipeline.ts';
import { FindingSet } from '../../src/detectors/drive.ts';
import { toolTakeover, type ToolTakeoverState } from '../../src/detectors/tool-takeover.ts';
import type { FindingDraft } from '../../src/model/findings.ts';
import { DEFAULT_THRESHOLDS } from '../../src/model/findings.ts';
import { decodeLogs, decodeTraces } from '../../src/otlp/decode.ts';
import { getConversation } from '../../src/store/browse.ts';
import { ensureWorkspace } from '../../src/store/workspaces.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

const DIR = join(import.meta.dirname, '../fixtures/real/claude-code-2.1.197/large-results');
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();
const SESSION = 'f09cfaea-6a13-4ac5-bacc-f467bd5ac532';
const WS = 'default';

let store: TestStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

/** One captured body through the receiver's pipeline (decode, normalize, store). */
async function ingest(pipeline: IngestPipeline, file: string): Promise<void> {
  const body = readFileSync(join(DIR, file), 'utf8');
  if (file.includes('-traces.')) {
    const r = decodeTraces(body, 'json');
    if (!r.ok) throw new Error(r.reason);
    await pipeline.ingestSpans(WS, r.value.items);
  } else {
    const r = decodeLogs(body, 'json');
    if (!r.ok) throw new Error(r.reason);
    await pipeline.ingestLogs(WS, r.value.items);
  }
}

/**
 * The tool_takeover findings of the stored conversation (the detector fed in start order), one
 * per anchor as the driver keeps them (a lasting episode reports its anchor again).
 */
async function takeovers(s: TestStore): Promise<FindingDraft[]> {
  const conv = await getConversation(s.db, WS, SESSION);
  let state: ToolTakeoverState = toolTakeover.initial();
  const out = new FindingSet();
  for (const call of conv?.calls ?? []) {
    const step = toolTakeover.step(
      state,
      { type: 'call', call },
      { thresholds: DEFAULT_THRESHOLDS },
    );
    state = step.state;
    for (const finding of step.findings) out.add(finding);
  }
  return out.values();
}

const ORDERS: Array<[string, string[]]> = [
  ['as the CLI sent them', FILES],
  [
    'all logs first',
    [...FILES.filter((f) => f.includes('-logs.')), ...FILES.filter((f) => f.includes('-traces.'))],
  ],
  [
    'all spans first',
    [...FILES.filter((f) => f.includes('-traces.')), ...FILES.filter((f) => f.includes('-logs.'))],
  ],
];

describe('Claude Code tool_result events joined to the next call', () => {
  for (const [name, order] of ORDERS) {
    it(`a Read that stays in context is a tool_takeover (${name})`, async () => {
      store = await createTestStore();
      await ensureWorkspace(store.db, WS);
      const pipeline = new IngestPipeline(store);
      for (const f of order) await ingest(pipeline, f);

      const conv = await getConversation(store.db, WS, SESSION);
      // 85,171 bytes per Read, 4 bytes a token: 21,293 estimated tokens; each joined to the
      // next call (the results since the previous one); the detector holds them
      expect(conv!.calls.map((c) => c.parts?.tools ?? null)).toEqual([
        null,
        { Read: 21_293 },
        { Read: 21_293 },
        { Bash: 6_150 },
        { Bash: 3 },
      ]);
      expect(conv!.calls.every((c) => c.parts === null || c.parts.estimatedFrom === 'bytes')).toBe(
        true,
      );

      const found = await takeovers(store);
      expect(found.map((f) => [f.detector, f.severity, f.details.tool])).toEqual([
        ['tool_takeover', 'warning', 'Read'],
      ]);
      expect(found[0]!.details).toMatchObject({ estimatedFrom: 'bytes', peakTokens: 42_586 });
      expect(found[0]!.summary).toContain('estimated from result bytes');
    }, 60_000);
  }
});
