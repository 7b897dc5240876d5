/**
 * The ingest pipeline behind the OTLP routes: normalize decoded spans or log records, then
 * write everything in one transaction, shared with the requests that arrive meanwhile (group
 * commit, ./group-commit.ts). Returns only after the commit, so a 200 means stored.
 */
import type { CallMemo } from '../store/call-memo.ts';
import { guardDecisionOf, isGuardSpan } from '../ingest/guard-spans.ts';
import { insertGuardDecisions } from '../store/guard-decisions.ts';
import { isWindowSpan, reportedWindowOf } from '../ingest/agent-windows.ts';
import { copilotReportedWindows } from '../ingest/copilot.ts';
import { applyAgentWindows, recordAgentWindows } from '../store/agent-windows.ts';
import { CLAUDE_CODE_CALL_PRODUCERS } from '../model/window-catalog.ts';
import {
  callContentFromLogs,
  normalizeLogs,
  normalizeSpansSliced,
  type NormalizeContext,
} from '../ingest/index.ts';
import {
  IMPORT_CALL_PRODUCERS,
  isLoggedToolResultSource,
  LOGGED_TOOL_RESULT_PRODUCERS,
  LOGGED_TOOL_RESULT_SOURCES,
  LOG_CALL_PRODUCERS,
  SESSION_COUNTED_PRODUCERS,
  SPLIT_EVIDENCE_PRODUCERS,
} from '../ingest/producers.ts';
import type { LlmCall, Normalized } from '../model/calls.ts';
import type { LogRecord, Span } from '../model/telemetry.ts';
import type { Db, Store } from '../store/db.ts';
import type { IngestMark } from '../store/conversations.ts';
import {
  applyCallContent,
  insertLogRecords,
  insertSpans,
  insertToolResults,
  loadLogRecordsOfSpans,
  fillReportedCosts,
} from '../store/ingest.ts';
import {
  insertCalls,
  insertCompactions,
  markSideCalls,
  type CallPrecedence,
  type CallsOutcome,
} from './merge-writes.ts';
import { getWorkspaceSettings, type WorkspaceSettings } from '../store/workspaces.ts';
import { GroupCommitter, type GroupCommitOptions } from './group-commit.ts';
import { joinLoggedToolResults } from './logged-tool-parts.ts';
import {
  applyGeminiLogBatch,
  applyGeminiSpanBatch,
  geminiEvidenceKeys,
  isGeminiCall,
  joinPendingGeminiResponses,
} from './gemini.ts';
import { conversationsWithCallsOf } from '../store/conversations-of.ts';
import { applyQwenLogBatch, applyQwenSpanBatch, isQwenCall, qwenEvidenceKeys } from './qwen.ts';

export interface IngestOutcome {
  stored: number;
  dropped: number;
}

const SETTINGS_TTL_MS = 5_000;

export class IngestPipeline {
  readonly #store: Store;
  readonly #committer: GroupCommitter;
  readonly #settings = new Map<string, { value: WorkspaceSettings; at: number }>();
  /** Whether spans are also stored as they arrived (Config.keepRawSpans). */
  readonly #keepRawSpans: boolean;

