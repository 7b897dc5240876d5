/**
 * The Context rot alert's preview counts what the evaluator then writes: real producer data
 * (Claude Code 2.1.197 spans and logs, a real Claude Code transcript with five sub-agents)
 * stored through the receiver's pipeline, previewed with non-default knobs, the knobs saved,
 * the evaluator run; the findings table per detector and severity equals the preview's counts.
 * On PGlite, and on PostgreSQL with DATABASE_URL.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../../src/api/app.ts';
import { loadInputFile } from '../../../src/cli/input-file.ts';
import { defaultConfig } from '../../../src/config.ts';
import { previewContextRot, tally, type PreviewKnobs } from '../../../src/evaluator/preview.ts';
import { DEFAULT_THRESHOLDS, type DetectorId, type Severity } from '../../../src/model/findings.ts';
import { decodeLogs, decodeTraces } from '../../../src/otlp/decode.ts';
import { IngestPipeline } from '../../../src/receiver/pipeline.ts';
import { putAlertSettings } from '../../../src/store/alerts.ts';
import { ensureWorkspace } from '../../../src/store/workspaces.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';
import { testEvaluator } from './helpers.ts';

const REAL = join(import.meta.dirname, '../../fixtures/real');
const CLAUDE_CODE = join(REAL, 'claude-code-2.1.197');
const WS = 'default';

/** Knobs far from the defaults, so that every detector has something to say. */
const KNOBS: PreviewKnobs = {
  thresholds: {
    ...DEFAULT_THRESHOLDS,
    usageThreshold: 0.05,
    usageCritical: 0.15,
    toolShare: 0.2,
    toolPersistCalls: 1,
    dropRatio: 0.2,
    dropMinTokens: 500,
  },
  windowOverrides: [{ model: 'claude-sonnet-4-2*', window: 150_000 }],
};

let store: TestStore;

/** Every captured body of a Claude Code run, in the order the CLI sent them. */
async function ingestCapture(pipeline: IngestPipeline, dir: string): Promise<void> {
  for (const file of readdirSync(dir).sort()) {
    const encoding = file.endsWith('.pb') ? 'protobuf' : file.endsWith('.json') ? 'json' : null;
    if (encoding === null) continue;
    const body = readFileSync(join(dir, file));
    const input = encoding === 'json' ? body.toString('utf8') : new Uint8Array(body);
    if (file.includes('-traces.')) {
      const r = decodeTraces(input, encoding);
      if (!r.ok) throw new Error(`${file}: ${r.reason}`);
      await pipeline.ingestSpans(WS, r.value.items);
    } else {
      const r = decodeLogs(input, encoding);
      if (!r.ok) throw new Error(`${file}: ${r.reason}`);
      await pipeline.ingestLogs(WS, r.value.items);
    }
  }
}

/** The stored calls' latest start, as a time: the preview's `now`. */
async function latestCall(): Promise<Date> {
  const row = await store.db
    .selectFrom('llm_calls')
    .select((eb) => eb.fn.max('start_ns').as('last'))
    .executeTakeFirstOrThrow();
  return new Date(Number(BigInt(String(row.last)) / 1_000_000n) + 1000);
}

beforeAll(async () => {
  store = await createTestStore();
  await ensureWorkspace(store.db, WS);
  const pipeline = new IngestPipeline(store);
  for (const run of ['compaction', 'cut-beta', 'cut-plain', 'large-results', 'overflow']) {
    await ingestCapture(pipeline, join(CLAUDE_CODE, run));
  }
  const context = await pipeline.context(WS);
  for (const file of [
    join(REAL, 'claude-code_transcript_sidechains.jsonl'),
    join(REAL, 'otlp-json_openinference_openai.json'),
    join(REAL, 'tempo-export_genai_kagent.json'),
  ]) {
    const loaded = await loadInputFile(file, context, 'import');
    if (!loaded.ok) throw new Error(loaded.error);
    await pipeline.ingestNormalized(WS, loaded.file.normalized);
  }
}, 180_000);
afterAll(async () => {
  await store?.close();
});

