/**
 * Message content sent as log records next to the span (OTel semconv events, e.g.
 * `@opentelemetry/instrumentation-openai`): per-message events `gen_ai.system.message`,
 * `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message`, `gen_ai.choice`
 * (semconv ≤1.36), and `gen_ai.client.inference.operation.details` carrying
 * `gen_ai.input.messages` / `gen_ai.output.messages` (≥1.37). The records of one call share
 * its trace and span id; this module folds them into the call's parts and output facts, for
 * the store to apply to the span-derived call with the same ids.
 */
import type { CallContent } from '../model/calls.ts';
import type { LogRecord } from '../model/telemetry.ts';
import { contentSize, field, isObj, json } from './attrs.ts';
import { fromProviderMessage, fromSemconv, systemInstructionsSize, type Msg } from './messages.ts';
import { eventNameOf } from './events.ts';
import { classifyFinishReason } from './finish.ts';
import { partsFromMessages } from './parts.ts';

const ROLE_EVENTS: ReadonlyMap<string, string> = new Map([
  ['gen_ai.system.message', 'system'],
  ['gen_ai.user.message', 'user'],
  ['gen_ai.assistant.message', 'assistant'],
  ['gen_ai.tool.message', 'tool'],
]);

interface Acc {
  traceId: string;
  spanId: string;
  input: Msg[];
  extraSystem: number | null;
  hasContent: boolean;
  outputToolCall: boolean;
  outputToolName: string | null;
  finishReasonRaw: string | null;
}

function noteOutput(acc: Acc, msgs: readonly Msg[] | null): void {
  if (msgs === null) return;
  for (const m of msgs) {
    for (const b of m.blocks) {
      if (b.kind !== 'tool_call') continue;
      acc.outputToolCall = true;
      acc.outputToolName = b.name ?? acc.outputToolName;
    }
  }
}

/** True for the names this module reads. */
export function isContentEventName(name: string): boolean {
  return (
    ROLE_EVENTS.has(name) ||
    name === 'gen_ai.choice' ||
    name === 'gen_ai.client.inference.operation.details'
  );
}

/**
 * Folds content log records into one `CallContent` per (trace id, span id), in record order.
 * Records without a span id, or of other events, are ignored. `names` are the records' event
 * names when the caller already has them (`eventNameOf`). The store can also call this on the
 * stored records of a call whose span arrived after its logs.
 */
export function callContentFromLogs(
  logs: readonly LogRecord[],
  names: readonly string[] = logs.map(eventNameOf),
): CallContent[] {
  const byCall = new Map<string, Acc>();
  logs.forEach((log, i) => {
    const name = names[i] ?? '';
    if (log.traceId === null || log.spanId === null || !isContentEventName(name)) return;
    const key = `${log.traceId}:${log.spanId}`;
    let acc = byCall.get(key);
    if (acc === undefined) {
      acc = {
        traceId: log.traceId,
        spanId: log.spanId,
        input: [],
        extraSystem: null,
        hasContent: false,
        outputToolCall: false,
        outputToolName: null,
        finishReasonRaw: null,
      };
      byCall.set(key, acc);
    }
    const body = isObj(log.body) ? log.body : {};
    const role = ROLE_EVENTS.get(name);
    if (role !== undefined) {
      if (body['content'] !== undefined) acc.hasContent = true;
      if (role === 'tool') {
        acc.input.push({
          role,
          blocks: [
            {
              kind: 'tool_result',
              size: contentSize(body['content']),
              id: field(body, 'id'),
              name: null,
              text: null,
            },
          ],
        });
      } else {
        acc.input.push(fromProviderMessage({ ...body, role }));
      }
    } else if (name === 'gen_ai.choice') {
      const fr = body['finish_reason'];
      if (typeof fr === 'string' && fr !== '' && acc.finishReasonRaw === null)
        acc.finishReasonRaw = fr;
      const msg = body['message'];
      if (isObj(msg)) noteOutput(acc, [fromProviderMessage({ ...msg, role: 'assistant' })]);
    } else {
      const a = log.attributes;
      const input = a['gen_ai.input.messages'];
      if (input !== undefined) {
        const msgs = fromSemconv(json(input));
        if (msgs !== null) {
          acc.input.push(...msgs);
          if (msgs.some((m) => m.blocks.some((b) => b.size > 0))) acc.hasContent = true;
        }
      }
      const sys = a['gen_ai.system_instructions'];
      if (sys !== undefined && sys !== null) {
        acc.extraSystem = systemInstructionsSize(json(sys), sys);
        acc.hasContent = true;
      }
      const output = a['gen_ai.output.messages'];
      if (output !== undefined) {
        const parsed = json(output);
        noteOutput(acc, fromSemconv(parsed));
        if (Array.isArray(parsed) && acc.finishReasonRaw === null) {
          for (const m of parsed) {
            const fr = isObj(m) ? m['finish_reason'] : undefined;
            if (typeof fr === 'string' && fr !== '') {
              acc.finishReasonRaw = fr;
              break;
            }
          }
        }
      }
    }
  });
  return [...byCall.values()].map((acc) => ({
    traceId: acc.traceId,
    spanId: acc.spanId,
    parts: acc.hasContent ? partsFromMessages(acc.input, acc.extraSystem) : null,
    outputToolCall: acc.outputToolCall,
    outputToolName: acc.outputToolName,
    finishReasonRaw: acc.finishReasonRaw,
    finishClass: classifyFinishReason(acc.finishReasonRaw),
  }));
}