  /** Calls from spans and logs of one request: the span's wins; split-evidence producers settle longer. */
  readonly #spanPrecedence: CallPrecedence;
  /** The same, without the longer settle (log batches and imports). */
  readonly #precedence: CallPrecedence = {
    logProducers: LOG_CALL_PRODUCERS,
    importProducers: IMPORT_CALL_PRODUCERS,
    partsResultSources: LOGGED_TOOL_RESULT_SOURCES,
    settleMs: () => 0,
  };

  /**
   * `splitEvidenceSettleMs`: see Config; 0 evaluates every conversation after the default quiet
   * time. `groupCommit`: how many transactions and requests per transaction (./group-commit.ts).
   */
  constructor(
    store: Store,
    options: {
      splitEvidenceSettleMs?: number;
      groupCommit?: GroupCommitOptions;
      keepRawSpans?: boolean;
      /** The evaluator's memory of new calls, when this process evaluates (src/store/call-memo.ts). */
      callMemo?: CallMemo | undefined;
    } = {},
  ) {
    this.#store = store;
    this.#keepRawSpans = options.keepRawSpans ?? false;
    this.#committer = new GroupCommitter(store, {
      ...options.groupCommit,
      callMemo: options.callMemo,
    });
    const settleMs = options.splitEvidenceSettleMs ?? 0;
    this.#spanPrecedence = {
      logProducers: LOG_CALL_PRODUCERS,
      importProducers: IMPORT_CALL_PRODUCERS,
      partsResultSources: LOGGED_TOOL_RESULT_SOURCES,
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

  /**
   * Stores a batch of spans; resolves after the commit. `signal` aborting before the batch's
   * writes start (its client went away) drops it: rejects with AbandonedError (./group-commit.ts).
   */
  async ingestSpans(
    workspaceId: string,
    spans: readonly Span[],
    signal?: AbortSignal,
  ): Promise<IngestOutcome> {
    // The tool-result guard's spans are rows of their own (src/ingest/guard-spans.ts).
    const guard = spans.flatMap((span) => guardDecisionOf(workspaceId, span) ?? []);
    if (guard.length > 0) spans = spans.filter((span) => !isGuardSpan(span));
    // Windows the agent reported apart from its calls (src/ingest/agent-windows.ts).
    const windows = spans.flatMap((span) =>
      isWindowSpan(span) ? (reportedWindowOf(workspaceId, span) ?? []) : [],
    );
    if (windows.length > 0) spans = spans.filter((span) => !isWindowSpan(span));
    // in slices that give the event loop back: a large batch holds up no other request
    const batch = await normalizeSpansSliced(spans, await this.#context(workspaceId));
    // GitHub Copilot CLI's window, for its calls sent apart from the span that reports it
    windows.push(...copilotReportedWindows(workspaceId, batch.normalized.calls));
    if (guard.length > 0)
      await this.#committer.submit({
        signal,
        keys: [],
        run: async (tx) => {
          await insertGuardDecisions(tx.db, guard);
        },
      });
    if (windows.length > 0)
      await this.#committer.submit({
        signal,
        keys: windows.map((w) => `conversation:${workspaceId}:${w.conversationId}`),
        run: async (tx) => {
          // the calls stored before the report are judged again (marked from the earliest)
          tx.conversations.note(workspaceId, await recordAgentWindows(tx.db, workspaceId, windows));
        },
      });
    if (batch.keep.length > 0) {
      await this.#committer.submit({
        signal,
        keys: evidenceKeys(workspaceId, batch.normalized),
        run: async (tx) => {
          const trx = tx.db;
          if (this.#keepRawSpans) await insertSpans(tx, workspaceId, batch.keep);
          const calls = await insertCalls(tx, batch.normalized.calls, this.#spanPrecedence);
          const reported = await withReportedWindows(tx.db, workspaceId, batch.normalized.calls);
          // Content logged before its span arrived is applied now.
          const logged = await loadLogRecordsOfSpans(trx, workspaceId, batch.normalized.calls);
          const content =
            logged.length === 0
              ? []
              : await applyCallContent(trx, workspaceId, callContentFromLogs(logged));
          await insertToolResults(tx, batch.normalized.toolResults);
          const toolParts = await joinLoggedToolResults(trx, workspaceId, batch.normalized);
          // Gemini CLI: what its logs stored earlier say about these calls (./gemini.ts)
          const gemini = await applyGeminiSpanBatch(
            trx,
            workspaceId,
            batch.normalized.calls,
            logged,
          );
          // Qwen Code: side calls its logs stored earlier show, tool sizes (./qwen.ts)
          const qwen = await applyQwenSpanBatch(trx, workspaceId, batch.normalized.calls, logged);
          const compactions = await insertCompactions(trx, batch.normalized.compactions);
          tx.conversations.note(
            workspaceId,
            [...calls, ...reported, ...content, ...toolParts, ...gemini, ...qwen, ...compactions],
            batch.normalized.projects,
          );
        },
      });
    }
    return {
      stored: batch.keep.length + guard.length + windows.length,
      dropped: batch.dropped,
    };
  }

  /** Stores a batch of log records; like {@link ingestSpans}. */
  async ingestLogs(
    workspaceId: string,
    logs: readonly LogRecord[],
    signal?: AbortSignal,
  ): Promise<IngestOutcome> {
    const batch = normalizeLogs(logs, await this.#context(workspaceId));
    if (batch.keep.length > 0) {
      await this.#committer.submit({
        signal,
        keys: [
          ...evidenceKeys(workspaceId, batch.normalized),
          ...batch.callContent.map((content) => `trace:${workspaceId}:${content.traceId}`),
          ...geminiEvidenceKeys(workspaceId, batch),
          ...qwenEvidenceKeys(workspaceId, batch),
        ],
        run: async (tx) => {
          const trx = tx.db;
          // Gemini CLI: streamed responses are stored joined to their request (./gemini.ts)
          await joinPendingGeminiResponses(trx, workspaceId, batch);
          await insertLogRecords(trx, workspaceId, batch.keep);
          const merged: CallsOutcome = { partsDropped: [], merged: 0 };
          const calls = await insertCalls(tx, batch.normalized.calls, this.#precedence, merged);
          const reported = await withReportedWindows(tx.db, workspaceId, batch.normalized.calls);
          const sideCalls = await markSideCalls(trx, workspaceId, batch.sideCalls, merged);
          await fillReportedCosts(trx, workspaceId, batch.normalized.calls);
          const content = await applyCallContent(trx, workspaceId, batch.callContent);
          await insertToolResults(tx, batch.normalized.toolResults);
          // calls whose parts were an import's estimates, or follow a call that turned out to be
          // a side call, are joined to the logged results too
          const toolParts = await joinLoggedToolResults(trx, workspaceId, {
            calls: [...batch.normalized.calls, ...merged.partsDropped],
            toolResults: batch.normalized.toolResults,
          });
          const gemini = await applyGeminiLogBatch(trx, workspaceId, batch);
          const qwen = await applyQwenLogBatch(trx, workspaceId, batch);
          const compactions = await insertCompactions(trx, batch.normalized.compactions);
          tx.conversations.note(workspaceId, [
            ...calls,
            ...reported,
            ...sideCalls,
            ...content,
            ...toolParts,
            ...gemini,
            ...qwen,
            ...compactions,
          ]);
        },
      });
    }
    return { stored: batch.keep.length, dropped: batch.dropped };
  }

  /**
   * Stores already normalized data (transcript imports), idempotently: a call or compaction
   * telemetry stored already is merged into its row (./merge-rules.ts). `historyBeforeNs`
   * (the import's start) marks what it changed as history: findings anchored on calls before it
   * are not pushed to channels; `holdEvaluationMs` holds the evaluator loops off the
   * conversations it changed that long (the import evaluates them itself: holdEvaluation).
   * Returns how many calls merged into rows another source stored.
   */
  async ingestNormalized(
    workspaceId: string,
    normalized: Normalized,
    options: { historyBeforeNs?: string; holdEvaluationMs?: number } = {},
  ): Promise<{ merged: number }> {
    const merged: CallsOutcome = { partsDropped: [], merged: 0 };
    await this.#committer.submit({
      // the conversations telemetry of the same sessions serializes on
      keys: [
        ...evidenceKeys(workspaceId, normalized),
        ...normalized.calls.map((call) => `conversation:${workspaceId}:${call.conversationId}`),
      ],
      run: async (tx) => {
        // a session file's calls of a session its telemetry stored count as merged
        const kept = await withoutSessionsTelemetryHas(tx.db, workspaceId, normalized);
        merged.merged = normalized.calls.length - kept.calls.length;
        const calls = await insertCalls(tx, kept.calls, this.#precedence, merged);
        calls.push(...(await withReportedWindows(tx.db, workspaceId, kept.calls)));
        await insertToolResults(tx, kept.toolResults);
        const compactions = await insertCompactions(tx.db, kept.compactions);
        const { historyBeforeNs } = options;
        const marks = [...calls, ...compactions];
        tx.conversations.note(
          workspaceId,
          historyBeforeNs === undefined ? marks : marks.map((m) => ({ ...m, historyBeforeNs })),
          kept.projects,
        );
        if (options.holdEvaluationMs !== undefined)
          tx.conversations.hold(
            workspaceId,
            marks.map((m) => m.conversationId),
            options.holdEvaluationMs,
          );
      },
    });
    return { merged: merged.merged };
  }

  /** The normalization context of a workspace (capture setting, window overrides), cached briefly. */
  context(workspaceId: string): Promise<NormalizeContext> {
    return this.#context(workspaceId);
  }
}