async function storedCounts() {
  const rows = await store.db
    .selectFrom('findings')
    .select(['detector', 'severity'])
    .where('workspace_id', '=', WS)
    .execute();
  return tally(
    rows.map((r) => ({ detector: r.detector as DetectorId, severity: r.severity as Severity })),
  );
}

describe('the Context rot preview', () => {
  it('counts what the evaluator then writes with the same knobs', async () => {
    // The fixtures were captured on different days: a window that holds them all.
    const now = await latestCall();
    const days = 3650;
    const defaults = { thresholds: { ...DEFAULT_THRESHOLDS }, windowOverrides: [] };
    const preview = await previewContextRot(store.db, WS, KNOBS, {
      now,
      days,
      compareWith: defaults,
    });
    const calls = await store.db
      .selectFrom('llm_calls')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(preview.scanned.calls).toBe(Number(calls.n));
    expect(preview.truncated).toBe(false);
    // Not a vacuous comparison: every detector finds something, and the knobs matter.
    for (const count of preview.counts) expect(count.total, count.detector).toBeGreaterThan(0);
    expect(preview.compared!.total).toBeLessThan(preview.total);
    expect(preview.examples.length).toBeGreaterThan(0);
    expect(new Set(preview.examples.map((e) => e.runId)).size).toBe(preview.examples.length);

    await putAlertSettings(store.db, WS, {
      enabled: true,
      ...KNOBS,
      windowOverrides: [...KNOBS.windowOverrides],
    });
    const evaluator = testEvaluator(store);
    while ((await evaluator.runOnce()) > 0);
    await evaluator.stop();

    const stored = await storedCounts();
    expect(stored).toEqual({ counts: preview.counts, total: preview.total });
  }, 180_000);

  it('is bounded: past its limits it says truncated and counts what it read', async () => {
    const now = await latestCall();
    const preview = await previewContextRot(store.db, WS, KNOBS, {
      now,
      days: 3650,
      limits: { conversations: 2, calls: 5 },
    });
    expect(preview.scanned.calls).toBeLessThanOrEqual(5);
    expect(preview.scanned.conversations).toBeLessThanOrEqual(2);
    expect(preview.truncated).toBe(true);
  });

  it('reads only the window: calls older than `days` are not replayed', async () => {
    const now = await latestCall();
    const preview = await previewContextRot(store.db, WS, KNOBS, { now, days: 0 });
    expect(preview).toMatchObject({ scanned: { conversations: 0, calls: 0 }, total: 0 });
  });
});

describe('POST /api/alerts/context-rot/preview', () => {
  let built: App;
  beforeAll(async () => {
    built = await buildApp({ store, config: defaultConfig() });
    await built.app.ready();
  });
  afterAll(async () => {
    await built?.app.close();
  });

  it('answers the preview of the body PUT takes, and saves nothing', async () => {
    const before = (await built.app.inject({ method: 'GET', url: '/api/alerts/context-rot' })).json<
      Record<string, unknown>
    >();
    const res = await built.app.inject({
      method: 'POST',
      url: '/api/alerts/context-rot/preview',
      payload: { ...before, thresholds: { usageThreshold: 0.1 } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      days: 7,
      limits: { conversations: 200, calls: 20_000 },
      counts: expect.any(Array),
      compared: { counts: expect.any(Array) },
    });
    const after = (
      await built.app.inject({ method: 'GET', url: '/api/alerts/context-rot' })
    ).json();
    expect(after).toEqual(before);
  });

  it('refuses invalid knobs with the messages PUT gives', async () => {
    const body = { thresholds: { toolShare: 1.5, usageCritical: 0.01 } };
    const preview = await built.app.inject({
      method: 'POST',
      url: '/api/alerts/context-rot/preview',
      payload: body,
    });
    const put = await built.app.inject({
      method: 'PUT',
      url: '/api/alerts/context-rot',
      payload: body,
    });
    expect(preview.statusCode).toBe(400);
    expect(put.statusCode).toBe(400);
    expect(preview.json<{ errors: string[] }>().errors).toEqual(
      put.json<{ errors: string[] }>().errors,
    );
    expect(preview.json<{ errors: string[] }>().errors).toContain(
      'thresholds.toolShare must be a ratio between 0 and 1 (got 1.5)',
    );
  });
});
