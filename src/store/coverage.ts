/**
 * The counts behind the Coverage page: per detector, the calls that carry what it needs (its
 * needs as declared in src/model/detector-needs.ts, turned into SQL filters over `llm_calls`), in the whole workspace and per producer; and the models and Claude
 * Code versions of the recent calls. What they mean (blind detectors, hints, warnings) is
 * src/reading/coverage.ts.
 */
import { sql, type RawBuilder } from 'kysely';
import {
  DETECTOR_CALL_NEEDS,
  type CallNeed,
  type NeededField,
  type ToolSizesEvidence,
} from '../model/detector-needs.ts';
import type { CoverageDetector } from '../model/producer-advice.ts';
import { CLAUDE_CODE_CALL_PRODUCERS } from '../model/window-catalog.ts';
import type { Db } from './db.ts';

/** Calls per detector that carry what it needs. */
export type CoveredCounts = Record<CoverageDetector, number>;

/** The workspace's totals; what each detector covers is counted per producer ({@link producerCounts}). */
export interface WorkspaceCounts {
  calls: number;
  conversations: number;
  compactions: number;
  /** The start of the workspace's newest call, in ns; null with no calls. */
  newestNs: string | null;
}

export interface ProducerCounts {
  producer: string;
  calls: number;
  covered: CoveredCounts;
  /**
   * Calls cut at the output limit whose output nothing says was text or a tool call (Claude
   * Code and Agent SDK apps without detailed beta tracing): their cut-off is a warning only.
   */
  cutOutputUnknown?: number;
}

/** One model of the recent calls with one window it was given. */
export interface ModelWindowRow {
  model: string | null;
  window: number | null;
  windowSource: string | null;
  calls: number;
  lastNs: string;
}

export interface ClaudeCodeVersionRow {
  version: string;
  calls: number;
  conversations: number;
  lastNs: string;
}

/** Most model rows and versions listed. */
const MAX_MODEL_ROWS = 500;
const MAX_VERSIONS = 100;

/**
 * Where tool result sizes reach rotscope for calls that carry none themselves: the producers
 * whose calls come from log events that travel with the `tool_result` events (Claude Code's
 * `claude_code_log`: the logs exporter is on, so every result is logged). Given by the caller
 * (src/reading/coverage.ts), which knows the producers.
 */
export interface CoverageRules {
  toolSizesLoggedBy: readonly string[];
}

/** The conversations of a workspace with at least one call whose parts size a tool's results. */
const SIZED = 'sized_conversations';

/** A call whose input parts name a tool (its results' size is known). */
const NAMES_A_TOOL = sql<boolean>`(parts IS NOT NULL AND parts->'tools' IS NOT NULL AND parts->'tools' <> '{}'::jsonb)`;

/** The column of each field a detector may need known. */
const NEEDED_COLUMNS: Record<
  NeededField,
  'context_tokens' | 'context_window' | 'finish_reason_raw'
> = {
  contextTokens: 'context_tokens',
  contextWindow: 'context_window',
  finishReasonRaw: 'finish_reason_raw',
};

/** Each evidence of a call's tool-result sizes, as SQL over `llm_calls` joined to {@link SIZED}. */
function toolSizesSql(rules: CoverageRules): Record<ToolSizesEvidence, RawBuilder<boolean>> {
  return {
    partsNameATool: NAMES_A_TOOL,
    partsFromMessages: sql<boolean>`parts->>'source' = 'messages'`,
    conversationSizesTools: sql<boolean>`${sql.ref(`${SIZED}.conversation_id`)} IS NOT NULL`,
    producerLogsToolSizes:
      rules.toolSizesLoggedBy.length === 0
        ? sql<boolean>`false`
        : sql<boolean>`llm_calls.producer IN (${sql.join(rules.toolSizesLoggedBy)})`,
  };
}

/** One need as SQL. */
function needSql(need: CallNeed, rules: CoverageRules): RawBuilder<boolean> {
  if ('field' in need) return sql<boolean>`${sql.ref(NEEDED_COLUMNS[need.field])} IS NOT NULL`;
  const evidence = toolSizesSql(rules);
  return sql<boolean>`(${sql.join(
    need.anyOf.map((e) => evidence[e]),
    sql` OR `,
  )})`;
}

/**
 * The calls each detector can use, as SQL filters over `llm_calls` (joined to {@link SIZED}):
 * the needs each detector declares (src/model/detector-needs.ts), all of them.
 */
function coveredFilters(rules: CoverageRules): Record<CoverageDetector, RawBuilder<string>> {
  const filter = (d: CoverageDetector) =>
    sql<string>`count(*) FILTER (WHERE ${sql.join(
      DETECTOR_CALL_NEEDS[d].needs.map((need) => needSql(need, rules)),
      sql` AND `,
    )})`;
  return {
    context_too_full: filter('context_too_full'),
    tool_takeover: filter('tool_takeover'),
    history_lost: filter('history_lost'),
    output_cut_off: filter('output_cut_off'),
  };
}

const coveredColumns = (rules: CoverageRules) => {
  const covered = coveredFilters(rules);
  return [
    covered.context_too_full.as('context_too_full'),
    covered.tool_takeover.as('tool_takeover'),
    covered.history_lost.as('history_lost'),
    covered.output_cut_off.as('output_cut_off'),
  ];
};

