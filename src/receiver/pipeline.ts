/**
 * The ingest pipeline behind the OTLP routes: normalize decoded spans or log records, then
 * write everything in one transaction, shared with the requests that arrive meanwhile (group
 * commit, ./group-commit.ts). Returns only after the commit, so a 200 means stored.
 */
import {
  callContentFromLogs,
  normalizeLogs,
  normalizeSpans,
  type NormalizeContext,
} from '../ingest/index.ts';
import {
  CLAUDE_CODE_PRODUCERS,
  LOG_CALL_PRODUCERS,
  SPLIT_EVIDENCE_PRODUCERS,
} from '../ingest/producers.ts';
import type { Normalized } from '../model/calls.ts';
import type { LogRecord, Span } from '../model/telemetry.ts';
import type { Store } from '../store/db.ts';
import {
  applyCallContent,
  insertCalls,
  insertCompactions,
  insertLogRecords,
  insertSpans,
  insertToolResults,
  loadLogRecordsOfSpans,
  markSideCalls,
  type CallPrecedence,
} from '../store/ingest.ts';
import { markConversationsDirty } from '../store/conversations.ts';
import { getWorkspaceSettings, type WorkspaceSettings } from '../store/workspaces.ts';
import { GroupCommitter, type GroupCommitOptions } from './group-commit.ts';
import { joinLoggedToolResults } from './logged-tool-parts.ts';

export interface IngestOutcome {
  stored: number;
  dropped: number;
}

const SETTINGS_TTL_MS = 5_000;

export class IngestPipeline {
  readonly #store: Store;
  readonly #committer: GroupCommitter;
  readonly #settings = new Map<string, { value: WorkspaceSettings; at: number }>();

  /** Calls from spans and logs of one request: the span's wins; split-evidence producers settle longer. */
  readonly #spanPrecedence: CallPrecedence;
  /** The same, without the longer settle (log batches and imports). */
  readonly #precedence: CallPrecedence = { logProducers: LOG_CALL_PRODUCERS, settleMs: () => 0 };

  /**
   * `splitEvidenceSettleMs`: see Config; 0 evaluates every conversation after the default quiet
   * time. `groupCommit`: how many transactions and requests per transaction (./group-commit.ts).
   */
  constructor(
    store: Store,
    options: { splitEvidenceSettleMs?: number; groupCommit?: GroupCommitOptions } = {},
  ) {
    this.#store = store;
    this.#committer = new GroupCommitter(store, options.groupCommit);
    const settleMs = options.splitEvidenceSettleMs ?? 0;
    this.#spanPrecedence = {
      logProducers: LOG_CALL_PRODUCERS,
      settleMs: (producer) => (SPLIT_EVIDENCE_PRODUCERS.has(producer) ? settleMs : 0),
    };
  }

  async #context(workspaceId: string): Promise<NormalizeContext> {
    const cached = this.#settings.get(workspaceId);
    let settings = cached && Date.now() - cached.at < SETTINGS_TTL_MS ? cached.value : undefined;
    if (!settings) {
      settings = await getWorkspaceSettings(this.#store.db, workspaceId);
      this.#settings.set(workspaceId, { value: settings, at: Date.now() });
    }
    return {
      workspaceId,
      captureContent: settings.captureContent,
      windowOverrides: settings.windowOverrides,
    };
  }

  async ingestSpans(workspaceId: string, spans: readonly Span[]): Promise<IngestOutcome> {
    const batch = normalizeSpans(spans, await this.#context(workspaceId));
    if (batch.keep.length > 0) {
      await this.#committer.submit({
        keys: evidenceKeys(workspaceId, batch.normalized),
        run: async (tx) => {
          const trx = tx.db;
          await insertSpans(tx, workspaceId, batch.keep);
          const calls = await insertCalls(tx, batch.normalized.calls, this.#spanPrecedence);
          // Content logged before its span arrived is applied now.
          const logged = await loadLogRecordsOfSpans(trx, workspaceId, batch.normalized.calls);
          const content =
            logged.length === 0
              ? []
              : await applyCallContent(trx, workspaceId, callContentFromLogs(logged));
          await insertToolResults(tx, batch.normalized.toolResults);
          const toolParts = await joinLoggedToolResults(trx, workspaceId, batch.normalized);
          const compactions = await insertCompactions(trx, batch.normalized.compactions);
          await markConversationsDirty(trx, workspaceId, [
            ...calls,
            ...content,
            ...toolParts,
            ...compactions,
          ]);
        },
      });
    }
    return { stored: batch.keep.length, dropped: batch.dropped };
  }

  async ingestLogs(workspaceId: string, logs: readonly LogRecord[]): Promise<IngestOutcome> {
    const batch = normalizeLogs(logs, await this.#context(workspaceId));
    if (batch.keep.length > 0) {
      await this.#committer.submit({
        keys: [
          ...evidenceKeys(workspaceId, batch.normalized),
          ...batch.callContent.map((content) => `trace:${workspaceId}:${content.traceId}`),
        ],
        run: async (tx) => {
          const trx = tx.db;
          await insertLogRecords(trx, workspaceId, batch.keep);
          const calls = await insertCalls(tx, batch.normalized.calls, this.#precedence);
          const sideCalls = await markSideCalls(trx, workspaceId, batch.sideCalls);
          const content = await applyCallContent(trx, workspaceId, batch.callContent);
          await insertToolResults(tx, batch.normalized.toolResults);
          const toolParts = await joinLoggedToolResults(trx, workspaceId, batch.normalized);
          const compactions = await insertCompactions(trx, batch.normalized.compactions);
          await markConversationsDirty(trx, workspaceId, [
            ...calls,
            ...sideCalls,
            ...content,
            ...toolParts,
            ...compactions,
          ]);
        },
      });
    }
    return { stored: batch.keep.length, dropped: batch.dropped };
  }

  /** Stores already normalized data (transcript imports), idempotently. */
  async ingestNormalized(workspaceId: string, normalized: Normalized): Promise<void> {
    await this.#committer.submit({
      keys: [],
      run: async (tx) => {
        const calls = await insertCalls(tx, normalized.calls, this.#precedence);
        await insertToolResults(tx, normalized.toolResults);
        const compactions = await insertCompactions(tx.db, normalized.compactions);
        await markConversationsDirty(tx.db, workspaceId, [...calls, ...compactions]);
      },
    });
  }

  /** The normalization context of a workspace (capture setting, window overrides), cached briefly. */
  context(workspaceId: string): Promise<NormalizeContext> {
    return this.#context(workspaceId);
  }
}

/**
 * The keys of the evidence a batch writes that another batch may complete: the traces of its
 * calls (content logged apart from its span) and the conversations of its Claude Code calls and
 * tool results (tool-result sizes logged apart from the calls they entered).
 */
function evidenceKeys(workspaceId: string, normalized: Normalized): string[] {
  return [
    ...normalized.calls.map((call) => `trace:${workspaceId}:${call.traceId}`),
    ...normalized.calls
      .filter((call) => CLAUDE_CODE_PRODUCERS.includes(call.producer))
      .map((call) => `conversation:${workspaceId}:${call.conversationId}`),
    ...normalized.toolResults
      .filter((result) => result.source.startsWith('claude_code'))
      .map((result) => `conversation:${workspaceId}:${result.conversationId}`),
  ];
}
