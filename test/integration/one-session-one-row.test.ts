/**
 * One Claude Code session, counted once, whatever sent it (issue 19 §4, DESIGN §5): the real
 * CLI's telemetry (spans and log events), the compaction spans of `rotscope hook` and the
 * transcript (`rotscope import`'s reading) of one session (test/fixtures/real/
 * claude-code-one-session/), stored through the receiver's pipeline into a real store (PGlite,
 * or PostgreSQL with DATABASE_URL) in a few orders, with the evaluator run after each source
 * as a server's would (every order, some twice: the property in
 * test/unit/receiver/merge-any-order.test.ts). Every order of the same sources ends in the same calls,
 * compactions and findings (anchors included); every source alone gives as many calls per
 * request, compactions and findings; deliveries are those of the first source that brought
 * the calls live (telemetry), none when the import came first (history is never pushed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadInputFile, withSubagentFiles } from '../../src/cli/input-file.ts';
import { evaluateNow } from '../../src/evaluator/now.ts';
import { msToNs } from '../../src/ingest/attrs.ts';
import { decodeLogs, decodeTraces } from '../../src/otlp/decode.ts';
import { IngestPipeline } from '../../src/receiver/pipeline.ts';
import { openStore } from '../../src/store/db.ts';
import { loadMigrations, migrate } from '../../src/store/migrate.ts';
import type { LlmCall } from '../../src/model/calls.ts';
import { llmCallRow } from '../../src/store/timeline.ts';
import { ensureWorkspace } from '../../src/store/workspaces.ts';
import { call } from '../helpers/calls.ts';
import {
  loadOneSession,
  ONE_SESSION_VERSIONS,
  writeTranscript,
  type CapturedBody,
  type OneSession,
} from '../helpers/one-session.ts';
import { createTestDatabase, createTestStore, type TestStore } from '../helpers/store.ts';

const tmp = mkdtempSync(join(tmpdir(), 'rotscope-one-session-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * A source a user may run, evaluated after it: telemetry as it arrived (T), all its spans then
 * all its logs (TSL) or the reverse (TLS); its logs alone (Tlogs) and its spans alone (Tspans),
 * evaluated in between: Claude Code's logs are complete for the detectors, so a server that
 * waited its split-evidence settle for spans held back longer judges them alone (the reverse,
 * spans judged before their logs, is what that settle exists to prevent: a `compact` side call
 * or a compaction only the logs name); the hooks (H); an import (I).
 */
type Step = 'T' | 'TSL' | 'TLS' | 'Tlogs' | 'Tspans' | 'H' | 'I';

async function send(pipeline: IngestPipeline, ws: string, body: CapturedBody): Promise<void> {
  if (body.signal === 'traces') {
    const decoded = decodeTraces(body.text, 'json');
    if (!decoded.ok) throw new Error(decoded.reason);
    await pipeline.ingestSpans(ws, decoded.value.items);
  } else {
    const decoded = decodeLogs(body.text, 'json');
    if (!decoded.ok) throw new Error(decoded.reason);
    await pipeline.ingestLogs(ws, decoded.value.items);
  }
}

type Row = Record<string, unknown>;

interface Outcome {
  calls: Row[];
  compactions: Row[];
  findings: Row[];
  deliveries: Row[];
  /** Findings the evaluations said came from history (not pushed). */
  fromHistory: number;
  /** The detectors of the findings there were before the first import (null: no import). */
  beforeImport: string[] | null;
}

const strip = (row: Row, keys: readonly string[]): Row =>
  Object.fromEntries(Object.entries(row).filter(([k]) => !keys.includes(k)));

/**
 * Runs the steps into a workspace of its own, each source as the product receives it (the
 * receiver's pipeline; the import as `rotscope import` reads a file, with its start as the
 * history mark), then evaluates what became dirty, as a server's evaluator does between them.
 */
