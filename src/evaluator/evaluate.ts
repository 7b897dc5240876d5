/**
 * Evaluates one claimed conversation inside the caller's transaction: decides where to start
 * (the stored position, or a rewind for late items), reads the new items page by page, runs
 * the detectors from the stored state, upserts findings with their outbox rows, and stores
 * the new position and state.
 */
import { FindingSet, type DetectorStates } from '../detectors/drive.ts';
import type { Detector } from '../detectors/types.ts';
import type { LlmCall } from '../model/calls.ts';
import type { DetectorId, FindingDraft, Severity } from '../model/findings.ts';
import { getAlertSettings, type AlertSettings } from '../store/alerts.ts';
import {
  deleteCheckpoints,
  rewindToCheckpoint,
  saveCheckpoints,
  saveEvaluation,
  type Checkpoint,
  type ClaimedConversation,
  type PendingSave,
} from '../store/conversations.ts';
import type { Db } from '../store/db.ts';
import { pageOfPrefetched, type PrefetchedPage, type TimelinePosition } from '../store/timeline.ts';
import type { UnjudgedCalls } from '../store/window-notices.ts';
import { feedPage, replayPages } from './replay.ts';
import { initialState, readState, type EvaluatorState } from './state.ts';
import { applyWindowOverrides } from './window-overrides.ts';
import { writeFindings, type PendingFindings } from './write-findings.ts';

/** Tuning of one evaluation; the defaults suit every deployment so far. */
export interface EvaluateOptions {
  /** The detectors to run, in order. */
  detectors: readonly Detector[];
  /** Calls read per query. Default 500. */
  pageSize?: number;
  /**
   * Calls evaluated per transaction; a conversation with more pending stays dirty and is
   * claimed again (keeps transactions short, lets other conversations in). Default 5000.
   */
  maxCallsPerTransaction?: number;
  /** A checkpoint of the state is saved every this many calls; 0 disables. Default 256. */
  checkpointEvery?: number;
  /**
   * The alert settings read so far in this transaction, by workspace: evaluations of one
   * batch read them once. Absent: read for each evaluation.
   */
  alertSettings?: Map<string, AlertSettings>;
  /**
   * The conversation's first page, read with the rest of its batch (`prefetchTimelinePages`
   * after `prefetchPosition(claimed)`); used when the evaluation starts where it was read
   * from, else ignored.
   */
  prefetched?: PrefetchedPage;
  /**
   * Stores the new position and state later, with the batch's others (`saveEvaluations`,
   * in the same transaction). Absent: stored before the evaluation returns.
   */
  saveLater?: (save: PendingSave) => void;
  /**
   * Writes the findings later, with the batch's others (`writeFindings`, in the same
   * transaction, before the saves); the result's finding counters are filled in then. Absent:
   * written before the evaluation returns.
   */
  findingsLater?: (pending: PendingFindings) => void;
  /**
   * A new token for the conversation's calls held in memory (src/store/call-memo.ts): stored with
   * the position when every call after the evaluation's start came from `prefetched` and the
   * evaluation saw the conversation's end in it (the save's `callsToken` then).
   */
  newCallsToken?: string;
}

/** What one evaluation did. */
export interface EvaluationResult {
  workspaceId: string;
  conversationId: string;
  /** Calls fed to the detectors. */
  calls: number;
  /** How evaluation started: from the stored position, or rewound for late items. */
  start: 'incremental' | 'checkpoint' | 'beginning';
  findingsCreated: number;
  findingsEscalated: number;
  findingsUpdated: number;
  /**
   * Findings created by judging again calls an earlier evaluation had judged (a window or a
   * call that arrived later): stored with `late`, sent like any other.
   */
  findingsLate: number;
  /**
   * Findings created or raised from imported history (anchored on calls before the
   * conversation's `historyBeforeNs`): stored with the call's time, not pushed to channels.
   */
  findingsFromHistory: number;
  deliveriesQueued: number;
  /**
   * Each finding this evaluation created or raised to critical, with its severity after the
   * write; committed with the evaluation (the Prometheus finding counters count these).
   */
  findingEvents: FindingEvent[];
  /** False when the alert is disabled: the position advanced, no findings were written. */
  enabled: boolean;
  /** False when calls remain for another transaction. */
  settled: boolean;
  /**
   * Where the new calls came from: the evaluator's memory of what this process's ingest
   * committed (src/store/call-memo.ts), or the database. Set by the evaluator loop.
   */
  callsFrom?: 'memory' | 'database';
  /**
   * Per model, the calls fed that carry token counts but have no window (no override, no
   * agent report, no catalog row): `context_too_full` could not judge them. Their first
   * evaluation opens the model's `window.unknown` notice (src/store/window-notices.ts).
   */
  unjudged: UnjudgedCalls[];
}

/** A finding an evaluation created, or raised to critical. */
export interface FindingEvent {
  detector: DetectorId;
  severity: Severity;
  event: 'created' | 'escalated';
}

export const DEFAULT_PAGE_SIZE = 500;

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
export const DEFAULT_MAX_CALLS_PER_TRANSACTION = 5000;
const DEFAULT_CHECKPOINT_EVERY = 256;