/**
 * `llm_calls` of a workspace with, per call, whether its conversation has sized tool results:
 * read from the calls' own parts (logged results are joined to the calls' parts as they
 * arrive, src/receiver/logged-tool-parts.ts), one more pass over the workspace's calls rather
 * than one over its tool results, which are several per call.
 */
function callsWithSizedResults(db: Db, workspaceId: string) {
  return db
    .selectFrom('llm_calls')
    .leftJoin(
      db
        .selectFrom('llm_calls')
        .where('workspace_id', '=', workspaceId)
        .groupBy('conversation_id')
        .having(sql<boolean>`bool_or(${NAMES_A_TOOL})`)
        .select('conversation_id')
        .as(SIZED),
      `${SIZED}.conversation_id`,
      'llm_calls.conversation_id',
    )
    .where('llm_calls.workspace_id', '=', workspaceId);
}

const coveredOf = (r: Record<CoverageDetector, string>): CoveredCounts => ({
  context_too_full: Number(r.context_too_full),
  tool_takeover: Number(r.tool_takeover),
  history_lost: Number(r.history_lost),
  output_cut_off: Number(r.output_cut_off),
});

/** The workspace's calls, conversations and compactions, and the start of its newest call. */
export async function workspaceCounts(db: Db, workspaceId: string): Promise<WorkspaceCounts> {
  const row = await db
    .selectFrom('llm_calls')
    .where('workspace_id', '=', workspaceId)
    .select([
      sql<string>`count(*)`.as('calls'),
      sql<string>`count(DISTINCT conversation_id)`.as('conversations'),
      sql<string | null>`max(start_ns)::text`.as('newest'),
    ])
    .executeTakeFirstOrThrow();
  const compactions = await db
    .selectFrom('compactions')
    .where('workspace_id', '=', workspaceId)
    .select(sql<string>`count(*)`.as('n'))
    .executeTakeFirstOrThrow();
  return {
    calls: Number(row.calls),
    conversations: Number(row.conversations),
    compactions: Number(compactions.n),
    newestNs: row.newest,
  };
}

/** Calls and covered calls per producer, by producer name. */
export async function producerCounts(
  db: Db,
  workspaceId: string,
  rules: CoverageRules,
): Promise<ProducerCounts[]> {
  const rows = await callsWithSizedResults(db, workspaceId)
    .groupBy('llm_calls.producer')
    .orderBy('llm_calls.producer')
    .select([
      'llm_calls.producer',
      sql<string>`count(*)`.as('calls'),
      ...coveredColumns(rules),
      sql<string>`count(*) FILTER (WHERE finish_class = 'output_limit' AND output_tool_call IS NULL)`.as(
        'cut_output_unknown',
      ),
    ])
    .execute();
  return rows.map((r) => ({
    producer: r.producer,
    calls: Number(r.calls),
    covered: coveredOf(r as unknown as Record<CoverageDetector, string>),
    cutOutputUnknown: Number(r.cut_output_unknown),
  }));
}

/** The models (response, else request) of the calls since `sinceNs`, one row per window given. */
export async function recentModelWindows(
  db: Db,
  workspaceId: string,
  sinceNs: string,
): Promise<ModelWindowRow[]> {
  const rows = await db
    .selectFrom('llm_calls')
    .where('workspace_id', '=', workspaceId)
    .where('start_ns', '>=', sinceNs)
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
  return rows.map((r) => ({
    model: r.model,
    window: r.context_window,
    windowSource: r.window_source,
    calls: Number(r.calls),
    lastNs: r.last_ns,
  }));
}

/**
 * Calls with token counts whose stored window may not be the one they are judged on now: those
 * without a window, and those whose window came from an override (which may since have changed).
 * By producer, model (response, else request) and whether a window is stored.
 */
export interface WindowlessRow {
  producer: string;
  model: string | null;
  /** The call's stored window came from a workspace override. */
  overridden: boolean;
  calls: number;
}

/** The workspace's calls that carry token counts and no window, or an override's (all time). */
export async function windowlessCalls(db: Db, workspaceId: string): Promise<WindowlessRow[]> {
  const rows = await db
    .selectFrom('llm_calls')
    .where('workspace_id', '=', workspaceId)
    .where('context_tokens', 'is not', null)
    .where((eb) => eb.or([eb('context_window', 'is', null), eb('window_source', '=', 'override')]))
    .select([
      'producer',
      sql<string | null>`COALESCE(response_model, request_model)`.as('model'),
      sql<boolean>`context_window IS NOT NULL`.as('overridden'),
      sql<string>`count(*)`.as('calls'),
    ])
    .groupBy([sql`1`, sql`2`, sql`3`])
    .orderBy(sql`1`)
    .orderBy(sql`2`)
    .execute();
  return rows.map((r) => ({
    producer: r.producer,
    model: r.model,
    overridden: r.overridden,
    calls: Number(r.calls),
  }));
}

/** The Claude Code versions of the calls since `sinceNs`, most recently seen first. */
export async function recentClaudeCodeVersions(
  db: Db,
  workspaceId: string,
  sinceNs: string,
): Promise<ClaudeCodeVersionRow[]> {
  const rows = await db
    .selectFrom('llm_calls')
    .where('workspace_id', '=', workspaceId)
    .where('start_ns', '>=', sinceNs)
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
  return rows.map((r) => ({
    version: r.agent_version as string,
    calls: Number(r.calls),
    conversations: Number(r.conversations),
    lastNs: r.last_ns,
  }));
}
