/**
 * Read queries behind the conversations and runs API: what was normalized, per
 * workspace. Rows are mapped to the model here; nothing snake_case leaves src/store.
 */
import { guardSummaries } from './guard-decisions.ts';
import { projectsOf } from './conversations.ts';
import { agentName, agentOf } from '../model/producer-advice.ts';
import { sql } from 'kysely';
import type {
  CallsAndCompactions,
  ConversationSummary,
  RunSummary,
  StreamSummary,
} from '../model/conversations.ts';
import { nsToIso } from '../model/telemetry.ts';
export type {
  CallsAndCompactions,
  ConversationSummary,
  RunSummary,
  StreamSummary,
} from '../model/conversations.ts';
import { countOf } from './columns.ts';
import type { Db } from './db.ts';
import { inScope, type Scope } from './scope.ts';
import { toCompaction, toLlmCall } from './timeline.ts';

/** Most runs listed per conversation (the rest are counted in `runCount`). */
export const MAX_RUNS_LISTED = 50;

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
      sql<
        string[] | null
      >`array_agg(DISTINCT coalesce(response_model, request_model) ORDER BY coalesce(response_model, request_model)) FILTER (WHERE context_tokens IS NOT NULL AND context_window IS NULL AND coalesce(response_model, request_model) IS NOT NULL)`.as(
        'window_unknown',
      ),
      sql<string>`count(DISTINCT stream_key)`.as('streams'),
      sql<number | null>`sum(cost_usd)`.as('cost_usd'),
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
      windowUnknown: row.window_unknown ?? [],
      agent: agentLabel(row.producers ?? [], row.agent_version),
      project: projects.get(row.conversation_id) ?? null,
      producers: row.producers ?? [],
      guard: guard.get(row.conversation_id) ?? null,
      costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
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
  return version ? `${agentName(agent)} ${version}` : agentName(agent);
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
    .where(inScope(scope))
    .orderBy('start_ns')
    .orderBy('span_id')
    .limit(limit)
    .execute();
  const compactions = await db
    .selectFrom('compactions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where(inScope(scope))
    .orderBy('at_ns')
    .execute();
  if (calls.length === 0 && compactions.length === 0) return undefined;
  return { calls: calls.map(toLlmCall), compactions: compactions.map(toCompaction) };
}

/**
 * What a conversation's calls cost in US dollars, over the calls whose producer reported a cost;
 * null when none did (or there is no such conversation).
 */
export async function conversationCost(
  db: Db,
  workspaceId: string,
  conversationId: string,
): Promise<number | null> {
  const row = await db
    .selectFrom('llm_calls')
    .select(sql<number | null>`sum(cost_usd)`.as('cost_usd'))
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', '=', conversationId)
    .executeTakeFirst();
  return row?.cost_usd === null || row?.cost_usd === undefined ? null : Number(row.cost_usd);
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
