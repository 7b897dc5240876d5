/**
 * The end-to-end harness of test/e2e/producers.test.ts: a fresh rotscope (test/helpers/server.ts)
 * with its evaluator and a fake LLM, a producer run against both, then the normalized rows and
 * the findings read back, typed by the schema's own row types (src/store/schema.ts).
 */
import type { Selectable } from 'kysely';
import type { InputParts } from '../../../src/model/calls.ts';
import { countOf } from '../../../src/store/columns.ts';
import type {
  CompactionsTable,
  FindingsTable,
  LlmCallsTable,
  SpansTable,
  ToolResultsTable,
} from '../../../src/store/schema.ts';
import { startFakeLlm, type FakeLlm } from '../fake-llm.ts';
import { startTestServer, type TestServer } from '../server.ts';
import type { ProducerOptions } from './otel.ts';

export interface Harness {
  server: TestServer;
  llm: FakeLlm;
  /** Options to hand a producer: rotscope's and the fake LLM's URLs. */
  opts: ProducerOptions;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  // the evaluator runs (quiet 100 ms, as in startTestServer) so the findings can be read back;
  // Claude Code's logs (its compaction event) may commit well after its spans on a loaded
  // 2-core run, and a drop judged before them stays a warning: 2 s to settle (production: 6 s)
  // keepRawSpans: the tests read which spans were kept, by name, role and scope (the calls, tool
  // results and findings are the same without it: only the raw copy is added)
  const server = await startTestServer({
    config: { splitEvidenceSettleMs: 2_000, keepRawSpans: true },
  });
  const llm = await startFakeLlm();
  return {
    server,
    llm,
    opts: { rotscopeUrl: server.url, llmUrl: llm.url },
    async close() {
      await llm.close();
      await server.close();
    },
  };
}

/** An `llm_calls` row as the tests read it (the schema's row, with `parts` typed). */
export type CallRow = Omit<Selectable<LlmCallsTable>, 'parts'> & { parts: InputParts | null };

/** All LLM calls of the default workspace, optionally of one conversation, in call order. */
export async function callsOf(h: Harness, conversationId?: string): Promise<CallRow[]> {
  let q = h.server.store.db
    .selectFrom('llm_calls')
    .selectAll()
    .where('workspace_id', '=', 'default');
  if (conversationId !== undefined) q = q.where('conversation_id', '=', conversationId);
  const rows = await q.orderBy('start_ns').orderBy('span_id').execute();
  // the JSON column holds what the store wrote from InputParts (src/store/timeline.ts)
  return rows.map((row) => ({ ...row, parts: (row.parts ?? null) as InputParts | null }));
}

export type ToolResultRow = Selectable<ToolResultsTable>;

export async function toolResultsOf(h: Harness, conversationId?: string): Promise<ToolResultRow[]> {
  let q = h.server.store.db
    .selectFrom('tool_results')
    .selectAll()
    .where('workspace_id', '=', 'default');
  if (conversationId !== undefined) q = q.where('conversation_id', '=', conversationId);
  return q.orderBy('at_ns').orderBy('span_id').execute();
}

export type CompactionRow = Selectable<CompactionsTable>;

export async function compactionsOf(h: Harness, conversationId?: string): Promise<CompactionRow[]> {
  let q = h.server.store.db
    .selectFrom('compactions')
    .selectAll()
    .where('workspace_id', '=', 'default');
  if (conversationId !== undefined) q = q.where('conversation_id', '=', conversationId);
  return q.orderBy('at_ns').execute();
}

/** A `spans` row as the tests read it, with its attributes (a JSON object) typed. */
export type SpanRow = Pick<
  Selectable<SpansTable>,
  'trace_id' | 'span_id' | 'parent_span_id' | 'name' | 'scope_name' | 'role'
> & { attributes: Record<string, unknown> };

export async function spansOf(h: Harness): Promise<SpanRow[]> {
  const rows = await h.server.store.db
    .selectFrom('spans')
    .select(['trace_id', 'span_id', 'parent_span_id', 'name', 'scope_name', 'role', 'attributes'])
    .where('workspace_id', '=', 'default')
    .orderBy('start_ns')
    .execute();
  // the store writes a span's attributes as a JSON object (src/store/ingest.ts)
  return rows.map((row) => ({ ...row, attributes: row.attributes as Record<string, unknown> }));
}

