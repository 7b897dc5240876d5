/**
 * "What was lost" at one drop of a conversation (a `history_lost` finding): the tokens lost and
 * the parts that lost the most (from the finding), the messages the call before held and the
 * call after did not (their text only when the workspace kept the content of both calls'
 * spans; otherwise nothing but sizes), what replaced them (the compaction and its summary
 * when the producer sent one) and the system prompt before and after.
 *
 * Messages are read from the stored spans of the two calls: OTel GenAI `gen_ai.input.messages`
 * (and `gen_ai.system_instructions`), OpenInference `llm.input_messages.N.message.*`. A message
 * is dropped when the call before held it and the call after holds no equal message (compared
 * as whole messages, each equal message of the call after matching one of the call before).
 */
import type { Db } from './db.ts';
import { countOf } from './columns.ts';

/** The most dropped messages listed; and the most characters of each message's text. */
export const MAX_DROPPED_MESSAGES = 200;
export const MAX_MESSAGE_TEXT = 4_000;

export interface ShownMessage {
  role: string;
  /** Size of the message's content, in characters. */
  chars: number;
  /** The message's text (capped at {@link MAX_MESSAGE_TEXT}); null when content was not captured. */
  text: string | null;
  /** The tool whose call or result the message holds, when it names one. */
  tool: string | null;
}

export interface CallEnd {
  traceId: string;
  spanId: string;
  tokens: number | null;
  window: number | null;
  model: string | null;
  startedAt: string | null;
}

export interface WhatWasLost {
  findingId: string;
  conversationId: string;
  runId: string;
  streamKey: string;
  kind: 'compacted' | 'lost';
  severity: string;
  summary: string;
  tokensLost: number | null;
  dropRatio: number | null;
  before: CallEnd;
  after: CallEnd;
  /** The parts that lost the most, in tokens, largest first. */
  partsLost: Array<{ part: string; name: string | null; tokens: number }>;
  /** The producer of the call after (e.g. `claude_code`, `semconv`). */
  producer: string | null;
  dropped: {
    /** True when the call before's messages were stored with their content. */
    contentCaptured: boolean;
    /** How many messages were dropped; null when content was not captured. */
    count: number | null;
    /** The dropped messages, up to {@link MAX_DROPPED_MESSAGES}. */
    messages: ShownMessage[];
    /** Characters of the dropped messages; null when content was not captured. */
    chars: number | null;
  };
  replacement: {
    kind: string;
    trigger: string | null;
    /** How the compaction was seen: `span`, `span_event`, `flag`, ... (plain words in the console). */
    evidence: string;
    tokensBefore: number | null;
    tokensAfter: number | null;
    messagesKept: number | null;
    summarySize: number | null;
    /** The summary's text, when the producer sent it and the workspace captures content. */
    summary: string | null;
  } | null;
  systemPrompt: {
    before: number | null;
    after: number | null;
    /** The unit of `before` and `after` (`chars` or `tokens`); null when they differ or are unknown. */
    unit: string | null;
    change: string | null;
    /** True when the sizes are tokens estimated from a byte count (Claude Code `system_prompt_length`). */
    estimated: boolean;
    /** False for producers that never record the system prompt's text (Claude Code). */
    recorded: boolean;
    textBefore: string | null;
    textAfter: string | null;
  };
}

type Json = unknown;

const isObj = (v: Json): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function parseJson(v: Json): Json {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as Json;
  } catch {
    return v;
  }
}

const asText = (v: Json): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);

interface ReadMessage {
  key: string;
  shown: ShownMessage;
}

function shown(role: string, text: string, tool: string | null, raw: Json): ReadMessage {
  return {
    key: `${role}\u0000${JSON.stringify(raw)}`,
    shown: { role, chars: text.length, text: text.slice(0, MAX_MESSAGE_TEXT), tool },
  };
}

/** A semconv message (`{ role, parts: [...] }`) as role, text and tool. */
function semconvMessage(m: Json): ReadMessage | null {
  if (!isObj(m)) return null;
  const role = typeof m['role'] === 'string' ? m['role'] : 'user';
  const parts = m['parts'];
  if (!Array.isArray(parts)) return shown(role, asText(m['content']), null, m);
  let tool: string | null = null;
  const texts = parts.map((p) => {
    if (!isObj(p)) return asText(p);
    if (typeof p['name'] === 'string') tool ??= p['name'];
    switch (p['type']) {
      case 'text':
      case 'reasoning':
        return asText(p['content']);
      case 'tool_call':
        return `${asText(p['name'])}(${asText(p['arguments'])})`;
      case 'tool_call_response':
        return asText(p['response'] ?? p['result']);
      default:
        return asText(p['content'] ?? p);
    }
  });
  return shown(role, texts.join('\n'), tool, m);
}