/** Whether the calls after `position` are all that is new (no late item at or before it). */
function onlyNewAfter(claimed: ClaimedConversation): boolean {
  const { position, pendingFromNs } = claimed;
  return !(
    position !== null &&
    pendingFromNs !== null &&
    BigInt(pendingFromNs) <= BigInt(position.ns)
  );
}

/**
 * Where an evaluation of `claimed` most likely starts reading (its stored position, or the
 * start): what to prefetch. A rewind to a checkpoint starts elsewhere and reads for itself.
 */
export function prefetchPosition(claimed: ClaimedConversation): TimelinePosition | null {
  return claimed.failures === 0 && onlyNewAfter(claimed) ? claimed.position : null;
}

/** Whether two positions are the same (both null: the start). */
export const samePosition = (a: TimelinePosition | null, b: TimelinePosition | null) =>
  a === null ? b === null : b !== null && a.ns === b.ns && a.spanId === b.spanId;

/**
 * Where to resume: the stored position and state when every pending item lies after the
 * position; else (a late item at or before it) the latest checkpoint before the earliest
 * pending item, or the beginning. `pending_from_ns` equal to the position's start counts as
 * late, because calls starting in the same nanosecond are ordered by span id. After a failed
 * evaluation, the stored state is not trusted: from the beginning.
 */
async function resumePoint(
  db: Db,
  claimed: ClaimedConversation,
  detectors: readonly Detector[],
): Promise<{
  state: EvaluatorState;
  position: TimelinePosition | null;
  start: EvaluationResult['start'];
}> {
  // After a failure, distrust the stored state (e.g. a detector whose state format changed).
  const stored = claimed.failures > 0 ? undefined : readState(claimed.state, detectors);
  const { position, pendingFromNs } = claimed;
  const late = !onlyNewAfter(claimed);
  if (stored && position && !late) return { state: stored, position, start: 'incremental' };
  if (stored && position && pendingFromNs !== null) {
    const checkpoint: Checkpoint | undefined = await rewindToCheckpoint(db, claimed, pendingFromNs);
    const state = checkpoint && readState(checkpoint.state, detectors);
    if (checkpoint && state) return { state, position: checkpoint.position, start: 'checkpoint' };
  }
  // Checkpoints are saved only as calls are fed: a conversation never fed a call has none.
  if (position !== null) await deleteCheckpoints(db, claimed);
  return { state: initialState(detectors), position: null, start: 'beginning' };
}

/**
 * Evaluates a conversation claimed with `claimSettledConversations`, in the same transaction
 * (`db`). Findings and their deliveries are written there too: they commit or roll back
 * with the position.
 */
