/**
 * Read queries behind the conversations, runs and coverage API: what was normalized, per
 * workspace. Rows are mapped to the model here; nothing snake_case leaves src/store.
 */
import { guardSummaries, type GuardSummary } from './guard-decisions.ts';
import { projectsOf } from './conversations.ts';
import {
  AGENT_NAMES,
  agentOf,
  coverageHint,
  type CoverageDetector,
} from '../model/producer-advice.ts';
import { sql } from 'kysely';
import type { Compaction, LlmCall } from '../model/calls.ts';
import {
  CLAUDE_CODE_CALL_PRODUCERS,
  CLAUDE_CODE_VERSIONS,
  claudeCodeVersionStatus,
  compareVersions,
  type ClaudeCodeVersionStatus,
} from '../model/window-catalog.ts';
import { countOf } from './columns.ts';
import type { Db } from './db.ts';
import { toCompaction, toLlmCall } from './timeline.ts';

/** One stream of a conversation: the main thread or a sub-agent, with its side calls counted. */
export interface StreamSummary {
  key: string;
  kind: 'main' | 'sub-agent';
  /** The sub-agent's id; null on the main thread. */
  agentId: string | null;
  calls: number;
  /** Calls made beside the stream's own thread (compaction, title generation, ...). */
  sideCalls: number;
}

/** One run (a trace, or a Claude Code session) of a conversation. */
export interface RunSummary {
  id: string;
  calls: number;
  firstCallAt: string | null;
}

/** Most runs listed per conversation (the rest are counted in `runCount`). */
export const MAX_RUNS_LISTED = 50;

export interface ConversationSummary {
  id: string;
  calls: number;
  firstCallAt: string | null;
  lastCallAt: string | null;
  maxContextTokens: number | null;
  /** The fullest call's usage as a share of its window (0..1+); null when no call knows both. */
  fullestShare: number | null;
  models: string[];
  /**
   * The coding agent that ran the conversation, with its version when it sent one ("Claude
   * Code 2.1.332"); null when the calls come from a library or SDK (their producers say).
   */
  agent: string | null;
  /**
   * Where it runs: the working directory or repository its producer last reported (a Claude
   * Code transcript or rotscope's hook, a Codex session file); null when none did.
   */
  project: string | null;
  /** The producer conventions of its calls (`claude_code`, `langfuse`, ...). */
  producers: string[];
  /** What Claude Code's tool-result guard did in it; null when nothing. */
  guard: GuardSummary | null;
  streams: number;
  findings: number;
  /** Each stream (main thread and sub-agents), main first. */
  streamList: StreamSummary[];
  /** Calls outside the main loop (side calls), over every stream. */
  sideCalls: number;
  runCount: number;
  /** The first {@link MAX_RUNS_LISTED} runs by start. */
  runs: RunSummary[];
}

const nsToIso = (ns: string | null): string | null =>
  ns === null ? null : new Date(Number(BigInt(ns) / 1_000_000n)).toISOString();

/**
 * Where a page of conversations ends: the last item's latest call start (nanoseconds since the
 * epoch, decimal) and its id.
 */
export type ConversationKey = readonly [lastCallNs: string, conversationId: string];

/**
 * Conversations, most recently active first, `limit` per page; `after` continues after the
 * last item of a previous page (its `next`).
 */
