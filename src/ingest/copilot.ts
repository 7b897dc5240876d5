/**
 * GitHub Copilot CLI (`@github/copilot` 1.0.102, `service.name` `github-copilot`, scope
 * `github.copilot`; ../shared/agents.md): its spans are GenAI semconv (`invoke_agent` per run,
 * `chat <model>` per model request, `execute_tool <name>` per tool call), read by ./spans.ts with
 * these differences, applied to the calls of one batch:
 * - `gen_ai.input.messages` holds only the messages new since the previous call (the tool
 *   results the model gets at this call), not the whole history; its tool results name no tool
 *   (`tool_call_response` with an id): their names come from the `execute_tool` spans of the
 *   batch (`gen_ai.tool.call.id`) or the earlier calls' output tool calls. So a call's parts are
 *   what is new at it, as estimated tokens (`source: 'tool_spans'`), which the detectors hold per
 *   stream until a compaction or a fall in usage (src/model/held-results.ts). Without message
 *   content the `execute_tool` spans' results since the previous call give the same.
 * - Its window (`github.copilot.token_limit` on the `invoke_agent` span) is read by
 *   ./agent-windows.ts; its compaction is the `github.copilot.session.compaction_complete` event
 *   ({pre_tokens, post_tokens, ...}); `compaction_start` is the same compaction starting and
 *   is not counted again; the summary comes again as a compaction part of the next call's
 *   messages, and `gen_ai.conversation.compacted=true` is repeated on every call of the run
 *   after one: one row is kept (`oneCompaction`).
 * - A cut tool call: Copilot clears its arguments and runs the tool with `{}`; the
 *   `execute_tool` span that follows the cut call (before the stream's next call) with
 *   `error.type` `ToolError` names the real tool when the output content was not sent.
 * - The summary call of its compaction is not exported.
 */
import type { Compaction, LlmCall, ReportedWindow, ToolResult } from '../model/calls.ts';
import { copilotCli } from '../model/agents/copilot-cli.ts';
import { recognizes } from '../model/agents/index.ts';
import type { Span } from '../model/telemetry.ts';
import { cmpNs, json, str } from './attrs.ts';
import { fromSemconv, systemInstructionsSize } from './messages.ts';
import { partsFromBytes } from './tool-parts.ts';

/** The producer id of GitHub Copilot CLI's calls. */
export const COPILOT_PRODUCER = copilotCli.recognize.producer;

/** True for a span of GitHub Copilot CLI's own telemetry (its profile's `recognize`). */
export function isCopilotSpan(span: Span): boolean {
  return recognizes(copilotCli.recognize, span);
}

const isToolSpan = (s: Span) =>
  s.attributes['gen_ai.operation.name'] === 'execute_tool' || s.name.startsWith('execute_tool ');

/** The tool an `execute_tool` span ran: `gen_ai.tool.name`, else the span name's last word. */
function toolNameOf(s: Span): string {
  return str(s.attributes, 'gen_ai.tool.name') ?? s.name.split(' ').at(-1) ?? s.name;
}

/** Tool call id → tool name, from the batch's tool spans and output tool calls. */
function toolNames(spans: readonly Span[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const s of spans) {
    if (isToolSpan(s)) {
      const id = str(s.attributes, 'gen_ai.tool.call.id');
      if (id !== null) names.set(id, toolNameOf(s));
      continue;
    }
    const out = s.attributes['gen_ai.output.messages'];
    if (out === undefined) continue;
    for (const m of fromSemconv(json(out)) ?? [])
      for (const b of m.blocks)
        if (b.kind === 'tool_call' && b.id !== null && b.name !== null && !names.has(b.id))
          names.set(b.id, b.name);
  }
  return names;
}

/** Tool result characters by tool name from a call's (new) input messages; null when none were sent. */
function messageToolChars(
  span: Span,
  names: ReadonlyMap<string, string>,
): Record<string, number> | null {
  const raw = span.attributes['gen_ai.input.messages'];
  if (raw === undefined) return null;
  const msgs = fromSemconv(json(raw));
  if (msgs === null) return null;
  const chars: Record<string, number> = {};
  for (const m of msgs)
    for (const b of m.blocks) {
      if (b.kind !== 'tool_result') continue;
      const name = b.name ?? (b.id !== null ? names.get(b.id) : undefined) ?? 'unknown';
      chars[name] = (chars[name] ?? 0) + b.size;
    }
  return chars;
}

/**
 * Rewrites the Copilot CLI calls of one batch (see the module doc): producer and version, parts
 * as what is new at each call (estimated tokens, tools named), a cut tool call named from the
 * tool span that ran it; and keeps one `gen_ai.conversation.compacted` compaction per stream.
 */
