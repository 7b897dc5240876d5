/**
 * The rows behind What was lost at one drop (src/reading/what-was-lost.ts): the two calls a
 * `history_lost` finding compares, with their stored span attributes, and the compaction that
 * came between them.
 */
import type { ExpressionBuilder } from 'kysely';
import type { Compaction } from '../model/calls.ts';
import type { Db } from './db.ts';
import type { Database } from './schema.ts';
import { toCompaction } from './timeline.ts';

/** One end of a drop, by its span. */
export interface CallKey {
  traceId: string;
  spanId: string;
}

/** One end of a drop: its call (null when the call is not stored) and its span's attributes. */
export interface DropEnd extends CallKey {
  call: {
    startNs: string;
    producer: string;
    /** `llm_calls.parts` as stored (InputParts), or null. */
    parts: unknown;
    /** The response model, else the request model. */
    model: string | null;
  } | null;
  /** The stored span's attributes; {} when its raw span was not kept. */
  attributes: Record<string, unknown>;
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Each of `keys` as a drop's end, in the order given. */
export async function dropEnds(
  db: Db,
  workspaceId: string,
  keys: readonly CallKey[],
): Promise<DropEnd[]> {
  if (keys.length === 0) return [];
  const bySpan = (eb: ExpressionBuilder<Database, 'llm_calls' | 'spans'>) =>
    eb.or(keys.map((k) => eb.and([eb('trace_id', '=', k.traceId), eb('span_id', '=', k.spanId)])));
  const calls = await db
    .selectFrom('llm_calls')
    .select([
      'trace_id',
      'span_id',
      'start_ns',
      'producer',
      'parts',
      'response_model',
      'request_model',
    ])
    .where('workspace_id', '=', workspaceId)
    .where(bySpan)
    .execute();
  const spans = await db
    .selectFrom('spans')
    .select(['trace_id', 'span_id', 'attributes'])
    .where('workspace_id', '=', workspaceId)
    .where(bySpan)
    .execute();
  const same = (k: CallKey) => (r: { trace_id: string; span_id: string }) =>
    r.trace_id === k.traceId && r.span_id === k.spanId;
  return keys.map((k) => {
    const c = calls.find(same(k));
    const attributes = spans.find(same(k))?.attributes;
    return {
      traceId: k.traceId,
      spanId: k.spanId,
      call: c
        ? {
            startNs: String(c.start_ns),
            producer: c.producer,
            parts: c.parts,
            model: c.response_model ?? c.request_model,
          }
        : null,
      attributes: isObj(attributes) ? attributes : {},
    };
  });
}

/**
 * The latest compaction of the stream (or of the conversation as a whole) after `afterNs` and
 * at or before `uptoNs`; undefined when none.
 */
export async function compactionBetween(
  db: Db,
  workspaceId: string,
  where: { conversationId: string; streamKey: string; afterNs: string; uptoNs: string },
): Promise<Compaction | undefined> {
  const row = await db
    .selectFrom('compactions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', '=', where.conversationId)
    .where('stream_key', 'in', [where.streamKey, where.conversationId])
    .where('at_ns', '>', where.afterNs)
    .where('at_ns', '<=', where.uptoNs)
    .orderBy('at_ns', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? toCompaction(row) : undefined;
}