export async function listConversations(
  db: Db,
  workspaceId: string,
  options: {
    limit: number;
    after?: ConversationKey | undefined;
    /** Only conversations whose id, one of whose run or trace ids, or whose project contains this text. */
    search?: string | undefined;
  },
): Promise<{ items: ConversationSummary[]; next: ConversationKey | null }> {
  let query = db
    .selectFrom('llm_calls')
    .where('workspace_id', '=', workspaceId)
    .groupBy('conversation_id')
    .select((eb) => [
      'conversation_id',
      eb.fn.countAll<string>().as('calls'),
      eb.fn.min('start_ns').as('first_ns'),
      eb.fn.max('start_ns').as('last_ns'),
      eb.fn.max('context_tokens').as('max_context'),
      sql<number | null>`max(context_tokens::float8 / nullif(context_window, 0)::float8)`.as(
        'fullest_share',
      ),
      sql<string>`count(*) FILTER (WHERE side_call IS NOT NULL)`.as('side_calls'),
      sql<string>`count(DISTINCT run_id)`.as('run_count'),
      sql<
        string[]
      >`array_agg(DISTINCT coalesce(response_model, request_model)) FILTER (WHERE coalesce(response_model, request_model) IS NOT NULL)`.as(
        'models',
      ),
      sql<string>`count(DISTINCT stream_key)`.as('streams'),
      sql<string[]>`array_agg(DISTINCT producer ORDER BY producer)`.as('producers'),
      sql<string | null>`max(agent_version)`.as('agent_version'),
      sql<string>`(SELECT count(*) FROM findings f WHERE f.workspace_id = ${workspaceId} AND f.conversation_id = llm_calls.conversation_id)`.as(
        'findings',
      ),
    ])
    .orderBy('last_ns', 'desc')
    .orderBy('conversation_id', 'desc')
    .limit(options.limit + 1);
  if (options.after !== undefined) {
    const [lastNs, id] = options.after;
    query = query.having((eb) =>
      eb.or([
        eb(eb.fn.max('start_ns'), '<', lastNs),
        eb.and([eb(eb.fn.max('start_ns'), '=', lastNs), eb('conversation_id', '<', id)]),
      ]),
    );
  }
  if (options.search !== undefined && options.search !== '') {
    const needle = options.search.toLowerCase();
    query = query.having(
      // one parenthesised condition: kysely ANDs it with the cursor's, and a bare OR would let
      // a project match past the cursor (the same row on every page)
      sql<boolean>`(bool_or(strpos(lower(conversation_id), ${needle}) > 0 OR strpos(lower(run_id), ${needle}) > 0 OR strpos(lower(trace_id), ${needle}) > 0) OR conversation_id IN (SELECT c.id FROM conversations c WHERE c.workspace_id = ${workspaceId} AND strpos(lower(c.project), ${needle}) > 0))`,
    );
  }
  const rows = await query.execute();
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  const { streams, runs } = await streamsAndRuns(
    db,
    workspaceId,
    page.map((row) => row.conversation_id),
  );
  const guard = await guardSummaries(
    db,
    workspaceId,
    page.map((row) => row.conversation_id),
  );
  const projects = await projectsOf(
    db,
    workspaceId,
    page.map((row) => row.conversation_id),
  );
  return {
    items: page.map((row) => ({
      id: row.conversation_id,
      calls: Number(row.calls),
      firstCallAt: nsToIso(row.first_ns === null ? null : String(row.first_ns)),
      lastCallAt: nsToIso(row.last_ns === null ? null : String(row.last_ns)),
      maxContextTokens: countOf(row.max_context),
      fullestShare: row.fullest_share === null ? null : Number(row.fullest_share),
      models: row.models ?? [],
      agent: agentLabel(row.producers ?? [], row.agent_version),
      project: projects.get(row.conversation_id) ?? null,
      producers: row.producers ?? [],
      guard: guard.get(row.conversation_id) ?? null,
      streams: Number(row.streams),
      findings: Number(row.findings),
      streamList: streams.get(row.conversation_id) ?? [],
      sideCalls: Number(row.side_calls),
      runCount: Number(row.run_count),
      runs: runs.get(row.conversation_id) ?? [],
    })),
    next: rows.length > options.limit && last ? [String(last.last_ns), last.conversation_id] : null,
  };
}

/** "Claude Code 2.1.332" for the first coding agent among `producers`, else null. */
function agentLabel(producers: readonly string[], version: string | null): string | null {
  const agent = producers.map(agentOf).find((found) => found !== undefined);
  if (agent === undefined) return null;
  return version ? `${AGENT_NAMES[agent]} ${version}` : AGENT_NAMES[agent];
}

