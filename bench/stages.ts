/**
 * Where ingest time goes, per batch of ~500 realistic GenAI spans: decode (protobuf → spans),
 * normalize (spans → calls, tool results, compactions) and store (one transaction), measured
 * in the same run. `normalizeShare` answers "how much does normalization add to ingest".
 */
import { IngestPipeline } from '../src/receiver/pipeline.ts';
import { normalizeSpans } from '../src/ingest/index.ts';
import { decodeTraces } from '../src/otlp/decode.ts';
import type { Span } from '../src/model/telemetry.ts';
import { createTestStore } from '../test/helpers/store.ts';
import { agentRun, encodeBatch } from './genai-spans.ts';

const BATCHES = 20;

export async function benchStages() {
  const base = BigInt(Date.now()) * 1_000_000n;
  const bodies = Array.from({ length: BATCHES }, (_, k) =>
    encodeBatch(
      Array.from({ length: 23 }, (_, r) =>
        agentRun(k * 100 + r, 10, base + BigInt(k * 100 + r) * 1_000_000_000n),
      ).flat(),
    ),
  );
  const time = <T>(fn: () => T): [T, number] => {
    const started = performance.now();
    const value = fn();
    return [value, performance.now() - started];
  };
  const [decoded, decodeMs] = time(() =>
    bodies.map((body) => {
      const result = decodeTraces(body, 'protobuf');
      if (!result.ok) throw new Error(result.reason);
      return result.value.items;
    }),
  );
  const context = { workspaceId: 'default', captureContent: true, windowOverrides: [] };
  const [, normalizeMs] = time(() => decoded.map((spans) => normalizeSpans(spans, context)));
  const store = await createTestStore();
  const pipeline = new IngestPipeline(store);
  const started = performance.now();
  for (const spans of decoded as Span[][]) await pipeline.ingestSpans('default', spans);
  const pipelineMs = performance.now() - started; // normalize + store
  await store.close();
  const storeMs = Math.max(0, pipelineMs - normalizeMs);
  const per = (ms: number) => Number((ms / BATCHES).toFixed(1));
  return {
    backend: store.kind,
    spansPerBatch: decoded[0]?.length ?? 0,
    decodeMsPerBatch: per(decodeMs),
    normalizeMsPerBatch: per(normalizeMs),
    storeMsPerBatch: per(storeMs),
    normalizeShare: Number((normalizeMs / (decodeMs + normalizeMs + storeMs)).toFixed(3)),
  };
}