export async function evaluateConversation(
  db: Db,
  claimed: ClaimedConversation,
  options: EvaluateOptions,
): Promise<EvaluationResult> {
  const { detectors } = options;
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const maxCalls = options.maxCallsPerTransaction ?? DEFAULT_MAX_CALLS_PER_TRANSACTION;
  const checkpointEvery = options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
  const key = { workspaceId: claimed.workspaceId, conversationId: claimed.conversationId };

  const settings =
    options.alertSettings?.get(claimed.workspaceId) ??
    (await getAlertSettings(db, claimed.workspaceId));
  options.alertSettings?.set(claimed.workspaceId, settings);
  const resume = await resumePoint(db, claimed, detectors);
  let { state, position } = resume;

  const findings = new FindingSet();
  /** When each call fed ended (Unix ns), by `traceId:spanId`: dates findings from history. */
  const history = claimed.historyBeforeNs === null ? null : new Map<string, string>();
  const checkpoints: Checkpoint[] = [];
  let { sinceCheckpoint } = state;
  /** The furthest call an earlier evaluation fed: calls at or before it are judged again. */
  const judgedNs = claimed.judgedNs ?? claimed.position?.ns ?? null;
  /**
   * The findings (`detector`, `anchor`) first reported while a call judged before was fed: late
   * if created now.
   */
  const late = new Set<string>();
  const keyOf = (draft: FindingDraft) => `${draft.detector}\u0000${draft.anchor}`;
  let reported = 0;
  /**
   * Notes the drafts the call just fed first reported (late when the call was judged before);
   * every `checkpointEvery` calls, keeps the state after the call as a checkpoint.
   */
  const afterCall = (call: LlmCall, states: DetectorStates) => {
    if (findings.size > reported) {
      const fresh = findings.values().slice(reported);
      reported = findings.size;
      if (judgedNs !== null && BigInt(call.startNs) <= BigInt(judgedNs))
        for (const draft of fresh) late.add(keyOf(draft));
    }
    sinceCheckpoint += 1;
    if (checkpointEvery <= 0 || sinceCheckpoint < checkpointEvery) return;
    sinceCheckpoint = 0;
    checkpoints.push({
      position: { ns: call.startNs, spanId: call.spanId },
      state: { v: 1, sinceCheckpoint, detectors: states } satisfies EvaluatorState,
    });
  };
  /** Calls `context_too_full` cannot judge for lack of a window, by model. */
  const unjudged = new Map<string, number>();
  const prefetched = options.prefetched;
  const replay = await replayPages(db, key, position, {
    pageSize,
    maxCalls,
    within: claimed.callStarts,
    firstPage: (want) =>
      prefetched && samePosition(prefetched.after, position)
        ? pageOfPrefetched(prefetched, want)
        : undefined,
    onPage: (page) => {
      if (history)
        for (const call of page.calls) history.set(`${call.traceId}:${call.spanId}`, call.endNs);
      for (const call of page.calls) {
        const model = windowlessModel(call, settings.windowOverrides);
        if (model !== null) unjudged.set(model, (unjudged.get(model) ?? 0) + 1);
      }
      const states = feedPage(state.detectors, page, settings, { detectors, findings, afterCall });
      state = { v: 1, sinceCheckpoint, detectors: states };
    },
  });
  position = replay.position;
  const calls = replay.calls;
  const settled = !replay.budgetSpent;
  // every call after the start came from the prefetch, and the end was seen in it
  const callsToken =
    options.newCallsToken !== undefined && settled && replay.pagesRead === 0
      ? options.newCallsToken
      : undefined;

  const result: EvaluationResult = {
    ...key,
    calls,
    start: resume.start,
    findingsCreated: 0,
    findingsEscalated: 0,
    findingsUpdated: 0,
    findingsLate: 0,
    findingsFromHistory: 0,
    deliveriesQueued: 0,
    findingEvents: [],
    enabled: settings.enabled,
    settled,
    // with the alert disabled nothing is reported, this neither
    unjudged: settings.enabled
      ? [...unjudged].map(([model, calls]) => ({
          ...key,
          model,
          calls,
          conversations: 1,
        }))
      : [],
  };
  if (settings.enabled) {
    // A fixed order of row locks (`upsertFindings` sorts a batch's the same way).
    const ordered = findings
      .values()
      .sort((a, b) => compareText(a.detector, b.detector) || compareText(a.anchor, b.anchor));
    const historyAt =
      history && claimed.historyBeforeNs !== null
        ? await historyTimes(db, claimed.workspaceId, ordered, history, claimed.historyBeforeNs)
        : new Map<FindingDraft, Date>();
    const lateDrafts = new Set(ordered.filter((draft) => late.has(keyOf(draft))));
    const pending: PendingFindings = {
      claimed,
      result,
      // a finding from imported history carries its call's time and is not pushed as new
      upserts: ordered.map((draft) => ({
        draft,
        createdAt: historyAt.get(draft),
        late: lateDrafts.has(draft),
      })),
      fromHistory: new Set(historyAt.keys()),
      late: lateDrafts,
    };
    if (options.findingsLater) options.findingsLater(pending);
    else await writeFindings(db, [pending]);
  }
  await saveCheckpoints(db, key, checkpoints);
  const save = {
    position,
    state,
    settled,
    unjudged: result.unjudged,
    ...(callsToken === undefined ? {} : { callsToken }),
  };
  if (options.saveLater) options.saveLater({ claimed, result: save });
  else await saveEvaluation(db, claimed, save);
  return result;
}

/**
 * The model of a call `context_too_full` cannot judge for lack of a window under the current
 * overrides (it carries token counts and names a model), else null.
 */
function windowlessModel(call: LlmCall, overrides: AlertSettings['windowOverrides']) {
  const model = call.responseModel ?? call.requestModel;
  if (model === null || call.contextTokens === null) return null;
  if (call.contextWindow !== null && call.windowSource !== 'override') return null;
  return applyWindowOverrides(call, overrides).contextWindow === null ? model : null;
}

/**
 * The drafts anchored on calls that ended before `beforeNs` (imported history), with the time
 * their call ended. A call this evaluation did not read (a run's fullest call from an earlier
 * one) is looked up, all in one query.
 */
async function historyTimes(
  db: Db,
  workspaceId: string,
  drafts: readonly FindingDraft[],
  ended: Map<string, string>,
  beforeNs: string,
): Promise<Map<FindingDraft, Date>> {
  const missing = drafts.filter((d) => !ended.has(`${d.traceId}:${d.spanId}`));
  if (missing.length > 0) {
    const rows = await db
      .selectFrom('llm_calls')
      .select(['trace_id', 'span_id', 'end_ns'])
      .where('workspace_id', '=', workspaceId)
      .where('trace_id', 'in', [...new Set(missing.map((d) => d.traceId))])
      .where('span_id', 'in', [...new Set(missing.map((d) => d.spanId))])
      .execute();
    for (const row of rows) ended.set(`${row.trace_id}:${row.span_id}`, String(row.end_ns));
  }
  const out = new Map<FindingDraft, Date>();
  for (const draft of drafts) {
    const endNs = ended.get(`${draft.traceId}:${draft.spanId}`);
    if (endNs === undefined || BigInt(endNs) >= BigInt(beforeNs)) continue;
    out.set(draft, new Date(Number(BigInt(endNs) / 1_000_000n)));
  }
  return out;
}
