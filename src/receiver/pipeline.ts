/**
 * The ingest pipeline behind the OTLP routes: normalize decoded spans or log records, then
 * write everything in one transaction. Returns only after the commit, so a 200 means stored.
 */
import { normalizeLogs, normalizeSpans, type NormalizeContext } from '../ingest/index.ts';
import type { Normalized } from '../model/calls.ts';
import type { LogRecord, Span } from '../model/telemetry.ts';
import type { Store } from '../store/db.ts';
import {
  applyCallContent,
  applyStoredCallContent,
  insertCalls,
  insertCompactions,
  insertLogRecords,
  insertSpans,
  insertToolResults,
  markSideCalls,
} from '../store/ingest.ts';
import { markConversationsDirty } from '../store/conversations.ts';
import { joinLoggedToolResults } from '../store/logged-tool-parts.ts';
import { getWorkspaceSettings, type WorkspaceSettings } from '../store/workspaces.ts';

export interface IngestOutcome {
  stored: number;
  dropped: number;
}

const SETTINGS_TTL_MS = 5_000;

export class IngestPipeline {
  readonly #store: Store;
  readonly #settings = new Map<string, { value: WorkspaceSettings; at: number }>();

  readonly #settleMs: number;

  /** `splitEvidenceSettleMs`: see Config; 0 evaluates every conversation after the default quiet time. */
  constructor(store: Store, options: { splitEvidenceSettleMs?: number } = {}) {
    this.#store = store;
    this.#settleMs = options.splitEvidenceSettleMs ?? 0;
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
      await this.#store.db.transaction().execute(async (trx) => {
        await insertSpans(trx, workspaceId, batch.keep);
        const calls = await insertCalls(trx, batch.normalized.calls, this.#settleMs);
        // Content logged before its span arrived is applied now.
        const content = await applyStoredCallContent(trx, workspaceId, batch.normalized.calls);
        await insertToolResults(trx, batch.normalized.toolResults);
        const toolParts = await joinLoggedToolResults(trx, workspaceId, batch.normalized);
        const compactions = await insertCompactions(trx, batch.normalized.compactions);
        await markConversationsDirty(trx, workspaceId, [
          ...calls,
          ...content,
          ...toolParts,
          ...compactions,
        ]);
      });
    }
    return { stored: batch.keep.length, dropped: batch.dropped };
  }

  async ingestLogs(workspaceId: string, logs: readonly LogRecord[]): Promise<IngestOutcome> {
    const batch = normalizeLogs(logs, await this.#context(workspaceId));
    if (batch.keep.length > 0) {
      await this.#store.db.transaction().execute(async (trx) => {
        await insertLogRecords(trx, workspaceId, batch.keep);
        const calls = await insertCalls(trx, batch.normalized.calls);
        const sideCalls = await markSideCalls(trx, workspaceId, batch.sideCalls);
        const content = await applyCallContent(trx, workspaceId, batch.callContent);
        await insertToolResults(trx, batch.normalized.toolResults);
        const toolParts = await joinLoggedToolResults(trx, workspaceId, batch.normalized);
        const compactions = await insertCompactions(trx, batch.normalized.compactions);
        await markConversationsDirty(trx, workspaceId, [
          ...calls,
          ...sideCalls,
          ...content,
          ...toolParts,
          ...compactions,
        ]);
      });
    }
    return { stored: batch.keep.length, dropped: batch.dropped };
  }

  /** Stores already normalized data (transcript imports), idempotently. */
  async ingestNormalized(workspaceId: string, normalized: Normalized): Promise<void> {
    await this.#store.db.transaction().execute(async (trx) => {
      const calls = await insertCalls(trx, normalized.calls);
      await insertToolResults(trx, normalized.toolResults);
      const compactions = await insertCompactions(trx, normalized.compactions);
      await markConversationsDirty(trx, workspaceId, [...calls, ...compactions]);
    });
  }

  /** The normalization context of a workspace (capture setting, window overrides), cached briefly. */
  context(workspaceId: string): Promise<NormalizeContext> {
    return this.#context(workspaceId);
  }
}