/**
 * The sessions of a session file whose calls share no id with the agent's telemetry (Gemini CLI's
 * chat files: `countedOnce: session` in its profile, src/model/agents/) that the telemetry stored
 * already, left out: the file would count each of their calls twice.
 */
async function withoutSessionsTelemetryHas(
  db: Db,
  workspaceId: string,
  normalized: Normalized,
): Promise<Normalized> {
  const seen = new Set<string>();
  for (const [fileProducer, telemetryProducer] of SESSION_COUNTED_PRODUCERS) {
    const fromFile = normalized.calls.filter((c) => c.producer === fileProducer);
    if (fromFile.length === 0) continue;
    const stored = await conversationsWithCallsOf(
      db,
      workspaceId,
      [...new Set(fromFile.map((c) => c.conversationId))],
      telemetryProducer,
    );
    for (const id of stored) seen.add(id);
  }
  if (seen.size === 0) return normalized;
  return {
    ...normalized,
    calls: normalized.calls.filter((c) => !seen.has(c.conversationId)),
    compactions: normalized.compactions.filter((c) => !seen.has(c.conversationId)),
    toolResults: normalized.toolResults.filter((r) => !seen.has(r.conversationId)),
  };
}

/**
 * Gives the windows Claude Code reported apart from its calls (its status line, through
 * rotscope's hooks; src/store/agent-windows.ts) to its calls just stored; the marks of the
 * conversations whose calls changed. Only Claude Code's calls look: one statement per batch of
 * theirs, none for other producers.
 */
