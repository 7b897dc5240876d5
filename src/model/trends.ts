/**
 * Trends over conversations (issue 37 §1): per-conversation figures (src/store/trends.ts reads
 * them from the rows the detectors read) summed into buckets of time split by a key, and the
 * rates before and after a moment. Pure: time is passed in.
 *
 * A conversation counts, with all of its calls, cost and findings, in the bucket of its FIRST
 * call, so a rate per conversation stays on one timeline: a long conversation is never half in
 * one day and half in the next, and the buckets of a range sum to the range.
 */
import { DETECTOR_IDS, type DetectorId } from './vocabulary.ts';
import { agentName as nameOfAgent, agentOf } from './producer-advice.ts';

/** What the conversations are split by. */
export const TREND_KEYS = ['model', 'agent', 'agentVersion', 'project'] as const;
export type TrendKey = (typeof TREND_KEYS)[number];

/** The bucket sizes: a UTC day, or an ISO week (Monday to Sunday, UTC). */
export const TREND_BUCKETS = ['day', 'week'] as const;
export type TrendBucket = (typeof TREND_BUCKETS)[number];

/** The most days a trend or one side of a before/after looks back (about a year). */
export const MAX_TREND_DAYS = 366;

/**
 * Fewer conversations than this on a side of a before/after and the rates are not compared:
 * at 20 conversations one finding moves a rate by 5 per 100, so a smaller side says more about
 * chance than about the change.
 */
export const MIN_CONVERSATIONS = 20;

export type FindingCounts = Record<DetectorId, number>;

/** One conversation's figures (src/store/trends.ts). */
export interface ConversationTrend {
  conversationId: string;
  /** Its first call's start, Unix ns (decimal). */
  firstNs: string;
  /** The model of its first main call that names one. */
  model: string | null;
  /** The producer of its first main call. */
  producer: string;
  /** The agent version its calls recorded (the highest), null when none. */
  agentVersion: string | null;
  project: string | null;
  calls: number;
  /** Its calls whose producer reported a cost. */
  costedCalls: number;
  /** The sum of the reported costs (US dollars); null when no call reported one. */
  costUsd: number | null;
  /** Context tokens of its calls at or above the usage threshold of their window. */
  tokensOverThreshold: number;
  findings: FindingCounts;
}

/** One bucket and key of a trend. */
export interface TrendItem {
  /** The bucket's first day, `YYYY-MM-DD` (UTC; a Monday for weeks). */
  bucket: string;
  /** The key's value; null when the conversations do not say (no project, not a coding agent). */
  key: string | null;
  conversations: number;
  calls: number;
  findings: FindingCounts;
  /** Reported cost (US dollars); null when no call of the bucket reported one. */
  costUsd: number | null;
  tokensOverThreshold: number;
}

const DAY_MS = 86_400_000;

const noFindings = (): FindingCounts =>
  Object.fromEntries(DETECTOR_IDS.map((id) => [id, 0])) as FindingCounts;

/** `YYYY-MM-DD` of a UTC day. */
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The first day (UTC) of the bucket that holds `ms`. */
export function bucketOf(ms: number, bucket: TrendBucket): string {
  const day = Math.floor(ms / DAY_MS) * DAY_MS;
  if (bucket === 'day') return dayOf(day);
  // 1970-01-01 was a Thursday: days since the epoch + 3, mod 7, is days since Monday
  const sinceMonday = (((Math.floor(ms / DAY_MS) + 3) % 7) + 7) % 7;
  return dayOf(day - sinceMonday * DAY_MS);
}

/** The start (ms) of the range of `days` UTC days that ends with today's. */
export function rangeStartMs(nowMs: number, days: number): number {
  return (Math.floor(nowMs / DAY_MS) - (days - 1)) * DAY_MS;
}

/** The agent's name for a producer ("Claude Code"); null for a library or SDK. */
function agentName(producer: string): string | null {
  const agent = agentOf(producer);
  return agent === undefined ? null : nameOfAgent(agent);
}

/** A conversation's value of the key. */
export function keyOf(row: ConversationTrend, by: TrendKey): string | null {
  switch (by) {
    case 'model':
      return row.model;
    case 'project':
      return row.project;
    case 'agent':
      return agentName(row.producer);
    case 'agentVersion': {
      const name = agentName(row.producer);
      if (name === null) return null;
      return row.agentVersion === null ? name : `${name} ${row.agentVersion}`;
    }
  }
}