export type FindingRow = Selectable<FindingsTable>;

/**
 * The findings of the default workspace once the evaluator has caught up: no conversation
 * left dirty (the producer's export was committed before its run returned), by conversation,
 * detector and anchor.
 */
export async function findingsOf(h: Harness, timeoutMs = 30_000): Promise<FindingRow[]> {
  const db = h.server.store.db;
  for (const deadline = Date.now() + timeoutMs; ;) {
    const dirty = await db
      .selectFrom('conversations')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('workspace_id', '=', 'default')
      .where('dirty', '=', true)
      .executeTakeFirstOrThrow();
    if (Number(dirty.n) === 0) break;
    if (Date.now() > deadline) throw new Error(`${dirty.n} conversations still dirty`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return db
    .selectFrom('findings')
    .selectAll()
    .where('workspace_id', '=', 'default')
    .orderBy('conversation_id')
    .orderBy('detector')
    .orderBy('anchor')
    .execute();
}

export async function logCount(h: Harness): Promise<number> {
  const row = await h.server.store.db
    .selectFrom('log_records')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('workspace_id', '=', 'default')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The fields of a call row most tests compare, for readable diffs. */
export function usageOf(c: CallRow) {
  return {
    input_tokens_raw: countOf(c.input_tokens_raw),
    cache_read_tokens: countOf(c.cache_read_tokens),
    cache_write_tokens: countOf(c.cache_write_tokens),
    output_tokens: countOf(c.output_tokens),
    context_tokens: countOf(c.context_tokens),
    usage_rule: c.usage_rule,
  };
}

/** The part sizes a test compares exactly (the total depends on what the normalizer counts). */
export function partsOf(c: CallRow) {
  return (
    c.parts && {
      unit: c.parts.unit,
      system: c.parts.system,
      tools: c.parts.tools,
      source: c.parts.source,
    }
  );
}

/** Usage as the provider counted it, for a producer whose input reading includes the cache. */
export function inclusiveUsage(
  u: { fresh: number; cacheRead?: number; cacheWrite?: number; output: number },
  cacheRead: number | null,
  cacheWrite: number | null,
  rule: 'inclusive' | 'no_cache',
) {
  const total = u.fresh + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
  return {
    input_tokens_raw: total,
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
    output_tokens: u.output,
    context_tokens: total,
    usage_rule: rule,
  };
}

/** Usage for a producer whose input reading excludes the cache (Anthropic's own counting). */
export function exclusiveUsage(
  u: { fresh: number; cacheRead?: number; cacheWrite?: number; output: number },
  rule: 'exclusive_inferred' | 'exclusive_producer',
) {
  return {
    input_tokens_raw: u.fresh,
    cache_read_tokens: u.cacheRead ?? 0,
    cache_write_tokens: u.cacheWrite ?? 0,
    output_tokens: u.output,
    context_tokens: u.fresh + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0),
    usage_rule: rule,
  };
}

/** Expected parts of the three calls of the "tools" conversation (content captured). */
export function toolsConversationParts(system: number, readFile: number, runTests: number) {
  return [
    { unit: 'chars', system, tools: {}, source: 'messages' },
    { unit: 'chars', system, tools: { read_file: readFile }, source: 'messages' },
    {
      unit: 'chars',
      system,
      tools: { read_file: readFile, run_tests: runTests },
      source: 'messages',
    },
  ];
}

export const NO_USAGE = {
  input_tokens_raw: null,
  cache_read_tokens: null,
  cache_write_tokens: null,
  output_tokens: null,
  context_tokens: null,
  usage_rule: null,
};

/**
 * What a row's checks of test/e2e/producers.test.ts read: the harness and what the producer's
 * driver returned. Filled in by the table's beforeAll, before the row's own hooks run.
 */
export interface ProducerRun<R = void> {
  h: Harness;
  result: R;
}