async function withReportedWindows(
  db: Db,
  workspaceId: string,
  calls: readonly LlmCall[],
): Promise<IngestMark[]> {
  const reportable = calls.filter(
    (call) =>
      CLAUDE_CODE_CALL_PRODUCERS.includes(call.producer) && call.windowSource !== 'override',
  );
  if (reportable.length === 0) return [];
  let fromNs = reportable[0]!.startNs;
  for (const call of reportable) if (BigInt(call.startNs) < BigInt(fromNs)) fromNs = call.startNs;
  return applyAgentWindows(
    db,
    workspaceId,
    [...new Set(reportable.map((call) => call.conversationId))],
    fromNs,
  );
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
      .filter(
        (call) =>
          LOGGED_TOOL_RESULT_PRODUCERS.includes(call.producer) ||
          isGeminiCall(call) ||
          isQwenCall(call),
      )
      .map((call) => `conversation:${workspaceId}:${call.conversationId}`),
    // one compaction reported by several sources (log event, hook span, transcript) merges
    ...normalized.compactions.map(
      (compaction) => `conversation:${workspaceId}:${compaction.conversationId}`,
    ),
    ...normalized.toolResults
      .filter((result) => isLoggedToolResultSource(result.source))
      .map((result) => `conversation:${workspaceId}:${result.conversationId}`),
    // the project is a second write to the conversation's row: batches writing it take turns
    ...(normalized.projects ?? []).map(
      (project) => `conversation:${workspaceId}:${project.conversationId}`,
    ),
  ];
}
