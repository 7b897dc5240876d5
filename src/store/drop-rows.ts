/**
 * The rows behind What was lost at one drop (src/reading/what-was-lost.ts): the two calls a
 * `history_lost` finding compares, with their input messages as sent, and the compaction that
 * came between them.
 */
import type { Compaction } from '../model/calls.ts';
import type { Db } from './db.ts';
import { toCompaction } from './timeline.ts';

/** One end of a drop, by its span. */
export interface CallKey {
  traceId: string;
  spanId: string;
}

/** One end of a drop: its call (null when the call is not stored) and its input messages. */
export interface DropEnd extends CallKey {
  call: {
    startNs: string;
    producer: string;
    /** `llm_calls.parts` as stored (InputParts), or null. */
    parts: unknown;
    /** The response model, else the request model. */
    model: string | null;
  } | null;
  /**
   * `llm_calls.input_messages` as stored: the span attributes holding the call's messages as
   * sent, as JSON text (src/ingest/message-text.ts reads it); null when content was not
   * captured or the call is not stored.
   */
  inputMessages: string | null;
}

/** Each of `keys` as a drop's end, in the order given (one query). */
export async function dropEnds(
  db: Db,
  workspaceId: string,
  keys: readonly CallKey[],
): Promise<DropEnd[]> {
  if (keys.length === 0) return [];
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
      'input_messages',
    ])
    .where('workspace_id', '=', workspaceId)
    .where((eb) =>
      eb.or(
        keys.map((k) => eb.and([eb('trace_id', '=', k.traceId), eb('span_id', '=', k.spanId)])),
      ),
    )
    .execute();
  const same = (k: CallKey) => (r: { trace_id: string; span_id: string }) =>
    r.trace_id === k.traceId && r.span_id === k.spanId;
  return keys.map((k) => {
    const c = calls.find(same(k));
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
      inputMessages: c?.input_messages ?? null,
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