/** Sums of conversations (and whether any reported a cost). */
interface Sums {
  conversations: number;
  calls: number;
  costedCalls: number;
  costUsd: number;
  tokensOverThreshold: number;
  findings: FindingCounts;
}

const emptySums = (): Sums => ({
  conversations: 0,
  calls: 0,
  costedCalls: 0,
  costUsd: 0,
  tokensOverThreshold: 0,
  findings: noFindings(),
});

function add(sums: Sums, row: ConversationTrend): void {
  sums.conversations += 1;
  sums.calls += row.calls;
  sums.costedCalls += row.costedCalls;
  sums.costUsd += row.costUsd ?? 0;
  sums.tokensOverThreshold += row.tokensOverThreshold;
  for (const id of DETECTOR_IDS) sums.findings[id] += row.findings[id];
}

const costOf = (sums: Sums) => (sums.costedCalls === 0 ? null : sums.costUsd);

/**
 * The trend: per bucket and key, the sums of the conversations whose first call is in the
 * bucket; by bucket, then key (null last). Buckets without conversations are left out.
 */
export function trendItems(
  rows: readonly ConversationTrend[],
  by: TrendKey,
  bucket: TrendBucket,
): TrendItem[] {
  const groups = new Map<string, { bucket: string; key: string | null; sums: Sums }>();
  for (const row of rows) {
    const b = bucketOf(Number(BigInt(row.firstNs) / 1_000_000n), bucket);
    const key = keyOf(row, by);
    const id = JSON.stringify([b, key]);
    let group = groups.get(id);
    if (!group) groups.set(id, (group = { bucket: b, key, sums: emptySums() }));
    add(group.sums, row);
  }
  return [...groups.values()]
    .sort(
      (a, b) =>
        a.bucket.localeCompare(b.bucket) ||
        (a.key === b.key ? 0 : a.key === null ? 1 : b.key === null ? -1 : a.key < b.key ? -1 : 1),
    )
    .map(({ bucket: b, key, sums }) => ({
      bucket: b,
      key,
      conversations: sums.conversations,
      calls: sums.calls,
      findings: sums.findings,
      costUsd: costOf(sums),
      tokensOverThreshold: sums.tokensOverThreshold,
    }));
}

/** Findings per 100 conversations, or null without conversations. */
export function per100(findings: number, conversations: number): number | null {
  return conversations === 0 ? null : (100 * findings) / conversations;
}

/** One side of a before/after. */
export interface Side {
  /** The side's range, ISO times: [from, to). */
  from: string;
  to: string;
  conversations: number;
  calls: number;
  findings: FindingCounts;
  /** Findings per 100 conversations, per detector; null without conversations. */
  per100: Record<DetectorId, number | null>;
  costUsd: number | null;
  tokensOverThreshold: number;
  /** At least {@link MIN_CONVERSATIONS} conversations. */
  enough: boolean;
}

function sideOf(sums: Sums, fromMs: number, toMs: number): Side {
  return {
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    conversations: sums.conversations,
    calls: sums.calls,
    findings: sums.findings,
    per100: Object.fromEntries(
      DETECTOR_IDS.map((id) => [id, per100(sums.findings[id], sums.conversations)]),
    ) as Record<DetectorId, number | null>,
    costUsd: costOf(sums),
    tokensOverThreshold: sums.tokensOverThreshold,
    enough: sums.conversations >= MIN_CONVERSATIONS,
  };
}

/**
 * The conversations begun in the `days` days before `atMs` against those begun in the `days`
 * days from it, with a sentence that says plainly whether there are enough to tell.
 */
export function beforeAfter(
  rows: readonly ConversationTrend[],
  atMs: number,
  days: number,
): { before: Side; after: Side; verdict: string } {
  const before = emptySums();
  const after = emptySums();
  const fromMs = atMs - days * DAY_MS;
  const toMs = atMs + days * DAY_MS;
  for (const row of rows) {
    const ms = Number(BigInt(row.firstNs) / 1_000_000n);
    if (ms >= fromMs && ms < atMs) add(before, row);
    else if (ms >= atMs && ms < toMs) add(after, row);
  }
  const b = sideOf(before, fromMs, atMs);
  const a = sideOf(after, atMs, toMs);
  const counts = `${b.conversations} conversation${b.conversations === 1 ? '' : 's'} before and ${a.conversations} after`;
  const verdict =
    b.enough && a.enough
      ? `Enough conversations to compare: ${counts}.`
      : `Too few conversations to tell: ${counts}; at least ${MIN_CONVERSATIONS} are needed on each side.`;
  return { before: b, after: a, verdict };
}