/** The streams and the first runs of each of these conversations. */
async function streamsAndRuns(
  db: Db,
  workspaceId: string,
  conversationIds: string[],
): Promise<{ streams: Map<string, StreamSummary[]>; runs: Map<string, RunSummary[]> }> {
  const streams = new Map<string, StreamSummary[]>();
  const runs = new Map<string, RunSummary[]>();
  if (conversationIds.length === 0) return { streams, runs };
  const streamRows = await db
    .selectFrom('llm_calls')
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', 'in', conversationIds)
    .groupBy(['conversation_id', 'stream_key'])
    .select([
      'conversation_id',
      'stream_key',
      sql<string | null>`max(agent_id)`.as('agent_id'),
      sql<string>`count(*)`.as('calls'),
      sql<string>`count(*) FILTER (WHERE side_call IS NOT NULL)`.as('side_calls'),
      sql<string>`min(start_ns)`.as('first_ns'),
    ])
    .orderBy('conversation_id')
    .orderBy(sql`max(agent_id) IS NOT NULL`)
    .orderBy(sql`min(start_ns)`)
    .orderBy('stream_key')
    .execute();
  for (const row of streamRows) {
    const list = streams.get(row.conversation_id) ?? [];
    list.push({
      key: row.stream_key,
      kind: row.agent_id === null ? 'main' : 'sub-agent',
      agentId: row.agent_id,
      calls: Number(row.calls),
      sideCalls: Number(row.side_calls),
    });
    streams.set(row.conversation_id, list);
  }
  const runRows = await db
    .selectFrom('llm_calls')
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', 'in', conversationIds)
    .groupBy(['conversation_id', 'run_id'])
    .select([
      'conversation_id',
      'run_id',
      sql<string>`count(*)`.as('calls'),
      sql<string>`min(start_ns)`.as('first_ns'),
    ])
    .orderBy('conversation_id')
    .orderBy(sql`min(start_ns)`)
    .orderBy('run_id')
    .execute();
  for (const row of runRows) {
    const list = runs.get(row.conversation_id) ?? [];
    if (list.length < MAX_RUNS_LISTED)
      list.push({
        id: row.run_id,
        calls: Number(row.calls),
        firstCallAt: nsToIso(row.first_ns === null ? null : String(row.first_ns)),
      });
    runs.set(row.conversation_id, list);
  }
  return { streams, runs };
}

export interface CallsAndCompactions {
  calls: LlmCall[];
  compactions: Compaction[];
}

/** Which calls and compactions to read: a conversation's, or a run's (its run id or trace id). */
type Scope = { conversationId: string } | { runId: string };

async function callsAndCompactions(
  db: Db,
  workspaceId: string,
  scope: Scope,
  limit: number,
): Promise<CallsAndCompactions | undefined> {
  const calls = await db
    .selectFrom('llm_calls')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where((eb) =>
      'conversationId' in scope
        ? eb('conversation_id', '=', scope.conversationId)
        : eb.or([eb('run_id', '=', scope.runId), eb('trace_id', '=', scope.runId)]),
    )
    .orderBy('start_ns')
    .orderBy('span_id')
    .limit(limit)
    .execute();
  const compactions = await db
    .selectFrom('compactions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where((eb) =>
      'conversationId' in scope
        ? eb('conversation_id', '=', scope.conversationId)
        : eb.or([eb('run_id', '=', scope.runId), eb('trace_id', '=', scope.runId)]),
    )
    .orderBy('at_ns')
    .execute();
  if (calls.length === 0 && compactions.length === 0) return undefined;
  return { calls: calls.map(toLlmCall), compactions: compactions.map(toCompaction) };
}

/** Every call and compaction of a conversation, in start order (capped at `limit` calls). */
export function getConversation(
  db: Db,
  workspaceId: string,
  conversationId: string,
  limit = 5_000,
): Promise<CallsAndCompactions | undefined> {
  return callsAndCompactions(db, workspaceId, { conversationId }, limit);
}

/** Every call and compaction of a run (a trace id, or a Claude Code session), capped at 5,000 calls. */
export function getRun(
  db: Db,
  workspaceId: string,
  runId: string,
): Promise<CallsAndCompactions | undefined> {
  return callsAndCompactions(db, workspaceId, { runId }, 5_000);
}

export interface DetectorCoverage {
  /** Calls that carry what the detector needs. */
  covered: number;
  /** covered / calls (0 when there are no calls). */
  share: number;
  needs: string;
  /** What to send so the detector sees the calls it misses (the "quiet or blind?" answer). */
  hint: string;
}

type CoveredDetector = CoverageDetector;

