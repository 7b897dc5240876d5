/**
 * Helpers for evaluator tests: the call and compaction builders (re-exported from
 * test/helpers/calls.ts), an ingest that writes them and marks their conversations dirty the
 * way the receiver does, and tiny detectors with predictable findings.
 */
import type { Detector } from '../../../src/detectors/types.ts';
import {
  startEvaluator,
  type Evaluator,
  type EvaluatorOptions,
} from '../../../src/evaluator/loop.ts';
import type { Compaction, LlmCall } from '../../../src/model/calls.ts';
import type { FindingDraft, Severity } from '../../../src/model/findings.ts';
import { markConversationsDirty, type IngestMark } from '../../../src/store/conversations.ts';
import type { Db, Store } from '../../../src/store/db.ts';
import { compactionRow, llmCallRow } from '../../../src/store/timeline.ts';

export { T0, call, compaction } from '../../helpers/calls.ts';

/** Writes calls and compactions and marks their conversations dirty, in one transaction. */
export async function ingest(
  db: Db,
  calls: readonly LlmCall[],
  compactions: readonly Compaction[] = [],
  workspaceId = 'default',
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (calls.length > 0) {
      await trx
        .insertInto('llm_calls')
        .values(calls.map(llmCallRow))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    if (compactions.length > 0) {
      await trx
        .insertInto('compactions')
        .values(compactions.map(compactionRow))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    const marks = new Map<string, IngestMark>();
    const add = (conversationId: string, ns: string, n: number) => {
      const seen = marks.get(conversationId);
      const starts = seen?.callStarts;
      marks.set(conversationId, {
        conversationId,
        fromNs: seen && BigInt(seen.fromNs) < BigInt(ns) ? seen.fromNs : ns,
        calls: (seen?.calls ?? 0) + n,
        // the range of the calls' starts, as ingest records it (the evaluator reads within it)
        ...(n === 0
          ? starts && { callStarts: starts }
          : {
              callStarts: {
                fromNs: starts && BigInt(starts.fromNs) < BigInt(ns) ? starts.fromNs : ns,
                toNs: starts && BigInt(starts.toNs) > BigInt(ns) ? starts.toNs : ns,
              },
            }),
      });
    };
    for (const c of calls) add(c.conversationId, c.startNs, 1);
    for (const c of compactions) add(c.conversationId, c.atNs, 0);
    await markConversationsDirty(trx, workspaceId, [...marks.values()]);
  });
}

export const silentLog = { info() {}, warn() {}, error() {} };

/** An evaluator that polls only when asked (`runOnce`), with no quiet period. */
export function testEvaluator(
  store: Pick<Store, 'db'>,
  options: Partial<EvaluatorOptions> = {},
): Evaluator {
  return startEvaluator({
    store,
    config: { evaluatorQuietMs: 0, evaluatorPollMs: 3_600_000 },
    log: silentLog,
    ...options,
  });
}

function draft(
  detector: FindingDraft['detector'],
  c: LlmCall,
  severity: Severity,
  details: Record<string, unknown>,
): FindingDraft {
  return {
    detector,
    anchor: `${c.traceId}:${c.spanId}`,
    severity,
    kind: null,
    conversationId: c.conversationId,
    streamKey: c.streamKey,
    runId: c.runId,
    traceId: c.traceId,
    spanId: c.spanId,
    model: c.responseModel,
    summary: `${detector} at ${c.spanId}`,
    details,
  };
}

/**
 * Test detector (id `history_lost`): fires on a call whose context fell by at least
 * `dropMinTokens` from the previous call; reset by a compaction. State: the previous usage.
 */
export const dropDetector: Detector<{ prev: number | null }> = {
  id: 'history_lost',
  initial: () => ({ prev: null }),
  step(state, item, context) {
    if (item.type === 'compaction') return { state: { prev: null }, findings: [] };
    const usage = item.call.contextTokens ?? 0;
    const findings =
      state.prev !== null && state.prev - usage >= context.thresholds.dropMinTokens
        ? [draft('history_lost', item.call, 'warning', { before: state.prev, after: usage })]
        : [];
    return { state: { prev: usage }, findings };
  },
};

/**
 * Test detector (id `context_too_full`): fires on every call at or above `usageThreshold` of
 * its window, critical at `usageCritical`. Stateless.
 */
export const fullDetector: Detector<null> = {
  id: 'context_too_full',
  initial: () => null,
  step(state, item, context) {
    if (item.type !== 'call') return { state, findings: [] };
    const { contextTokens, contextWindow } = item.call;
    if (contextTokens === null || contextWindow === null) return { state, findings: [] };
    const usage = contextTokens / contextWindow;
    if (usage < context.thresholds.usageThreshold) return { state, findings: [] };
    const severity = usage >= context.thresholds.usageCritical ? 'critical' : 'warning';
    return {
      state,
      findings: [draft('context_too_full', item.call, severity, { usage, window: contextWindow })],
    };
  },
};

/** Every finding of a workspace as `detector anchor severity`, sorted. */
export async function findingKeys(db: Db, workspaceId = 'default'): Promise<string[]> {
  const rows = await db
    .selectFrom('findings')
    .select(['detector', 'anchor', 'severity'])
    .where('workspace_id', '=', workspaceId)
    .execute();
  return rows.map((r) => `${r.detector} ${r.anchor} ${r.severity}`).sort();
}
