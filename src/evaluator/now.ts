/**
 * Evaluates given conversations at once, settled or not: `rotscope import` evaluates what it
 * imported before it exits, so imported history has its findings (stored with their calls'
 * times, not pushed: see `historyBeforeNs`) whether or not a server runs, and before retention
 * may prune calls older than its window. Each conversation is claimed in its own transaction,
 * waiting for an evaluator that holds it; one evaluated meanwhile (no longer dirty) is skipped.
 */
import { DETECTORS } from '../detectors/index.ts';
import type { Detector } from '../detectors/types.ts';
import { claimConversations } from '../store/conversations.ts';
import type { Store } from '../store/db.ts';
import { evaluateConversation, type EvaluationResult } from './evaluate.ts';

export interface EvaluatedNow {
  results: EvaluationResult[];
  /** Conversations whose evaluation failed (they stay dirty for a server's evaluator). */
  failed: Array<{ conversationId: string; error: unknown }>;
}

export async function evaluateNow(
  store: Pick<Store, 'db'>,
  workspaceId: string,
  conversationIds: Iterable<string>,
  detectors: readonly Detector[] = DETECTORS,
): Promise<EvaluatedNow> {
  const out: EvaluatedNow = { results: [], failed: [] };
  for (const conversationId of [...new Set(conversationIds)].sort()) {
    try {
      for (;;) {
        const result = await store.db.transaction().execute(async (trx) => {
          const [claimed] = await claimConversations(trx, workspaceId, [conversationId]);
          return claimed ? evaluateConversation(trx, claimed, { detectors }) : undefined;
        });
        if (!result) break;
        out.results.push(result);
        if (result.settled) break;
      }
    } catch (error) {
      out.failed.push({ conversationId, error });
    }
  }
  return out;
}

/** What evaluating the imported conversations found. */
export interface ImportEvaluation {
  /** Findings anchored on calls before the import's start: stored with their call's time, not sent. */
  fromHistory: number;
  /** Findings on calls after the import's start (sent as live ones are). */
  live: number;
  /** Conversations whose evaluation failed: they stay dirty for a server's evaluator. */
  failed: Array<{ conversationId: string; message: string }>;
}

/** Evaluates the imported conversations now (settled or not), as the import does before it exits. */
export async function evaluateImported(
  store: Pick<Store, 'db'>,
  workspace: string,
  conversationIds: Iterable<string>,
): Promise<ImportEvaluation> {
  const evaluated = await evaluateNow(store, workspace, conversationIds);
  const fromHistory = evaluated.results.reduce((n, r) => n + r.findingsFromHistory, 0);
  const live = evaluated.results.reduce(
    (n, r) => n + r.findingsCreated + r.findingsEscalated - r.findingsFromHistory,
    0,
  );
  return {
    fromHistory,
    live,
    failed: evaluated.failed.map(({ conversationId, error }) => ({
      conversationId,
      message: (error as Error).message ?? String(error),
    })),
  };
}