/** What each detector needs, and what to send when it is blind. */
const DETECTOR_NEEDS: Record<CoveredDetector, { needs: string; hint: string }> = {
  context_too_full: {
    needs: 'token counts and a known context window',
    hint: 'send gen_ai.usage.input_tokens (and the cache read/write token counts) on every chat span, with gen_ai.request.model; for a model rotscope does not know, add a window override on the alert page',
  },
  tool_takeover: {
    needs: 'sizes of tool results in the input (message content or tool spans)',
    hint: 'turn on content capture (gen_ai.input.messages) or use @rotscope/sdk recordContextSizes, so the size of each tool result in the input is known without its text',
  },
  history_lost: {
    needs:
      'token counts on consecutive calls; compaction markers tell compacted from lost (see compactions)',
    hint: 'send gen_ai.usage.input_tokens and gen_ai.conversation.id on every chat span; mark compactions (@rotscope/sdk markCompaction, or rotscope claude-code install) so a compaction is not reported as lost history',
  },
  output_cut_off: {
    needs: 'finish reasons',
    hint: 'send gen_ai.response.finish_reasons on every chat span',
  },
};

/**
 * One producer's calls (`llm_calls.producer`, e.g. `langfuse`, `openinference`) and what each
 * detector sees of them; `blind` lists the detectors none of its calls feed (Langfuse sends no
 * finish reason: `output_cut_off`).
 */
export interface ProducerCoverage {
  producer: string;
  /** The coding agent behind the producer id (Claude Code, Codex CLI, Gemini CLI), if one. */
  agent: string | null;
  calls: number;
  covered: Record<CoveredDetector, number>;
  blind: CoveredDetector[];
  /** For each detector that misses some of its calls: what to turn on, in that producer's words. */
  hints: Partial<Record<CoveredDetector, string>>;
}

/** One model of the recent calls with one window it was given (a model may have several). */
export interface ModelWindowCoverage {
  /** The response model, else the request model; null when the calls name none. */
  model: string | null;
  /** null: no rule knows the model, so `context_too_full` does not judge these calls. */
  window: number | null;
  /** `LlmCall.windowSource` (override, model_id, inferred, catalog, assumed); null with no window. */
  windowSource: string | null;
  calls: number;
  lastCallAt: string | null;
}

/** One Claude Code version the recent calls came from (`service.version`, a transcript's `version`). */
export interface ClaudeCodeVersionCoverage {
  version: string;
  status: ClaudeCodeVersionStatus;
  calls: number;
  conversations: number;
  lastCallAt: string | null;
}

export interface ClaudeCodeCoverage {
  oldestSupported: string;
  newestVerified: string;
  verified: string[];
  /** Newest first. */
  versions: ClaudeCodeVersionCoverage[];
  /** Set when a version seen is newer than the newest verified (or older than the oldest supported). */
  warning: string | null;
}

export interface Coverage {
  calls: number;
  conversations: number;
  compactions: number;
  detectors: Record<CoveredDetector, DetectorCoverage>;
  /** Per producer, by producer name: a detector blind to one producer is named here. */
  producers: ProducerCoverage[];
  /** The start of the recent calls `models` and `claudeCode` describe; null with no calls. */
  recentSince: string | null;
  /** Each model of the recent calls with its window and source, by model, most calls first. */
  models: ModelWindowCoverage[];
  /** Models of recent calls without a window: not judged by `context_too_full`. */
  modelsWithoutWindow: string[];
  claudeCode: ClaudeCodeCoverage;
}

/** The recent calls of the model and version lists: this long before the workspace's newest call. */
export const RECENT_CALLS_DAYS = 30;
const RECENT_NS = BigInt(RECENT_CALLS_DAYS) * 86_400n * 1_000_000_000n;
/** Most model rows and versions listed. */
const MAX_MODEL_ROWS = 500;
const MAX_VERSIONS = 100;

/** The calls each detector can use, as SQL filters over `llm_calls` (see getCoverage). */
const COVERED = {
  context_too_full: sql<string>`count(*) FILTER (WHERE context_tokens IS NOT NULL AND context_window IS NOT NULL)`,
  tool_takeover: sql<string>`count(*) FILTER (WHERE parts IS NOT NULL AND parts->'tools' IS NOT NULL AND parts->'tools' <> '{}'::jsonb)`,
  history_lost: sql<string>`count(*) FILTER (WHERE context_tokens IS NOT NULL)`,
  output_cut_off: sql<string>`count(*) FILTER (WHERE finish_reason_raw IS NOT NULL)`,
} as const;