export function applyCopilotFacts(
  spans: readonly Span[],
  calls: LlmCall[],
  toolResults: readonly ToolResult[],
  compactions: Compaction[],
): void {
  const copilotSpans = spans.filter(isCopilotSpan);
  if (copilotSpans.length === 0) return;
  const byId = new Map(copilotSpans.map((s) => [s.spanId, s]));
  const names = toolNames(copilotSpans);
  const toolSpans = copilotSpans.filter(isToolSpan);
  const resultsBySpan = new Map(toolResults.map((r) => [r.spanId, r]));

  // the Copilot calls of each stream, in start order
  const streams = new Map<string, number[]>();
  calls.forEach((c, i) => {
    if (!byId.has(c.spanId)) return;
    let l = streams.get(c.streamKey);
    if (l === undefined) streams.set(c.streamKey, (l = []));
    l.push(i);
  });
  for (const indexes of streams.values()) {
    indexes.sort((a, b) => cmpNs(calls[a]!.startNs, calls[b]!.startNs));
    indexes.forEach((ci, k) => {
      const call = calls[ci]!;
      const span = byId.get(call.spanId)!;
      const prevStart = k === 0 ? null : calls[indexes[k - 1]!]!.startNs;
      const nextStart = k + 1 < indexes.length ? calls[indexes[k + 1]!]!.startNs : null;
      const a = span.attributes;
      const version = span.resource['service.version'];
      const sysRaw = a['gen_ai.system_instructions'];
      const system =
        sysRaw === undefined || sysRaw === null
          ? null
          : systemInstructionsSize(json(sysRaw), sysRaw);
      // the tool spans that ran between the previous call and this one, in this trace
      const before = toolSpans.filter(
        (t) =>
          t.traceId === call.traceId &&
          cmpNs(t.endTimeUnixNano, call.startNs) <= 0 &&
          (prevStart === null || cmpNs(t.startTimeUnixNano, prevStart) > 0),
      );
      let chars = messageToolChars(span, names);
      if (chars === null) {
        chars = {};
        for (const t of before) {
          const size = resultsBySpan.get(t.spanId)?.resultSize ?? null;
          if (size === null) {
            chars = null;
            break;
          }
          chars[toolNameOf(t)] = (chars[toolNameOf(t)] ?? 0) + size;
        }
        if (chars !== null && before.length === 0 && system === null) chars = null;
      }
      let next: LlmCall = {
        ...call,
        producer: COPILOT_PRODUCER,
        agentVersion: typeof version === 'string' && version !== '' ? version : null,
        parts: chars === null ? null : partsFromBytes(chars, system),
      };
      // a cut tool call whose output was not sent: the tool span that ran it with `{}`
      if (call.finishClass === 'output_limit' && next.outputToolCall !== true) {
        const ran = toolSpans.find(
          (t) =>
            t.traceId === call.traceId &&
            cmpNs(t.startTimeUnixNano, call.endNs) >= 0 &&
            (nextStart === null || cmpNs(t.startTimeUnixNano, nextStart) < 0) &&
            t.attributes['error.type'] === 'ToolError',
        );
        if (ran !== undefined)
          next = { ...next, outputToolCall: true, outputToolName: toolNameOf(ran) };
      }
      calls[ci] = next;
    });
  }
  oneCompaction(byId, compactions);
}

/**
 * One compaction is one row: Copilot marks it three times (the `compaction_complete` event with
 * its numbers, the summary as a compaction part of the next call's new messages, and
 * `gen_ai.conversation.compacted` on every later call). The event is kept (with the part's
 * summary); without it in the batch, the part, else the first flagged call of the stream. The
 * flag stays on the calls (it explains a drop there).
 */
function oneCompaction(byId: ReadonlyMap<string, Span>, compactions: Compaction[]): void {
  const ours = compactions.filter((c) => c.spanId !== null && byId.has(c.spanId));
  if (ours.length < 2) return;
  const events = new Map<string, Compaction>();
  for (const c of ours) if (c.evidence === 'span_event') events.set(c.traceId ?? '', c);
  const parts = new Set(ours.filter((c) => c.evidence === 'message_part').map((c) => c.streamKey));
  const flagged = new Set<string>();
  const drop = new Set<Compaction>();
  for (const c of [...ours].sort((a, b) => cmpNs(a.atNs, b.atNs))) {
    if (c.evidence !== 'flag' && c.evidence !== 'message_part') continue;
    const event = events.get(c.traceId ?? '');
    if (event !== undefined) {
      if (c.evidence === 'message_part' && event.summarySize === null) {
        event.summarySize = c.summarySize;
        event.summary = c.summary;
      }
      drop.add(c);
    } else if (c.evidence === 'flag') {
      if (parts.has(c.streamKey) || flagged.has(c.streamKey)) drop.add(c);
      flagged.add(c.streamKey);
    }
  }
  if (drop.size === 0) return;
  const kept = compactions.filter((c) => !drop.has(c));
  compactions.splice(0, compactions.length, ...kept);
}

/**
 * The window Copilot reported for its calls of this batch (`token_limit` on the run's
 * `invoke_agent` span, ./agent-windows.ts), as reports kept per conversation and model
 * (src/store/agent-windows.ts): its exporter may send a run's calls in batches before the
 * `invoke_agent` span, which ends last; those calls, and the later ones, get the window too.
 */
export function copilotReportedWindows(
  workspaceId: string,
  calls: readonly LlmCall[],
): ReportedWindow[] {
  const out: ReportedWindow[] = [];
  for (const c of calls) {
    const model = c.responseModel ?? c.requestModel;
    if (c.producer !== COPILOT_PRODUCER || c.windowSource !== 'agent' || c.contextWindow === null)
      continue;
    if (model === null || c.conversationSynthetic) continue;
    out.push({
      workspaceId,
      conversationId: c.conversationId,
      model,
      window: c.contextWindow,
      reporter: COPILOT_PRODUCER,
      atNs: c.endNs,
    });
  }
  return out;
}
