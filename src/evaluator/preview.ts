/**
 * The Context rot alert's preview: what a set of knobs (thresholds and window overrides) would
 * have found over the workspace's stored calls of the last days, before anyone saves them.
 *
 * It runs what the evaluator runs, the same loop (./replay.ts): the calls of each conversation
 * read page by page, the window overrides applied, ordered by `buildTimeline` and fed to the
 * four detectors through `driveDetectors`, one `FindingSet`
 * keeping one finding per `(detector, anchor)` at its highest severity. So for calls the
 * evaluator sees in the same order, the preview's counts are the findings it writes with those
 * knobs. Differences: the preview starts each conversation at the window's start (an earlier
 * call is not anyone's previous call), it reports whether the alert is enabled or not, and a
 * late call the evaluator saw after its neighbours (a rewind) is here seen in its place.
 *
 * Bounded: at most `limits.conversations` conversations (the most recently active first) and
 * `limits.calls` calls in all; past either, the answer says `truncated` and counts what it read.
 * Nothing is written.
 */
import { FindingSet, type DetectorStates } from '../detectors/drive.ts';
import { DETECTORS } from '../detectors/registry.ts';
import {
  DETECTOR_IDS,
  SEVERITY_RANK,
  type DetectorId,
  type FindingDraft,
  type Severity,
} from '../model/findings.ts';
import type { Thresholds } from '../model/thresholds.ts';
import type { WindowOverride } from '../model/window-overrides.ts';
import type { Db } from '../store/db.ts';
import { listConversationsSince } from '../store/recent-conversations.ts';
import { loadTimelinePage, type TimelinePosition } from '../store/timeline.ts';
import { feedPage, replayPages } from './replay.ts';

/** The knobs a preview runs with: what `PUT /api/alerts/context-rot` would store. */
export interface PreviewKnobs {
  thresholds: Thresholds;
  windowOverrides: readonly WindowOverride[];
}

/** How much one preview may read. */
export interface PreviewLimits {
  /** Conversations replayed, the most recently active first. */
  conversations: number;
  /** Calls read in all. */
  calls: number;
}

/** The default bounds: 200 conversations, 20,000 calls (well under a second of detector work). */
export const PREVIEW_LIMITS: Readonly<PreviewLimits> = Object.freeze({
  conversations: 200,
  calls: 20_000,
});

/** Default window: the last 7 days. */
export const PREVIEW_DAYS = 7;

/** Findings of one detector, by severity. */
export interface PreviewCount {
  detector: DetectorId;
  info: number;
  warning: number;
  critical: number;
  total: number;
}

/** One finding the knobs would have raised, to open its run. */
export interface PreviewExample {
  detector: DetectorId;
  severity: Severity;
  kind: string | null;
  conversationId: string;
  runId: string;
  traceId: string;
  spanId: string;
  summary: string;
}

/** Counts of one set of knobs over the data read. */
export interface PreviewTally {
  /** One entry per detector, in DETECTOR_IDS order (zeros included). */
  counts: PreviewCount[];
  total: number;
}

export interface ContextRotPreview extends PreviewTally {
  /** The window: calls starting at or after `since` (ISO 8601), up to `until` (now). */
  since: string;
  until: string;
  days: number;
  /** What was read. */
  scanned: { conversations: number; calls: number };
  limits: PreviewLimits;
  /** True when the limits stopped the preview before the window's end. */
  truncated: boolean;
  /** A few findings, at most one per run, the most severe of each detector first. */
  examples: PreviewExample[];
  /** The same data under `compareWith` (the stored knobs), when given. */
  compared: PreviewTally | null;
}

export interface PreviewOptions {
  /** The end of the window. */
  now: Date;
  days?: number;
  limits?: PreviewLimits;
  /** Other knobs to count the same data with (the route passes the stored ones). */
  compareWith?: PreviewKnobs;
  /** Examples returned. Default 6. */
  examples?: number;
}

const PAGE_SIZE = 500;
const NS_PER_MS = 1_000_000n;

