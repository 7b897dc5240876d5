/**
 * What was lost shows the dropped messages' text for Claude Code once `rotscope import` put the
 * transcript in the store (issue 36 §5). A real 2.1.332 session that compacted (its OTLP bodies as
 * the CLI sent them, and the transcript it wrote) goes through the receiver's pipeline and the
 * import's own function, in both orders, on the test database (PGlite, or PostgreSQL with
 * DATABASE_URL): the compaction's history_lost finding then lists the messages the compaction
 * dropped, with their text, read from the transcript; telemetry alone has no text, and a
 * workspace that does not capture content gets none either.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { evaluateNow } from '../../src/evaluator/now.ts';
import { msToNs } from '../../src/ingest/attrs.ts';
import { decodeLogs, decodeTraces } from '../../src/otlp/decode.ts';
import { loadWhatWasLost } from '../../src/reading/what-was-lost.ts';
import { importText } from '../../src/receiver/import.ts';
import { IngestPipeline } from '../../src/receiver/pipeline.ts';
import { ensureWorkspace } from '../../src/store/workspaces.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

const DIR = join(import.meta.dirname, '../fixtures/claude-code/2.1.332/compaction');
const SESSION = 'bfd551e1-e298-4ff1-a11b-770bcccb0151';
const WS = 'default';
const TRANSCRIPT = brotliDecompressSync(
  readFileSync(join(DIR, 'transcripts', `${SESSION}.jsonl.br`)),
).toString('utf8');

let store: TestStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

async function telemetry(pipeline: IngestPipeline): Promise<void> {
  for (const file of readdirSync(DIR).sort()) {
    const match = /^\d+-(traces|logs)\.json\.br$/.exec(file);
    if (!match) continue;
    const body = brotliDecompressSync(readFileSync(join(DIR, file))).toString('utf8');
    if (match[1] === 'traces') {
      const r = decodeTraces(body, 'json');
      if (!r.ok) throw new Error(r.reason);
      await pipeline.ingestSpans(WS, r.value.items);
    } else {
      const r = decodeLogs(body, 'json');
      if (!r.ok) throw new Error(r.reason);
      await pipeline.ingestLogs(WS, r.value.items);
    }
  }
}

async function transcript(pipeline: IngestPipeline): Promise<void> {
  const imported = await importText(
    pipeline,
    WS,
    { path: `${SESSION}.jsonl`, text: TRANSCRIPT },
    { historyBeforeNs: msToNs(Date.now()), cutoffNs: null },
  );
  if (!imported.ok) throw new Error(imported.error);
}

/** What was lost at each history_lost finding of the session. */
async function whatWasLost(s: TestStore) {
  await evaluateNow(s, WS, [SESSION]);
  const rows = await s.db
    .selectFrom('findings')
    .select('id')
    .where('detector', '=', 'history_lost')
    .where('conversation_id', '=', SESSION)
    .orderBy('id')
    .execute();
  const out = [];
  for (const row of rows) out.push((await loadWhatWasLost(s.db, WS, String(row.id)))!);
  return out;
}

/** The user prompts of the transcript before its first compaction: what it dropped. */
function promptsBeforeCompaction(): string[] {
  const prompts: string[] = [];
  for (const line of TRANSCRIPT.split('\n').filter(Boolean)) {
    const entry = JSON.parse(line) as {
      type?: string;
      subtype?: string;
      isSidechain?: boolean;
      message?: { content?: unknown };
    };
    if (entry.type === 'system' && entry.subtype === 'compact_boundary') break;
    if (entry.type === 'user' && typeof entry.message?.content === 'string' && !entry.isSidechain)
      prompts.push(entry.message.content);
  }
  return prompts;
}

describe('What was lost of a Claude Code session', () => {
  for (const order of ['telemetry, then the import', 'the import, then telemetry'] as const) {
    it(`shows the dropped messages' text from the transcript (${order})`, async () => {
      store = await createTestStore();
      await ensureWorkspace(store.db, WS);
      const pipeline = new IngestPipeline(store);
      if (order === 'telemetry, then the import') {
        await telemetry(pipeline);
        // telemetry alone carries no message text
        const [before] = await whatWasLost(store);
        expect(before!.dropped).toMatchObject({ contentCaptured: false, messages: [] });
        await transcript(pipeline);
      } else {
        await transcript(pipeline);
        await telemetry(pipeline);
      }
      const [first] = await whatWasLost(store);
      expect(first!.kind).toBe('compacted');
      expect(first!.producer).toBe('claude_code');
      expect(first!.dropped.contentCaptured).toBe(true);
      expect(first!.dropped.count).toBeGreaterThan(2);
      const texts = first!.dropped.messages.map((m) => m.text ?? '');
      // the session's own first prompt is among what the compaction dropped, word for word
      const prompts = promptsBeforeCompaction();
      expect(prompts.length).toBeGreaterThan(0);
      expect(texts).toContain(prompts[0]);
      // and the tool calls and results, named
      expect(first!.dropped.messages.some((m) => m.tool !== null)).toBe(true);
      // the compaction's summary replaced them
      expect(first!.replacement?.summary ?? '').not.toBe('');
    }, 60_000);
  }

  it('keeps no text where the workspace does not capture content', async () => {
    store = await createTestStore();
    await ensureWorkspace(store.db, WS);
    await store.db
      .updateTable('workspaces')
      .set({ capture_content: false })
      .where('id', '=', WS)
      .execute();
    const pipeline = new IngestPipeline(store);
    await telemetry(pipeline);
    await transcript(pipeline);
    const [first] = await whatWasLost(store);
    expect(first!.dropped).toMatchObject({ contentCaptured: false, count: null, messages: [] });
    const stored = await store.db
      .selectFrom('llm_calls')
      .select('input_messages')
      .where('conversation_id', '=', SESSION)
      .where('input_messages', 'is not', null)
      .execute();
    expect(stored).toEqual([]);
  }, 60_000);
});
