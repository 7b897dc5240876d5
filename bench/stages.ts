/**
 * Where ingest time goes, per batch of 512 realistic GenAI spans, one batch at a time: decode
 * (protobuf → spans), normalize (spans → calls, tool results, compactions), and each step of
 * the store transaction as the receiver runs it (locks, spans, calls, logged content, tool
 * results, logged tool parts, compactions, the conversations' marks and projects, commit).
 * BENCH_CONTENT=0 sends no message content; BENCH_KEEP_RAW_SPANS=1 also writes the raw spans
 * (ROTSCOPE_KEEP_RAW_SPANS, the layout before issue 22). `normalizeShare` answers "how much does normalization add to ingest".
 */
import { callContentFromLogs, normalizeSpans } from '../src/ingest/index.ts';
import { LOG_CALL_PRODUCERS } from '../src/ingest/producers.ts';
import { decodeTraces } from '../src/otlp/decode.ts';
import { joinLoggedToolResults } from '../src/receiver/logged-tool-parts.ts';
import { ConversationNotes } from '../src/store/conversation-notes.ts';
import { noteConversations } from '../src/store/conversations.ts';
import {
  applyCallContent,
  insertSpans,
  insertToolResults,
  loadLogRecordsOfSpans,
  lockIngestKeys,
} from '../src/store/ingest.ts';
import { insertCalls, insertCompactions } from '../src/receiver/merge-writes.ts';
import { kyselyOn } from '../src/store/raw-connection.ts';
import { prepareStaging, type IngestTx } from '../src/store/staging.ts';
import { createTestStore } from '../test/helpers/store.ts';
import { ingestBodies } from './ingest.ts';

const BATCHES = 30;
const WARM = 5;

export async function benchStages() {
  const content = process.env.BENCH_CONTENT !== '0';
  const keepRawSpans = process.env.BENCH_KEEP_RAW_SPANS === '1';
  const bodies = ingestBodies((BATCHES + WARM) * 512, content);
  const store = await createTestStore();
  const connection = await store.connect();
  const tx: IngestTx = {
    db: kyselyOn(connection),
    copyIn: (text, data) => connection.copyIn(text, data),
    staging: await prepareStaging(connection),
    resent: false,
    conversations: new ConversationNotes(),
  };
  const ms: Record<string, number> = {};
  const time = async <T>(step: string, fn: () => Promise<T> | T): Promise<T> => {
    const started = performance.now();
    const value = await fn();
    ms[step] = (ms[step] ?? 0) + performance.now() - started;
    return value;
  };
  const precedence = { logProducers: LOG_CALL_PRODUCERS, settleMs: () => 0 };
  const context = { workspaceId: 'default', captureContent: true, windowOverrides: [] };
  let spans = 0;
  for (const [i, body] of bodies.entries()) {
    if (i === WARM) for (const step of Object.keys(ms)) ms[step] = 0;
    const decoded = await time('decode', () => {
      const result = decodeTraces(body, 'protobuf');
      if (!result.ok) throw new Error(result.reason);
      return result.value.items;
    });
    if (i >= WARM) spans += decoded.length;
    const batch = await time('normalize', () => normalizeSpans(decoded, context));
    const { calls, toolResults, compactions } = batch.normalized;
    await time('store: BEGIN', () => connection.query('BEGIN'));
    await time('store: advisory locks', () =>
      lockIngestKeys(
        tx.db,
        calls.map((call) => `trace:default:${call.traceId}`),
      ),
    );
    if (keepRawSpans)
      await time('store: raw spans (COPY)', () => insertSpans(tx, 'default', batch.keep));
    const marks = await time('store: calls (COPY + INSERT … SELECT)', () =>
      insertCalls(tx, calls, precedence),
    );
    const logged = await time('store: logged content lookup', () =>
      loadLogRecordsOfSpans(tx.db, 'default', calls),
    );
    if (logged.length > 0) await applyCallContent(tx.db, 'default', callContentFromLogs(logged));
    await time('store: tool results (COPY + INSERT … SELECT)', () =>
      insertToolResults(tx, toolResults),
    );
    await time('store: logged tool parts', () =>
      joinLoggedToolResults(tx.db, 'default', batch.normalized),
    );
    await time('store: compactions', () => insertCompactions(tx.db, compactions));
    await time('store: conversations (marks, projects)', () =>
      noteConversations(tx.db, 'default', marks, batch.normalized.projects),
    );
    await time('store: COMMIT', () => connection.query('COMMIT'));
  }
  connection.release();
  await store.close();
  const per = Object.fromEntries(
    Object.entries(ms).map(([step, total]) => [step, Number((total / BATCHES).toFixed(2))]),
  );
  const all = Object.values(ms).reduce((a, b) => a + b, 0);
  return {
    backend: store.kind,
    content,
    keepRawSpans,
    spansPerBatch: Math.round(spans / BATCHES),
    msPerBatch: per,
    totalMsPerBatch: Number((all / BATCHES).toFixed(1)),
    normalizeShare: Number(((ms.normalize ?? 0) / all).toFixed(3)),
  };
}