/** OpenInference `llm.input_messages.N.message.{role,content,name}` as messages, by N. */
function openInferenceMessages(attrs: Record<string, Json>): ReadMessage[] | null {
  const prefix = 'llm.input_messages.';
  const byIndex = new Map<number, Record<string, Json>>();
  for (const [key, value] of Object.entries(attrs)) {
    if (!key.startsWith(prefix)) continue;
    const dot = key.indexOf('.', prefix.length);
    const index = Number(key.slice(prefix.length, dot));
    if (dot < 0 || !Number.isInteger(index)) continue;
    const entry = byIndex.get(index) ?? {};
    entry[key.slice(dot + 1)] = value;
    byIndex.set(index, entry);
  }
  if (byIndex.size === 0) return null;
  return [...byIndex.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, m]) => {
      const role = typeof m['message.role'] === 'string' ? m['message.role'] : 'user';
      const name = typeof m['message.name'] === 'string' ? m['message.name'] : null;
      return shown(role, asText(m['message.content']), name, m);
    });
}

/** The input messages a stored span holds; null when it holds no message content. */
function inputMessages(attrs: Record<string, Json>): ReadMessage[] | null {
  const semconv = parseJson(attrs['gen_ai.input.messages']);
  if (Array.isArray(semconv)) return semconv.map(semconvMessage).filter((m) => m !== null);
  return openInferenceMessages(attrs);
}

/** The system prompt's text a stored span holds, or null. */
function systemText(attrs: Record<string, Json>): string | null {
  const raw = parseJson(attrs['gen_ai.system_instructions']);
  if (raw !== undefined) {
    if (Array.isArray(raw))
      return raw.map((p) => (isObj(p) ? asText(p['content']) : asText(p))).join('\n');
    return asText(raw);
  }
  const semconv = parseJson(attrs['gen_ai.input.messages']);
  if (Array.isArray(semconv)) {
    const system = semconv.map(semconvMessage).filter((m) => m?.shown.role === 'system');
    if (system.length > 0) return system.map((m) => m?.shown.text ?? '').join('\n');
  }
  return null;
}

/** Messages of `before` with no equal message in `after` (each message of `after` used once). */
function droppedMessages(before: ReadMessage[], after: ReadMessage[]): ShownMessage[] {
  const left = new Map<string, number>();
  for (const m of after) left.set(m.key, (left.get(m.key) ?? 0) + 1);
  const out: ShownMessage[] = [];
  for (const m of before) {
    const n = left.get(m.key) ?? 0;
    if (n > 0) left.set(m.key, n - 1);
    else if (m.shown.role !== 'system') out.push(m.shown);
  }
  return out;
}

const num = (v: Json): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: Json): string | null => (typeof v === 'string' ? v : null);

function callRef(
  v: Json,
): { traceId: string; spanId: string; tokens: number | null; window: number | null } | null {
  if (!isObj(v)) return null;
  const traceId = str(v['traceId']);
  const spanId = str(v['spanId']);
  if (traceId === null || spanId === null) return null;
  return { traceId, spanId, tokens: num(v['tokens']), window: num(v['window']) };
}

const nsToIso = (ns: string | null): string | null =>
  ns === null ? null : new Date(Number(BigInt(ns) / 1_000_000n)).toISOString();

/**
 * What was lost at the drop a `history_lost` finding reports; undefined when the finding does
 * not exist in the workspace or is of another detector.
 */
