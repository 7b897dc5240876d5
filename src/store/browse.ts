/**
 * Read queries behind the conversations, runs and coverage API: what was normalized, per
 * workspace. Rows are mapped to the model here; nothing snake_case leaves src/store.
 */
import { sql } from 'kysely';
import type { Compaction, LlmCall } from '../model/calls.ts';
import type { Db } from './db.ts';
import { toCompaction, toLlmCall } from './timeline.ts';

export interface ConversationSummary {
  id: string;
  calls: number;
  firstCallAt: string | null;
  lastCallAt: string | null;
  maxContextTokens: number | null;
  models: string[];
  streams: number;
  findings: number;
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
  options: { limit: number; after?: ConversationKey | undefined },
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
      sql<
        string[]
      >`array_agg(DISTINCT coalesce(response_model, request_model)) FILTER (WHERE coalesce(response_model, request_model) IS NOT NULL)`.as(
        'models',
      ),
      sql<string>`count(DISTINCT stream_key)`.as('streams'),
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
  const rows = await query.execute();
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  return {
    items: page.map((row) => ({
      id: row.conversation_id,
      calls: Number(row.calls),
      firstCallAt: nsToIso(row.first_ns === null ? null : String(row.first_ns)),
      lastCallAt: nsToIso(row.last_ns === null ? null : String(row.last_ns)),
      maxContextTokens: row.max_context === null ? null : Number(row.max_context),
      models: row.models ?? [],
      streams: Number(row.streams),
      findings: Number(row.findings),
    })),
    next: rows.length > options.limit && last ? [String(last.last_ns), last.conversation_id] : null,
  };
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
}

type CoveredDetector = 'context_too_full' | 'tool_takeover' | 'history_lost' | 'output_cut_off';

/**
 * One producer's calls (`llm_calls.producer`, e.g. `langfuse`, `openinference`) and what each
 * detector sees of them; `blind` lists the detectors none of its calls feed (Langfuse sends no
 * finish reason: `output_cut_off`).
 */
export interface ProducerCoverage {
  producer: string;
  calls: number;
  covered: Record<CoveredDetector, number>;
  blind: CoveredDetector[];
}

export interface Coverage {
  calls: number;
  conversations: number;
  compactions: number;
  detectors: Record<CoveredDetector, DetectorCoverage>;
  /** Per producer, by producer name: a detector blind to one producer is named here. */
  producers: ProducerCoverage[];
}

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
    const blind = (Object.keys(covered) as CoveredDetector[]).filter((d) => covered[d] === 0);
    return { producer: r.producer, calls: Number(r.calls), covered, blind };
  });
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
    ])
    .executeTakeFirstOrThrow();
  const compactions = await db
    .selectFrom('compactions')
    .where('workspace_id', '=', workspaceId)
    .select(sql<string>`count(*)`.as('n'))
    .executeTakeFirstOrThrow();
  const calls = Number(row.calls);
  const entry = (covered: string, needs: string): DetectorCoverage => ({
    covered: Number(covered),
    share: calls === 0 ? 0 : Number(covered) / calls,
    needs,
  });
  return {
    calls,
    conversations: Number(row.conversations),
    compactions: Number(compactions.n),
    detectors: {
      context_too_full: entry(row.full, 'token counts and a known context window'),
      tool_takeover: entry(
        row.tools,
        'sizes of tool results in the input (message content or tool spans)',
      ),
      history_lost: entry(
        row.tokens,
        'token counts on consecutive calls; compaction markers tell compacted from lost (see compactions)',
      ),
      output_cut_off: entry(row.finish, 'finish reasons'),
    },
    producers: await producerCoverage(db, workspaceId),
  };
}