/** Calls and covered calls per producer; a detector no call of a producer feeds is blind to it. */
async function producerCoverage(db: Db, workspaceId: string): Promise<ProducerCoverage[]> {
  const rows = await db
    .selectFrom('llm_calls')
    .where('workspace_id', '=', workspaceId)
    .groupBy('producer')
    .orderBy('producer')
    .select([
      'producer',
      sql<string>`count(*)`.as('calls'),
      COVERED.context_too_full.as('context_too_full'),
      COVERED.tool_takeover.as('tool_takeover'),
      COVERED.history_lost.as('history_lost'),
      COVERED.output_cut_off.as('output_cut_off'),
    ])
    .execute();
  return rows.map((r) => {
    const covered: Record<CoveredDetector, number> = {
      context_too_full: Number(r.context_too_full),
      tool_takeover: Number(r.tool_takeover),
      history_lost: Number(r.history_lost),
      output_cut_off: Number(r.output_cut_off),
    };
    const detectors = Object.keys(covered) as CoveredDetector[];
    const blind = detectors.filter((d) => covered[d] === 0);
    const calls = Number(r.calls);
    const hints = Object.fromEntries(
      detectors
        .filter((d) => covered[d] < calls)
        .map((d) => [d, coverageHint(r.producer, d) ?? DETECTOR_NEEDS[d].hint]),
    );
    const agent = agentOf(r.producer);
    return {
      producer: r.producer,
      agent: agent ? AGENT_NAMES[agent] : null,
      calls,
      covered,
      blind,
      hints,
    };
  });
}

/**
 * The hint for a detector over the whole workspace: when every producer whose calls it misses is
 * a coding agent with its own knob (a Claude Code only workspace), those agents' words; else the
 * generic one, which names the attributes an SDK or library sends.
 */
function workspaceHint(producers: ProducerCoverage[], detector: CoveredDetector): string {
  const missing = producers.filter((p) => p.covered[detector] < p.calls);
  const own = new Map<string, string>();
  for (const producer of missing) {
    const hint = coverageHint(producer.producer, detector);
    if (hint === undefined) return DETECTOR_NEEDS[detector].hint;
    own.set(producer.agent ?? producer.producer, hint);
  }
  if (own.size === 0) return DETECTOR_NEEDS[detector].hint;
  if (own.size === 1) return [...own.values()][0]!;
  return [...own].map(([agent, hint]) => `${agent}: ${hint}`).join(' ');
}

/**
 * Signal coverage: per detector, the share of the workspace's calls that carry what it needs,
 * so a quiet detector can be told from a blind one; and per producer, the detectors that see
 * none of its calls.
 */
export async function getCoverage(db: Db, workspaceId: string): Promise<Coverage> {
  const row = await db
    .selectFrom('llm_calls')
    .where('workspace_id', '=', workspaceId)
    .select([
      sql<string>`count(*)`.as('calls'),
      sql<string>`count(DISTINCT conversation_id)`.as('conversations'),
      COVERED.context_too_full.as('full'),
      COVERED.tool_takeover.as('tools'),
      COVERED.history_lost.as('tokens'),
      COVERED.output_cut_off.as('finish'),
      sql<string | null>`max(start_ns)::text`.as('newest'),
    ])
    .executeTakeFirstOrThrow();
  const compactions = await db
    .selectFrom('compactions')
    .where('workspace_id', '=', workspaceId)
    .select(sql<string>`count(*)`.as('n'))
    .executeTakeFirstOrThrow();
  const calls = Number(row.calls);
  const producers = await producerCoverage(db, workspaceId);
  const entry = (covered: string, detector: CoveredDetector): DetectorCoverage => ({
    covered: Number(covered),
    share: calls === 0 ? 0 : Number(covered) / calls,
    needs: DETECTOR_NEEDS[detector].needs,
    hint: workspaceHint(producers, detector),
  });
  return {
    calls,
    conversations: Number(row.conversations),
    compactions: Number(compactions.n),
    detectors: {
      context_too_full: entry(row.full, 'context_too_full'),
      tool_takeover: entry(row.tools, 'tool_takeover'),
      history_lost: entry(row.tokens, 'history_lost'),
      output_cut_off: entry(row.finish, 'output_cut_off'),
    },
    producers,
    ...(await windowCoverage(db, workspaceId, row.newest)),
  };
}