export async function loadWhatWasLost(
  db: Db,
  workspaceId: string,
  findingId: string,
): Promise<WhatWasLost | undefined> {
  if (!/^\d{1,18}$/.test(findingId)) return undefined;
  const finding = await db
    .selectFrom('findings')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', findingId)
    .where('detector', '=', 'history_lost')
    .executeTakeFirst();
  if (!finding) return undefined;
  const details = (finding.details ?? {}) as Record<string, Json>;
  const beforeRef = callRef(details['before']);
  const afterRef = callRef(details['after']) ?? {
    traceId: finding.trace_id,
    spanId: finding.span_id,
    tokens: null,
    window: null,
  };

  const keys = [beforeRef, afterRef].filter((r) => r !== null);
  const calls =
    keys.length === 0
      ? []
      : await db
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
          .where((eb) =>
            eb.or(
              keys.map((k) =>
                eb.and([eb('trace_id', '=', k.traceId), eb('span_id', '=', k.spanId)]),
              ),
            ),
          )
          .execute();
  const spans =
    keys.length === 0
      ? []
      : await db
          .selectFrom('spans')
          .select(['trace_id', 'span_id', 'attributes'])
          .where('workspace_id', '=', workspaceId)
          .where((eb) =>
            eb.or(
              keys.map((k) =>
                eb.and([eb('trace_id', '=', k.traceId), eb('span_id', '=', k.spanId)]),
              ),
            ),
          )
          .execute();
  const callOf = (r: { traceId: string; spanId: string } | null) =>
    r ? calls.find((c) => c.trace_id === r.traceId && c.span_id === r.spanId) : undefined;
  const attrsOf = (r: { traceId: string; spanId: string } | null): Record<string, Json> => {
    const row = r
      ? spans.find((s) => s.trace_id === r.traceId && s.span_id === r.spanId)
      : undefined;
    return isObj(row?.attributes) ? row.attributes : {};
  };
  const beforeCall = callOf(beforeRef);
  const afterCall = callOf(afterRef);
  const end = (
    r: { traceId: string; spanId: string; tokens: number | null; window: number | null } | null,
    call: typeof beforeCall,
  ): CallEnd => ({
    traceId: r?.traceId ?? '',
    spanId: r?.spanId ?? '',
    tokens: r?.tokens ?? null,
    window: r?.window ?? null,
    model: call ? (call.response_model ?? call.request_model) : null,
    startedAt: call ? nsToIso(String(call.start_ns)) : null,
  });

  // the messages: text only when both calls' spans kept their content
  const beforeAttrs = attrsOf(beforeRef);
  const afterAttrs = attrsOf(afterRef);
  const beforeMessages = inputMessages(beforeAttrs);
  const afterMessages = inputMessages(afterAttrs);
  const captured = beforeMessages !== null && afterMessages !== null;
  const dropped = captured ? droppedMessages(beforeMessages, afterMessages) : [];

  // what replaced them: the compaction of the stream (or the conversation) between the calls
  let replacement: WhatWasLost['replacement'] = null;
  if (beforeCall && afterCall) {
    const compaction = await db
      .selectFrom('compactions')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('conversation_id', '=', finding.conversation_id)
      .where('stream_key', 'in', [finding.stream_key, finding.conversation_id])
      .where('at_ns', '>', String(beforeCall.start_ns))
      .where('at_ns', '<=', String(afterCall.start_ns))
      .orderBy('at_ns', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (compaction) {
      replacement = {
        kind: compaction.kind,
        trigger: compaction.trigger,
        evidence: compaction.evidence,
        tokensBefore: countOf(compaction.tokens_before),
        tokensAfter: countOf(compaction.tokens_after),
        messagesKept: compaction.messages_kept,
        summarySize: compaction.summary_size,
        summary: compaction.summary,
      };
    }
  }
  const marker = details['marker'];
  if (!replacement && isObj(marker)) {
    replacement = {
      kind: str(marker['kind']) ?? 'other',
      trigger: str(marker['trigger']),
      evidence: str(marker['evidence']) ?? 'flag',
      tokensBefore: num(marker['tokensBefore']),
      tokensAfter: num(marker['tokensAfter']),
      messagesKept: null,
      summarySize: null,
      summary: null,
    };
  }

  const producer = afterCall?.producer ?? beforeCall?.producer ?? null;
  const partsOf = (call: typeof beforeCall) =>
    isObj(call?.parts) ? (call.parts as Record<string, Json>) : null;
  const estimated = [partsOf(beforeCall), partsOf(afterCall)].some(
    (p) => p?.['estimatedFrom'] === 'bytes',
  );
  const partsLost = Array.isArray(details['partsLost'])
    ? details['partsLost'].filter(isObj).map((p) => ({
        part: str(p['part']) ?? 'other',
        name: str(p['name']),
        tokens: num(p['tokens']) ?? 0,
      }))
    : [];

  return {
    findingId: String(finding.id),
    conversationId: finding.conversation_id,
    runId: finding.run_id,
    streamKey: finding.stream_key,
    kind: finding.kind === 'compacted' ? 'compacted' : 'lost',
    severity: finding.severity,
    summary: finding.summary,
    tokensLost: num(details['tokensLost']),
    dropRatio: num(details['dropRatio']),
    before: end(beforeRef, beforeCall),
    after: end(afterRef, afterCall),
    partsLost,
    producer,
    dropped: {
      contentCaptured: captured,
      count: captured ? dropped.length : null,
      messages: dropped.slice(0, MAX_DROPPED_MESSAGES),
      chars: captured ? dropped.reduce((n, m) => n + m.chars, 0) : null,
    },
    replacement,
    systemPrompt: {
      before: num(details['systemPromptBefore']),
      after: num(details['systemPromptAfter']),
      unit: str(details['systemPromptUnit']),
      change: str(details['systemPromptChange']),
      estimated,
      recorded: producer !== 'claude_code',
      textBefore: systemText(beforeAttrs),
      textAfter: systemText(afterAttrs),
    },
  };
}
