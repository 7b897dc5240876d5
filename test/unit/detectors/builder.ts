/**
 * Turns the compact call descriptions of test/fixtures/detectors/*.json into full timeline
 * items. Defaults: conversation `c1`, trace `t1`, run `r1`, main stream (`c1|main`), span `s<i>`
 * (i = the item's index), model `claude-sonnet-4`, window 200,000 from the catalog; items one
 * millisecond apart in the order listed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Compaction, FinishClass, InputParts, LlmCall } from '../../../src/model/calls.ts';
import type { DetectorId, Thresholds } from '../../../src/model/findings.ts';
import type { TimelineItem } from '../../../src/model/calls.ts';

export interface CallDesc {
  span?: string;
  trace?: string;
  run?: string;
  /** Sub-agent id; the stream key is then `c1|<agent>` (else `c1|main`, as src/ingest makes them). */
  agent?: string;
  side?: string;
  ctx?: number | null;
  window?: number | null;
  model?: string;
  finish?: string | null;
  finishClass?: FinishClass | null;
  out?: number | null;
  maxOut?: number | null;
  toolCall?: boolean;
  toolName?: string | null;
  parts?: Partial<InputParts> | null;
  compacted?: boolean;
}

export interface CompactionDesc {
  /** Sub-agent id; omitted means the main stream. */
  agent?: string;
  /** An explicit stream key (overrides `agent`). */
  stream?: string;
  evidence?: Compaction['evidence'];
  kind?: Compaction['kind'];
  trigger?: Compaction['trigger'];
  before?: number | null;
  after?: number | null;
}

export type ItemDesc = CallDesc | { compaction: CompactionDesc };

export interface FixtureCase {
  name: string;
  thresholds?: Partial<Thresholds>;
  calls: ItemDesc[];
  /** The final findings (last version per anchor), in order, matched as partial objects. */
  expected: Record<string, unknown>[];
  /** How many drafts the detector emitted in total (repeats of an anchor included). */
  emissions?: number;
}

const CONVERSATION = 'c1';
const BASE_NS = 1_767_225_600_000_000_000n;

function streamKeyOf(agent: string | undefined): string {
  return `${CONVERSATION}|${agent ?? 'main'}`;
}

function buildCall(d: CallDesc, i: number): LlmCall {
  const startNs = BASE_NS + BigInt(i) * 1_000_000n;
  const parts: InputParts | null =
    d.parts === undefined || d.parts === null
      ? null
      : {
          unit: d.parts.unit ?? 'tokens',
          total: d.parts.total ?? null,
          system: d.parts.system ?? null,
          tools: d.parts.tools ?? {},
          source: d.parts.source ?? 'messages',
        };
  const ctx = d.ctx ?? null;
  return {
    workspaceId: 'w1',
    traceId: d.trace ?? 't1',
    spanId: d.span ?? `s${i}`,
    parentSpanId: null,
    conversationId: CONVERSATION,
    conversationSynthetic: false,
    agentId: d.agent ?? null,
    streamKey: streamKeyOf(d.agent),
    runId: d.run ?? 'r1',
    sideCall: d.side ?? null,
    requestId: null,
    startNs: String(startNs),
    endNs: String(startNs + 500_000n),
    producer: 'test',
    provider: 'anthropic',
    requestModel: d.model ?? 'claude-sonnet-4',
    responseModel: d.model ?? 'claude-sonnet-4',
    inputTokensRaw: ctx,
    cacheReadTokens: null,
    cacheWriteTokens: null,
    outputTokens: d.out ?? null,
    contextTokens: ctx,
    usageRule: ctx === null ? null : 'no_cache',
    contextWindow: d.window === undefined ? 200_000 : d.window,
    windowSource: d.window === null ? null : 'catalog',
    agentVersion: null,
    finishReasonRaw: d.finish ?? null,
    finishClass: d.finishClass ?? null,
    outputToolCall: d.toolCall ?? false,
    outputToolName: d.toolName ?? null,
    maxOutputTokens: d.maxOut ?? null,
    parts,
    compacted: d.compacted ?? false,
  };
}

function buildCompaction(d: CompactionDesc, i: number): Compaction {
  return {
    workspaceId: 'w1',
    conversationId: CONVERSATION,
    streamKey: d.stream ?? streamKeyOf(d.agent),
    runId: 'r1',
    traceId: null,
    spanId: null,
    atNs: String(BASE_NS + BigInt(i) * 1_000_000n),
    evidence: d.evidence ?? 'transcript_boundary',
    kind: d.kind ?? 'summarize',
    trigger: d.trigger === undefined ? 'auto' : d.trigger,
    tokensBefore: d.before ?? null,
    tokensAfter: d.after ?? null,
    messagesKept: null,
    summarySize: null,
    summary: null,
    sourceKey: `k${i}`,
  };
}

/** Full timeline items from compact descriptions, in the order given. */
export function buildItems(descs: readonly ItemDesc[]): TimelineItem[] {
  return descs.map((d, i) =>
    'compaction' in d
      ? { type: 'compaction', compaction: buildCompaction(d.compaction, i) }
      : { type: 'call', call: buildCall(d, i) },
  );
}

const FIXTURES = join(import.meta.dirname, '../../fixtures/detectors');

/** The fixture cases of one detector: test/fixtures/detectors/<detector id>.json. */
export function loadCases(detector: DetectorId): FixtureCase[] {
  return JSON.parse(readFileSync(join(FIXTURES, `${detector}.json`), 'utf8')) as FixtureCase[];
}

/** Every fixture file's cases, by detector id (file name). */
export function loadAllCases(): Array<{ detector: DetectorId; cases: FixtureCase[] }> {
  return readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const detector = f.replace(/\.json$/, '') as DetectorId;
      return { detector, cases: loadCases(detector) };
    });
}

/** Recursively freezes a value (objects and arrays), returning it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