/** The models and Claude Code versions of the calls within RECENT_CALLS_DAYS of `newestNs`. */
async function windowCoverage(
  db: Db,
  workspaceId: string,
  newestNs: string | null,
): Promise<Pick<Coverage, 'recentSince' | 'models' | 'modelsWithoutWindow' | 'claudeCode'>> {
  const since = newestNs === null ? null : (BigInt(newestNs) - RECENT_NS).toString();
  const recent = db
    .selectFrom('llm_calls')
    .where('workspace_id', '=', workspaceId)
    .where('start_ns', '>=', since ?? '0');
  const modelRows =
    since === null
      ? []
      : await recent
          .select([
            sql<string | null>`COALESCE(response_model, request_model)`.as('model'),
            'context_window',
            'window_source',
            sql<string>`count(*)`.as('calls'),
            sql<string>`max(start_ns)::text`.as('last_ns'),
          ])
          .groupBy([sql`1`, 'context_window', 'window_source'])
          .orderBy(sql`1`)
          .orderBy(sql`count(*)`, 'desc')
          .limit(MAX_MODEL_ROWS)
          .execute();
  const versionRows =
    since === null
      ? []
      : await recent
          .where('agent_version', 'is not', null)
          .where('producer', 'in', CLAUDE_CODE_CALL_PRODUCERS)
          .select([
            'agent_version',
            sql<string>`count(*)`.as('calls'),
            sql<string>`count(DISTINCT conversation_id)`.as('conversations'),
            sql<string>`max(start_ns)::text`.as('last_ns'),
          ])
          .groupBy('agent_version')
          .orderBy(sql`max(start_ns)`, 'desc')
          .limit(MAX_VERSIONS)
          .execute();
  const models: ModelWindowCoverage[] = modelRows.map((r) => ({
    model: r.model,
    window: r.context_window,
    windowSource: r.window_source,
    calls: Number(r.calls),
    lastCallAt: nsToIso(r.last_ns),
  }));
  const versions: ClaudeCodeVersionCoverage[] = versionRows
    .map((r) => ({
      version: r.agent_version as string,
      status: claudeCodeVersionStatus(r.agent_version as string),
      calls: Number(r.calls),
      conversations: Number(r.conversations),
      lastCallAt: nsToIso(r.last_ns),
    }))
    .sort((a, b) => compareVersions(b.version, a.version) ?? b.version.localeCompare(a.version));
  return {
    recentSince: nsToIso(since),
    models,
    modelsWithoutWindow: modelsWithoutWindow(models),
    claudeCode: claudeCodeCoverage(versions),
  };
}

/** The models none of whose listed calls has a window. */
export function modelsWithoutWindow(models: readonly ModelWindowCoverage[]): string[] {
  const withWindow = new Set(models.filter((m) => m.window !== null).map((m) => m.model));
  const names = models
    .filter((m) => m.window === null && !withWindow.has(m.model))
    .map((m) => m.model ?? '(no model)');
  return [...new Set(names)].sort();
}

/** The Claude Code versions seen, against the verified ones, with a warning when one is outside. */
export function claudeCodeCoverage(versions: ClaudeCodeVersionCoverage[]): ClaudeCodeCoverage {
  const { oldestSupported, newestVerified, verified } = CLAUDE_CODE_VERSIONS;
  const newer = versions.filter((v) => v.status === 'newer').map((v) => v.version);
  const older = versions.filter((v) => v.status === 'older').map((v) => v.version);
  const warnings: string[] = [];
  if (newer.length > 0) {
    warnings.push(
      `Claude Code ${newer.join(', ')} ${newer.length === 1 ? 'is' : 'are'} newer than the newest version rotscope has verified (${newestVerified}): what it exports may have changed, so findings for its sessions may be wrong or missing until that version is verified (README, Claude Code)`,
    );
  }
  if (older.length > 0) {
    warnings.push(
      `Claude Code ${older.join(', ')} ${older.length === 1 ? 'is' : 'are'} older than the oldest version rotscope supports (${oldestSupported})`,
    );
  }
  return {
    oldestSupported,
    newestVerified,
    verified: [...verified],
    versions,
    warning: warnings.length === 0 ? null : `${warnings.join('. ')}.`,
  };
}