/** One replay: its knobs, its findings, and the running states of the current conversation. */
interface Replay {
  knobs: PreviewKnobs;
  findings: FindingSet;
  states: DetectorStates;
}

/** Counts findings per detector and severity. */
export function tally(
  findings: readonly Pick<FindingDraft, 'detector' | 'severity'>[],
): PreviewTally {
  const counts: PreviewCount[] = DETECTOR_IDS.map((detector) => ({
    detector,
    info: 0,
    warning: 0,
    critical: 0,
    total: 0,
  }));
  for (const f of findings) {
    const count = counts.find((c) => c.detector === f.detector);
    if (!count) continue;
    count[f.severity] += 1;
    count.total += 1;
  }
  return { counts, total: findings.length };
}

/** The most severe finding of each detector first, then others, at most one per run. */
function pickExamples(findings: readonly FindingDraft[], max: number): PreviewExample[] {
  const ranked = [...findings].sort(
    (a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity],
  );
  const firsts = DETECTOR_IDS.flatMap((id) => ranked.find((f) => f.detector === id) ?? []);
  const picked: FindingDraft[] = [];
  const runs = new Set<string>();
  for (const f of [...firsts, ...ranked]) {
    if (picked.length >= max) break;
    if (runs.has(f.runId)) continue;
    runs.add(f.runId);
    picked.push(f);
  }
  return picked.map((f) => ({
    detector: f.detector,
    severity: f.severity,
    kind: f.kind,
    conversationId: f.conversationId,
    runId: f.runId,
    traceId: f.traceId,
    spanId: f.spanId,
    summary: f.summary,
  }));
}

/**
 * What `knobs` would have found in the workspace's calls of the last `days` days (see the
 * module doc for how it matches the evaluator, and its bounds). Reads only.
 */
export async function previewContextRot(
  db: Db,
  workspaceId: string,
  knobs: PreviewKnobs,
  options: PreviewOptions,
): Promise<ContextRotPreview> {
  const days = options.days ?? PREVIEW_DAYS;
  const limits = options.limits ?? PREVIEW_LIMITS;
  const untilMs = options.now.getTime();
  const sinceMs = untilMs - days * 86_400_000;
  const sinceNs = BigInt(sinceMs) * NS_PER_MS;

  const replays: Replay[] = [knobs, ...(options.compareWith ? [options.compareWith] : [])].map(
    (k) => ({ knobs: k, findings: new FindingSet(), states: {} }),
  );
  const listed = await listConversationsSince(
    db,
    workspaceId,
    String(sinceNs),
    limits.conversations + 1,
  );
  let truncated = listed.length > limits.conversations;
  let calls = 0;
  let conversations = 0;
  for (const conversation of listed.slice(0, limits.conversations)) {
    if (calls >= limits.calls) {
      truncated = true;
      break;
    }
    conversations += 1;
    const key = { workspaceId, conversationId: conversation.conversationId };
    // Every call starting at or after the window's start (span ids are never empty).
    const start: TimelinePosition = { ns: String(sinceNs), spanId: '' };
    for (const replay of replays) replay.states = {};
    const read = await replayPages(db, key, start, {
      pageSize: PAGE_SIZE,
      maxCalls: limits.calls - calls,
      onPage: (page) => {
        for (const replay of replays)
          replay.states = feedPage(replay.states, page, replay.knobs, {
            detectors: DETECTORS,
            findings: replay.findings,
          });
      },
    });
    calls += read.calls;
    // The call budget ran out here: truncated if the conversation goes on.
    if (read.budgetSpent)
      truncated ||= (await loadTimelinePage(db, key, read.position, 1)).last !== null;
  }

  const [main, other] = replays;
  const found = main!.findings.values();
  return {
    ...tally(found),
    since: new Date(sinceMs).toISOString(),
    until: new Date(untilMs).toISOString(),
    days,
    scanned: { conversations, calls },
    limits: { ...limits },
    truncated,
    examples: pickExamples(found, options.examples ?? 6),
    compared: other ? tally(other.findings.values()) : null,
  };
}