async function run(store: TestStore, ws: string, session: OneSession, steps: readonly Step[]) {
  await ensureWorkspace(store.db, ws);
  const channel = await store.db
    .insertInto('channels')
    .values({ workspace_id: ws, type: 'webhook', name: 'hook', config: '{"url":"http://x"}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await store.db
    .insertInto('alert_channels')
    .values({ workspace_id: ws, channel_id: channel.id, min_severity: 'info' })
    .execute();
  const pipeline = new IngestPipeline(store);
  const transcript = writeTranscript(session, mkdtempSync(join(tmp, 'home-')));
  let fromHistory = 0;
  let beforeImport: string[] | null = null;
  for (const step of steps) {
    if (step === 'I' && beforeImport === null) {
      const found = await store.db
        .selectFrom('findings')
        .select('detector')
        .where('workspace_id', '=', ws)
        .execute();
      beforeImport = found.map((f) => f.detector).sort();
    }
    if (step === 'I') {
      const historyBeforeNs = msToNs(Date.now());
      const context = await pipeline.context(ws);
      for (const file of await withSubagentFiles([transcript])) {
        const loaded = await loadInputFile(file, context, 'import');
        if (!loaded.ok) throw new Error(loaded.error);
        await pipeline.ingestNormalized(ws, loaded.file.normalized, { historyBeforeNs });
      }
    } else {
      const spans = session.telemetry.filter((b) => b.signal === 'traces');
      const logs = session.telemetry.filter((b) => b.signal === 'logs');
      const bodies = {
        T: session.telemetry,
        TSL: [...spans, ...logs],
        TLS: [...logs, ...spans],
        Tlogs: logs,
        Tspans: spans,
        H: session.hook,
      }[step];
      for (const body of bodies) await send(pipeline, ws, body);
    }
    const dirty = await store.db
      .selectFrom('conversations')
      .select('id')
      .where('workspace_id', '=', ws)
      .where('dirty', '=', true)
      .execute();
    const evaluated = await evaluateNow(
      store,
      ws,
      dirty.map((d) => d.id),
    );
    expect(evaluated.failed).toEqual([]);
    fromHistory += evaluated.results.reduce((n, r) => n + r.findingsFromHistory, 0);
  }
  const calls = await store.db
    .selectFrom('llm_calls')
    .selectAll()
    .where('workspace_id', '=', ws)
    .orderBy('start_ns')
    .orderBy('span_id')
    .execute();
  const compactions = await store.db
    .selectFrom('compactions')
    .selectAll()
    .where('workspace_id', '=', ws)
    .orderBy('at_ns')
    .execute();
  const findings = await store.db
    .selectFrom('findings')
    .selectAll()
    .where('workspace_id', '=', ws)
    .orderBy('detector')
    .orderBy('anchor')
    .execute();
  const deliveries = await store.db
    .selectFrom('deliveries as d')
    .innerJoin('findings as f', 'f.id', 'd.finding_id')
    .select(['f.detector', 'f.anchor', 'd.event'])
    .where('d.workspace_id', '=', ws)
    .orderBy('f.detector')
    .orderBy('f.anchor')
    .orderBy('d.event')
    .execute();
  return {
    calls: calls.map((r) => strip(r, ['workspace_id', 'created_at'])),
    compactions: compactions.map((r) => strip(r, ['workspace_id', 'id', 'created_at'])),
    findings: findings.map((r) => strip(r, ['workspace_id', 'id', 'updated_at'])),
    deliveries,
    fromHistory,
    beforeImport,
  } satisfies Outcome;
}

/**
 * The sequences run per version, by the set of sources they use: a few orders end to end,
 * through the real store, the logged-results join and the evaluator. That any order, split
 * into any batches, each sent once or more, ends in the same rows is a property of the merge
 * rules (test/unit/receiver/merge-any-order.test.ts), which tries hundreds of arrangements:
 * sources repeated (T→T, I→I, H→H, T→I→T→I), spans and logs apart (TSL, TLS, Tlogs→Tspans),
 * the hooks before or after the other two (HT, HI).
 */
const SEQUENCES: Record<string, Step[][]> = {
  T: [['T'], ['TLS']],
  I: [['I']],
  H: [['H']],
  TI: [
    ['T', 'I'],
    // imported again after telemetry: no finding made or sent twice
    ['I', 'T', 'I'],
    ['Tlogs', 'I', 'Tspans'],
  ],
  HTI: [
    ['H', 'I', 'T'],
    ['T', 'I', 'H'],
  ],
};

const EVIDENCE: Record<string, string> = {
  T: 'claude_code_event',
  H: 'span',
  I: 'transcript_boundary',
};

/** A finding as compared across sources and orders: what it says, not when it was stored. */
/**
 * What a finding says, whatever the order: not when it was made, nor whether it was `late` (a
 * source that brings what a detector needs after the call was judged makes it late, by design).
 */
const said = (f: Row) => strip(f, ['created_at', 'late']);

describe.each(ONE_SESSION_VERSIONS)('one Claude Code %s session from every source', (version) => {
  const session = loadOneSession(version);
  let store: TestStore;
  const outcomes = new Map<string, Outcome>();
  let n = 0;
  beforeAll(async () => {
    store = await createTestStore();
  });
  afterAll(async () => {
    await store?.close();
  });

  for (const [sources, sequences] of Object.entries(SEQUENCES)) {
    it(
      `${sources}: ${sequences.map((s) => s.join('→')).join(', ')}: one row per call and compaction, the same in every order`,
      { timeout: 600_000 },
      async () => {
        const results: Outcome[] = [];
        for (const steps of sequences) {
          const outcome = await run(store, `ws-${version}-${n++}`, session, steps);
          results.push(outcome);
          outcomes.set(steps.join(''), outcome);
        }
        const [first] = results;
        for (const [i, outcome] of results.entries()) {
          const name = sequences[i]!.join('→');
          // one row per request, per compaction
          const ids = outcome.calls.map((c) => c.request_id);
          expect(new Set(ids).size, name).toBe(ids.length);
          expect(outcome.compactions, name).toHaveLength(2);
          for (const c of outcome.compactions) {
            const evidences = (c.sources as Array<{ evidence: string }>).map((s) => s.evidence);
            expect(evidences.sort(), name).toEqual([...sources].map((s) => EVIDENCE[s]!).sort());
          }
          // the same rows whatever the order or repetition
          expect(outcome.calls, name).toEqual(first!.calls);
          expect(outcome.compactions, name).toEqual(first!.compactions);
          expect(outcome.findings.map(said), name).toEqual(first!.findings.map(said));
          // findings are never made twice: one per detector here
          expect(new Set(outcome.findings.map((f) => f.detector)).size, name).toBe(
            outcome.findings.length,
          );
          // deliveries: one per finding made before the first import, none from history
          const sent = outcome.deliveries.map((d) => `${d.detector}/${d.event}`).sort();
          expect(sent, name).toEqual(
            (outcome.beforeImport ?? outcome.findings.map((f) => f.detector as string)).map(
              (d) => `${d}/created`,
            ),
          );
          if (sequences[i]!.find((s) => s !== 'H') === 'I') {
            // history carries its call's time
            for (const f of outcome.findings) {
              const call = outcome.calls.find(
                (c) => c.trace_id === f.trace_id && c.span_id === f.span_id,
              );
              if (call === undefined) continue;
              const ended = Number(BigInt(call.end_ns as string) / 1_000_000n);
              expect(
                Math.abs(new Date(f.created_at as string).getTime() - ended),
                name,
              ).toBeLessThan(5_000);
            }
          }
        }
      },
    );
  }

  it('each source alone and every combination: as many calls per request, compactions and findings', () => {
    const t = outcomes.get('T')!;
    const i = outcomes.get('I')!;
    const h = outcomes.get('H')!;
    const ti = outcomes.get('TI')!;
    const byRequest = (o: Outcome) =>
      new Map(o.calls.map((c) => [c.request_id as string, c] as const));
    // the transcript holds every main call telemetry has (not the compaction's summarising calls)
    const fromT = byRequest(t);
    for (const [request, call] of byRequest(i)) {
      const span = fromT.get(request);
      expect(span, request).toBeDefined();
      // the same request, the same tokens, whichever source counted them
      expect(call.context_tokens, request).toBe(span!.context_tokens);
      expect(call.conversation_id).toBe(span!.conversation_id);
      expect(call.stream_key).toBe(span!.stream_key);
    }
    // telemetry and import together: telemetry's rows (ids, times, tokens), nothing added
    expect(
      ti.calls.map((c) => [c.request_id, c.trace_id, c.span_id, c.start_ns, c.context_tokens]),
    ).toEqual(
      t.calls.map((c) => [c.request_id, c.trace_id, c.span_id, c.start_ns, c.context_tokens]),
    );
    // what only the transcript knew: the cut tool call's name
    const cut = ti.calls.find((c) => c.finish_reason_raw === 'max_tokens')!;
    expect(cut).toMatchObject({ output_tool_call: true, output_tool_name: 'Write' });
    expect(t.calls.find((c) => c.finish_reason_raw === 'max_tokens')!.output_tool_name).toBeNull();
    // as many compactions and findings as one source alone, anchored on telemetry's calls
    expect(h.compactions).toHaveLength(t.compactions.length);
    expect(i.compactions).toHaveLength(t.compactions.length);
    expect(h.findings).toEqual([]);
    const kinds = (o: Outcome) => o.findings.map((f) => `${f.detector}/${f.kind ?? ''}`);
    expect(kinds(i)).toEqual(kinds(t));
    expect(kinds(ti)).toEqual(kinds(t));
    expect(ti.findings.map((f) => f.anchor)).toEqual(t.findings.map((f) => f.anchor));
    // the import adds the cut tool's name: output_cut_off is critical, as from the transcript alone
    const severity = (o: Outcome, detector: string) =>
      o.findings.find((f) => f.detector === detector)!.severity;
    expect(severity(ti, 'output_cut_off')).toBe(severity(i, 'output_cut_off'));
    expect(severity(i, 'output_cut_off')).toBe('critical');
    // ... but was sent once, when telemetry found it: the import's raise is history
    expect(ti.deliveries).toEqual(t.deliveries);
    expect(ti.fromHistory).toBe(1);
  });
});

describe('migration 0070 on a store that counted an imported session twice', () => {
  it('keeps the telemetry row with what only the transcript knew, and drops the copy', async () => {
    const url = await createTestDatabase();
    const store = await openStore({ databaseUrl: url, dataDir: 'memory://' });
    try {
      await migrate(
        store.db,
        loadMigrations().filter((m) => m.version < 70),
      );
      const base = { conversationId: 'session', streamKey: 'session|main', requestId: 'req_1' };
      // a call's row as this schema has it: before migration 0110's input_messages (and 0150's cost_usd)
      const rowBefore0110 = (c: LlmCall) => {
        const { input_messages: _, cost_usd: _cost, ...row } = llmCallRow(c);
        return row;
      };
      await store.db
        .insertInto('llm_calls')
        .values([
          rowBefore0110(
            call('session', 1, {
              ...base,
              producer: 'claude_code',
              spanId: 'span-row',
              outputToolCall: null,
              finishReasonRaw: 'max_tokens',
              finishClass: 'output_limit',
            }),
          ),
          rowBefore0110(
            call('session', 1.2, {
              ...base,
              producer: 'claude_code_transcript',
              spanId: 'line-row',
              outputToolCall: true,
              outputToolName: 'Write',
              finishReasonRaw: 'max_tokens',
              finishClass: 'output_limit',
            }),
          ),
          rowBefore0110(
            call('session', 5, {
              ...base,
              requestId: 'req_2',
              producer: 'claude_code_transcript',
              spanId: 'only-line',
            }),
          ),
        ])
        .execute();
      await migrate(store.db);
      const rows = await store.db
        .selectFrom('llm_calls')
        .select(['span_id', 'producer', 'output_tool_call', 'output_tool_name'])
        .orderBy('start_ns')
        .execute();
      expect(rows).toEqual([
        {
          span_id: 'span-row',
          producer: 'claude_code',
          output_tool_call: true,
          output_tool_name: 'Write',
        },
        {
          span_id: 'only-line',
          producer: 'claude_code_transcript',
          output_tool_call: false,
          output_tool_name: null,
        },
      ]);
    } finally {
      await store.close();
    }
  });
});
