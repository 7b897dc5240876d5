/**
 * "What was lost" at one drop of a conversation (a `history_lost` finding): the tokens lost and
 * the parts that lost the most (from the finding), the messages the call before held and the
 * call after did not (their text only when the workspace kept the content of both calls'
 * spans; otherwise nothing but sizes), what replaced them (the compaction and its summary
 * when the producer sent one) and the system prompt before and after.
 *
 * A message is dropped when the call before held it and the call after holds no equal message
 * (compared as whole messages, each equal message of the call after matching one of the call
 * before). The rows are src/store/drop-rows.ts; the messages are read by src/ingest/message-text.ts.
 */
import { isObj } from '../ingest/attrs.ts';
import {
  inputMessages,
  storedMessageAttributes,
  systemText,
  type ReadMessage,
  type ShownMessage,
} from '../ingest/message-text.ts';
import type { Compaction } from '../model/calls.ts';
import { nsToIso } from '../model/telemetry.ts';
import { compactionBetween, dropEnds, type CallKey, type DropEnd } from '../store/drop-rows.ts';
import type { Db } from '../store/db.ts';
import { getFinding } from '../store/findings.ts';
import type { CallEnd, WhatWasLost } from './answers/what-was-lost.ts';

export type { ShownMessage } from '../ingest/message-text.ts';

/** The most dropped messages listed. */
export const MAX_DROPPED_MESSAGES = 200;

export type { CallEnd, WhatWasLost } from './answers/what-was-lost.ts';

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Messages of `before` with no equal message in `after` (each message of `after` used once). */
export function droppedMessages(before: ReadMessage[], after: ReadMessage[]): ShownMessage[] {
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

type CallRef = CallKey & { tokens: number | null; window: number | null };

function callRef(v: unknown): CallRef | null {
  if (!isObj(v)) return null;
  const traceId = str(v['traceId']);
  const spanId = str(v['spanId']);
  if (traceId === null || spanId === null) return null;
  return { traceId, spanId, tokens: num(v['tokens']), window: num(v['window']) };
}

const endOf = (r: CallRef | null, end: DropEnd | undefined): CallEnd => ({
  traceId: r?.traceId ?? '',
  spanId: r?.spanId ?? '',
  tokens: r?.tokens ?? null,
  window: r?.window ?? null,
  model: end?.call?.model ?? null,
  startedAt: end?.call ? nsToIso(end.call.startNs) : null,
});

/** What replaced the dropped messages: the compaction between the calls, else the finding's marker. */
function replacementOf(
  compaction: Compaction | undefined,
  marker: unknown,
): WhatWasLost['replacement'] {
  if (compaction) {
    return {
      kind: compaction.kind,
      trigger: compaction.trigger,
      evidence: compaction.evidence,
      tokensBefore: compaction.tokensBefore,
      tokensAfter: compaction.tokensAfter,
      messagesKept: compaction.messagesKept,
      summarySize: compaction.summarySize,
      summary: compaction.summary,
    };
  }
  if (!isObj(marker)) return null;
  return {
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

/**
 * What was lost at the drop a `history_lost` finding reports; undefined when the finding does
 * not exist in the workspace or is of another detector.
 */
export async function loadWhatWasLost(
  db: Db,
  workspaceId: string,
  findingId: string,
): Promise<WhatWasLost | undefined> {
  const finding = await getFinding(db, workspaceId, findingId);
  if (!finding || finding.detector !== 'history_lost') return undefined;
  const details = finding.details;
  const beforeRef = callRef(details['before']);
  const afterRef = callRef(details['after']) ?? {
    traceId: finding.traceId,
    spanId: finding.spanId,
    tokens: null,
    window: null,
  };
  const ends = await dropEnds(
    db,
    workspaceId,
    [beforeRef, afterRef].filter((r) => r !== null),
  );
  const endAt = (r: CallKey | null) =>
    r ? ends.find((e) => e.traceId === r.traceId && e.spanId === r.spanId) : undefined;
  const before = endAt(beforeRef);
  const after = endAt(afterRef);
  const beforeAttrs = storedMessageAttributes(before?.inputMessages);
  const afterAttrs = storedMessageAttributes(after?.inputMessages);

  // the messages: text only when both calls' spans kept their content
  const beforeMessages = inputMessages(beforeAttrs);
  const afterMessages = inputMessages(afterAttrs);
  const captured = beforeMessages !== null && afterMessages !== null;
  const dropped = captured ? droppedMessages(beforeMessages, afterMessages) : [];

  // what replaced them: the compaction of the stream (or the conversation) between the calls
  const compaction =
    before?.call && after?.call
      ? await compactionBetween(db, workspaceId, {
          conversationId: finding.conversationId,
          streamKey: finding.streamKey,
          afterNs: before.call.startNs,
          uptoNs: after.call.startNs,
        })
      : undefined;

  const producer = after?.call?.producer ?? before?.call?.producer ?? null;
  const estimated = [before, after].some(
    (end) => isObj(end?.call?.parts) && end.call.parts['estimatedFrom'] === 'bytes',
  );
  const partsLost = Array.isArray(details['partsLost'])
    ? details['partsLost'].filter(isObj).map((p) => ({
        part: str(p['part']) ?? 'other',
        name: str(p['name']),
        tokens: num(p['tokens']) ?? 0,
      }))
    : [];

  return {
    findingId: finding.id,
    conversationId: finding.conversationId,
    runId: finding.runId,
    streamKey: finding.streamKey,
    kind: finding.kind === 'compacted' ? 'compacted' : 'lost',
    severity: finding.severity,
    summary: finding.summary,
    tokensLost: num(details['tokensLost']),
    dropRatio: num(details['dropRatio']),
    before: endOf(beforeRef, before),
    after: endOf(afterRef, after),
    partsLost,
    producer,
    dropped: {
      contentCaptured: captured,
      count: captured ? dropped.length : null,
      messages: dropped.slice(0, MAX_DROPPED_MESSAGES),
      chars: captured ? dropped.reduce((n, m) => n + m.chars, 0) : null,
    },
    replacement: replacementOf(compaction, details['marker']),
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
