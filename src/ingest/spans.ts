/**
 * Span batch → kept spans (with roles) + LLM calls, tool results and compactions.
 * Pure: the same batch always gives the same rows. Everything here is per batch; links
 * between spans (aggregates, inherited conversation ids, tool spans joined to the next call)
 * only see spans of the same batch.
 */
import type {
  ConversationProject,
  Compaction,
  InputParts,
  LlmCall,
  Normalized,
  SpanRole,
  ToolResult,
} from '../model/calls.ts';
import { AGENT_PROFILES, agentOfSpan, type AgentProfile } from '../model/agents/index.ts';
import type { Attributes, Span } from '../model/telemetry.ts';
import { runSliced, runWhole, Slices } from '../model/slices.ts';
import { bool, cmpNs, firstNum, firstStr, json, num, resultAttrSize, str } from './attrs.ts';
import { claudeCodeToolName } from './claude-tools.ts';
import {
  compaction,
  isCompactionEventName,
  readCompactionDetails,
  type CompactionDetails,
} from './compactions.ts';
import { stripAttributes, stripEvents } from './content.ts';
import { claudeCodeAgentId, conversationIdOf, sideCallOf, streamKeyOf } from './conversation.ts';
import { isCodexResource, normalizeCodexSpans } from './codex.ts';
import { applyCopilotFacts, COPILOT_PRODUCER } from './copilot.ts';
import {
  applyOpenCode,
  isOpenCodeResource,
  keepOpenCodeSpans,
  openCodeSideCall,
  OPENCODE_PRODUCER,
} from './opencode.ts';
import { classifyFinishReason, overflowError, readFinishReason } from './finish.ts';
import { GEMINI_PRODUCER, geminiSpanFacts } from './gemini.ts';
import { QWEN_PRODUCER, qwenSpanFacts } from './qwen.ts';
import { analyzeContent } from './parts.ts';
import { messageAttributes } from './message-text.ts';
import { partsFromInputSizes } from './context-sizes.ts';
import { partsFromBytes } from './tool-parts.ts';
import { projectOf, projectReport, SESSION_SPAN_NAME } from './projects.ts';
import { classifyRole, resolveAggregates, type RoleNode, type RoleRule } from './roles.ts';
import {
  contextUsage,
  maxOutputTokens,
  provider,
  readRawUsage,
  requestModel,
  responseModel,
} from './tokens.ts';
import type { NormalizeContext } from './types.ts';
import { callReportedWindow, eventReportedWindow } from './agent-windows.ts';
import { agentOfResource, reportedWindowFor } from './windows.ts';

/** The result of normalizing one batch of spans. */
export interface SpanBatch {
  /** Spans of GenAI interest with their role; content removed when the workspace does not capture it. */
  keep: Array<Span & { role: SpanRole }>;
  /** Spans of no GenAI interest, counted and dropped. */
  dropped: number;
  normalized: Normalized;
}

interface Node extends RoleNode {
  span: Span;
  rule: RoleRule;
  /** The agent whose own telemetry the span is (its profile's `recognize`), if any. */
  agent: AgentProfile | undefined;
}

/** True when any attribute key is GenAI-flavoured (`gen_ai.`, `llm.`, `ai.`, `claude_code`). */
function hasGenAiKey(attrs: Attributes): boolean {
  for (const k in attrs) {
    const c = k.charCodeAt(0);
    if (c === 103 /* g */) {
      if (k.startsWith('gen_ai.')) return true;
    } else if (c === 108 /* l */) {
      if (k.startsWith('llm.') || k.startsWith('langfuse.observation.')) return true;
    } else if (c === 97 /* a */) {
      if (k.startsWith('ai.')) return true;
    } else if (c === 99 /* c */) {
      if (k.startsWith('claude_code')) return true;
    } else if (c === 111 /* o */) {
      if (k === 'openinference.span.kind') return true;
    }
  }
  return false;
}

/** A span of Claude Code's own telemetry (`claude_code*`): its sub-agents and tools are read apart. */
const isClaudeCode = (n: Node) => n.agent?.id === 'claude_code';

/**
 * The producer of a call's span: an agent's, recognized by the profiles (src/model/agents/, in
 * their order), else the library producer's by the role rule and attributes.
 */
function producerOf(n: Node): string {
  if (n.agent !== undefined) return n.agent.recognize.producer;
  const span = n.span;
  const rule = n.rule;
  const a = span.attributes;
  if (rule === 'openinference' || a['openinference.span.kind'] !== undefined)
    return 'openinference';
  if (rule === 'vercel' || span.name.startsWith('ai.')) return 'vercel';
  if (rule === 'langfuse') return 'langfuse';
  if (
    rule === 'traceloop' ||
    a['llm.request.type'] !== undefined ||
    a['traceloop.span.kind'] !== undefined
  ) {
    return 'traceloop';
  }
  if (rule === 'semconv') return 'semconv';
  return 'generic';
}

const TOOL_NAME_KEYS = [
  'gen_ai.tool.name',
  'tool_name',
  'ai.toolCall.name',
  'tool.name',
  'traceloop.entity.name',
];
const TOOL_ID_KEYS = [
  'gen_ai.tool.call.id',
  'tool_use_id',
  'ai.toolCall.id',
  'tool.id',
  'tool_call.id',
];
const TOOL_RESULT_KEYS = [
  'gen_ai.tool.call.result',
  'ai.toolCall.result',
  'output.value',
  'traceloop.entity.output',
  'gcp.vertex.agent.tool_response',
  'langfuse.observation.output',
];

/** Resolves conversation, agent and run for spans of one batch, with per-trace memo. */
class Grouping {
  private readonly traceConv = new Map<string, string>();

  constructor(
    private readonly byId: ReadonlyMap<string, Node>,
    nodes: readonly Node[],
  ) {
    for (const n of nodes) {
      if (this.traceConv.has(n.traceId)) continue;
      const c = conversationIdOf(n.span.attributes, n.agent?.telemetry?.conversationKeys);
      if (c !== null) this.traceConv.set(n.traceId, c);
    }
  }

  private parentOf(n: Node): Node | undefined {
    if (n.parentSpanId === null) return undefined;
    const p = this.byId.get(n.parentSpanId);
    return p !== undefined && p.traceId === n.traceId ? p : undefined;
  }

  /** §9.2: own attributes, ancestors, any span of the trace, resource, else the trace id (synthetic). */
  conversation(n: Node): { id: string; synthetic: boolean } {
    const keys = n.agent?.telemetry?.conversationKeys;
    let cur: Node | undefined = n;
    for (let i = 0; cur !== undefined && i < 256; i++) {
      const c = conversationIdOf(cur.span.attributes, keys);
      if (c !== null) return { id: c, synthetic: false };
      cur = this.parentOf(cur);
    }
    const t = this.traceConv.get(n.traceId);
    if (t !== undefined) return { id: t, synthetic: false };
    const r = conversationIdOf(n.span.resource, keys);
    if (r !== null) return { id: r, synthetic: false };
    return { id: n.traceId, synthetic: true };
  }

  /**
   * Sub-agent identity: Claude Code `agent_id` (own or nearest ancestor); else the innermost
   * `gen_ai.agent.id` of the ancestor chain when the chain holds more than one distinct id
   * (the outermost agent is the main thread).
   */
  agent(n: Node, claudeCode: boolean): string | null {
    let cur: Node | undefined = n;
    let innermost: string | null = null;
    let distinct = 0;
    for (let i = 0; cur !== undefined && i < 256; i++) {
      const a = cur.span.attributes;
      if (claudeCode) {
        const id = claudeCodeAgentId(a);
        if (id !== null) return id;
      } else {
        const id = str(a, 'gen_ai.agent.id');
        if (id !== null && id !== innermost) {
          if (innermost === null) innermost = id;
          distinct++;
        }
      }
      cur = this.parentOf(cur);
    }
    return distinct >= 2 ? innermost : null;
  }
}

/**
 * Normalizes one batch of decoded spans (conventions §9, DESIGN §5): roles, aggregates,
 * LLM calls with usage, window, finish reason and parts; tool results; compactions. Spans of
 * no GenAI interest are counted in `dropped`.
 */
export function normalizeSpans(spans: readonly Span[], ctx: NormalizeContext): SpanBatch {
  return runWhole(normalizeSteps(spans, ctx));
}

/**
 * As normalizeSpans, giving the event loop a turn whenever a slice is spent (../model/slices.ts):
 * one large batch does not hold up every other request.
 */
export function normalizeSpansSliced(
  spans: readonly Span[],
  ctx: NormalizeContext,
  slices = new Slices(),
): Promise<SpanBatch> {
  return runSliced(normalizeSteps(spans, ctx), slices);
}

function* normalizeSteps(spans: readonly Span[], ctx: NormalizeContext): Steps<SpanBatch> {
  // OpenCode: its internal spans dropped first, its AI SDK spans put right after (./opencode.ts)
  if (!spans.some((s) => isOpenCodeResource(s.resource)))
    return yield* normalizeProducerSteps(spans, ctx);
  const openCode = keepOpenCodeSpans(spans);
  const batch = yield* normalizeProducerSteps(openCode.kept, ctx);
  return {
    ...batch,
    dropped: batch.dropped + openCode.dropped,
    normalized: applyOpenCode(batch.normalized, openCode.kept, ctx),
  };
}

function* normalizeProducerSteps(spans: readonly Span[], ctx: NormalizeContext): Steps<SpanBatch> {
  // Codex's spans follow their own rules (./codex.ts)
  if (!spans.some((s) => isCodexResource(s.resource)))
    return yield* normalizeOtherSpans(spans, ctx);
  const codex = normalizeCodexSpans(
    spans.filter((s) => isCodexResource(s.resource)),
    ctx,
  );
  const rest = yield* normalizeOtherSpans(
    spans.filter((s) => !isCodexResource(s.resource)),
    ctx,
  );
  const [a, b] = [rest.normalized, codex.normalized];
  return {
    keep: [...rest.keep, ...codex.keep],
    dropped: rest.dropped + codex.dropped,
    normalized: {
      calls: [...a.calls, ...b.calls],
      toolResults: [...a.toolResults, ...b.toolResults],
      compactions: [...a.compactions, ...b.compactions],
      projects: [...(a.projects ?? []), ...(b.projects ?? [])],
    },
  };
}

type Steps<T> = Generator<void, T>;

/** Pauses after each span (../model/slices.ts). */
function* normalizeOtherSpans(spans: readonly Span[], ctx: NormalizeContext): Steps<SpanBatch> {
  const nodes: Node[] = [];
  const byId = new Map<string, Node>();
  for (const span of spans) {
    const d = classifyRole(span.name, span.attributes);
    const n: Node = {
      traceId: span.traceId,
      spanId: span.spanId,
      parentSpanId: span.parentSpanId,
      role: d.role,
      aggregate: false,
      span,
      rule: d.rule,
      agent: agentOfSpan(span),
    };
    nodes.push(n);
    byId.set(span.spanId, n);
    yield;
  }
  resolveAggregates(nodes, byId);
  const grouping = new Grouping(byId, nodes);

  const keep: Array<Span & { role: SpanRole }> = [];
  const calls: LlmCall[] = [];
  const toolResults: ToolResult[] = [];
  const compactions: Compaction[] = [];
  const projects: ConversationProject[] = [];
  let dropped = 0;

  for (const n of nodes) {
    const span = n.span;
    const attrs = span.attributes;
    const interesting =
      n.role !== 'other' ||
      n.aggregate ||
      span.name.startsWith('claude_code') ||
      span.name === SESSION_SPAN_NAME ||
      hasGenAiKey(attrs) ||
      (span.events.length > 0 && span.events.some((e) => isCompactionEventName(e.name)));
    yield;
    if (!interesting) {
      dropped++;
      continue;
    }
    const needsGrouping =
      n.role === 'llm_call' ||
      n.role === 'tool' ||
      n.role === 'compaction' ||
      span.name === SESSION_SPAN_NAME ||
      span.events.length > 0;
    if (needsGrouping) {
      const conv = grouping.conversation(n);
      const agentId = grouping.agent(n, isClaudeCode(n));
      const streamKey = streamKeyOf(conv.id, agentId);
      // agents that make a trace per prompt or per call (Claude Code, Gemini CLI, Qwen Code): the session is the run
      const runId =
        n.agent?.telemetry?.runIsSession === true && !conv.synthetic ? conv.id : span.traceId;
      const where = { conv, agentId, streamKey, runId };
      if (!conv.synthetic)
        projects.push(
          ...projectReport(conv.id, projectOf(attrs, span.resource), span.endTimeUnixNano),
        );
      if (n.role === 'llm_call') {
        calls.push(buildCall(n, where, ctx, compactions));
      } else if (n.role === 'tool') {
        const tr = buildToolResult(n, where, ctx.workspaceId);
        if (tr !== null) toolResults.push(tr);
      } else if (n.role === 'compaction') {
        const d = readCompactionDetails(attrs);
        compactions.push(
          detailedCompaction(ctx, where, span, d, {
            atNs: span.endTimeUnixNano,
            evidence: 'span',
            sourceKey: `span:${span.traceId}:${span.spanId}`,
          }),
        );
      }
      span.events.forEach((e, i) => {
        if (!isCompactionEventName(e.name) || notOwnCompaction(e.name, e.attributes)) return;
        const d = readCompactionDetails(e.attributes);
        compactions.push(
          detailedCompaction(ctx, where, span, d, {
            atNs: e.timeUnixNano,
            evidence: 'span_event',
            sourceKey: `event:${span.traceId}:${span.spanId}:${i}`,
          }),
        );
      });
    }
    if (ctx.captureContent) {
      keep.push({ ...span, role: n.role });
    } else {
      keep.push({
        ...span,
        attributes: stripAttributes(attrs),
        events: span.events.length === 0 ? span.events : stripEvents(span.events),
        role: n.role,
      });
    }
  }

  applyCopilotFacts(spans, calls, toolResults, compactions);
  joinToolSpans(calls, toolResults);
  reportedByRun(nodes, calls, ctx);
  return { keep, dropped, normalized: { calls, toolResults, compactions, projects } };
}

/** The agents whose span events name compactions that are not one of their own (./types.ts `compactionEvents`). */
const COMPACTION_EVENTS = (AGENT_PROFILES as readonly AgentProfile[]).flatMap((p) =>
  p.telemetry?.compactionEvents !== undefined ? [p.telemetry.compactionEvents] : [],
);

/** True for an agent's compaction event that is not a compaction of its own (its start, or a failed one). */
function notOwnCompaction(name: string, attrs: Attributes): boolean {
  for (const c of COMPACTION_EVENTS) {
    if (name === c.start) return true;
    if (name === c.complete && attrs[c.successAttribute] === false) return true;
  }
  return false;
}

interface Where {
  conv: { id: string; synthetic: boolean };
  agentId: string | null;
  streamKey: string;
  runId: string;
}

/** Where a compaction that `span` reports belongs: its workspace, conversation, stream, run, span. */
function compactionPlace(ctx: NormalizeContext, w: Where, span: Span) {
  return {
    workspaceId: ctx.workspaceId,
    conversationId: w.conv.id,
    streamKey: w.streamKey,
    runId: w.runId,
    traceId: span.traceId,
    spanId: span.spanId,
  };
}

/** A compaction from a custom compaction span or span event, with what its attributes say. */
function detailedCompaction(
  ctx: NormalizeContext,
  w: Where,
  span: Span,
  d: CompactionDetails,
  at: { atNs: string; evidence: 'span' | 'span_event'; sourceKey: string },
): Compaction {
  return compaction({
    ...compactionPlace(ctx, w, span),
    ...at,
    kind: d.kind,
    trigger: d.trigger,
    tokensBefore: d.tokensBefore,
    tokensAfter: d.tokensAfter,
    messagesKept: d.messagesKept,
    summarySize: d.summary === null ? d.summarySize : d.summary.length,
    summary: ctx.captureContent ? d.summary : null,
  });
}

function buildCall(n: Node, w: Where, ctx: NormalizeContext, compactions: Compaction[]): LlmCall {
  const span = n.span;
  const a = span.attributes;
  const producer = producerOf(n);
  // Langfuse counts input tokens without the cache; Claude Code's native counts do too, its
  // semconv `gen_ai.usage.input_tokens` (2.1.3xx) does not (docs/producers.md)
  const usage = contextUsage(
    readRawUsage(a),
    producer === 'claude_code'
      ? 'native_excludes'
      : producer === 'langfuse'
        ? 'excludes'
        : 'unknown',
  );
  const reqModel = requestModel(a);
  const resModel = responseModel(a, reqModel);
  const agent = agentOfResource(span.resource, isClaudeCode(n));
  // what the agent says on the call itself (Qwen Code's window_size_tokens), else the catalog's
  const win = reportedWindowFor(
    resModel,
    callReportedWindow(a),
    usage.contextTokens,
    ctx.windowOverrides,
    agent,
  );
  const content = analyzeContent(a);
  let rawOut: unknown = null;
  let rawOutRead = false;
  const finishRaw =
    readFinishReason(a, content.outputMessagesParsed, () => {
      if (!rawOutRead) {
        rawOutRead = true;
        const v = a['output.value'];
        rawOut = typeof v === 'string' && v.length < 1_000_000 ? json(v) : null;
      }
      return rawOut;
    }) ?? overflowError(a);
  const finishClass = classifyFinishReason(finishRaw);
  const hasToolCall = bool(a, 'response.has_tool_call') === true;
  const sideCall = producer === OPENCODE_PRODUCER ? openCodeSideCall(a) : sideCallOf(a);
  const flag = bool(a, 'gen_ai.conversation.compacted') === true;
  const base = compactionPlace(ctx, w, span);
  if (flag) {
    compactions.push(
      compaction({
        ...base,
        atNs: span.startTimeUnixNano,
        evidence: 'flag',
        kind: 'other',
        sourceKey: `flag:${span.traceId}:${span.spanId}`,
      }),
    );
  }
  // @anthropic-ai/sdk: server-side compaction iterations in the response usage
  const compactionInput = num(a, 'anthropic.usage.compaction.input_tokens');
  if (compactionInput !== null && compactionInput > 0) {
    compactions.push(
      compaction({
        ...base,
        atNs: span.startTimeUnixNano,
        evidence: 'message_part',
        sourceKey: `usage:${span.traceId}:${span.spanId}`,
        tokensBefore: compactionInput,
        tokensAfter: num(a, 'anthropic.usage.compaction.output_tokens'),
      }),
    );
  }
  const ic = content.inputCompaction;
  if (ic !== null) {
    compactions.push(
      compaction({
        ...base,
        atNs: span.startTimeUnixNano,
        evidence: 'message_part',
        sourceKey:
          ic.id !== null ? `part:${w.conv.id}:${ic.id}` : `part:${span.traceId}:${span.spanId}:in`,
        summarySize: ic.size,
        summary: ctx.captureContent ? ic.text : null,
      }),
    );
  }
  const usageCompaction = compactionInput !== null && compactionInput > 0;
  // the usage marker has the numbers; the output part of the same compaction would repeat it
  const oc = usageCompaction ? null : content.outputCompaction;
  if (oc !== null) {
    compactions.push(
      compaction({
        ...base,
        atNs: span.endTimeUnixNano,
        evidence: 'message_part',
        sourceKey:
          oc.id !== null ? `part:${w.conv.id}:${oc.id}` : `part:${span.traceId}:${span.spanId}:out`,
        summarySize: oc.size,
        summary: ctx.captureContent ? oc.text : null,
      }),
    );
  } else if (finishClass === 'compaction' && !usageCompaction) {
    compactions.push(
      compaction({
        ...base,
        atNs: span.endTimeUnixNano,
        evidence: 'finish_reason',
        sourceKey: `finish:${span.traceId}:${span.spanId}`,
      }),
    );
  }
  const requestId = firstStr(a, ['request_id', 'gen_ai.response.id']);
  // A Claude Code `compact` side call is the summarising request of the compaction its
  // `compaction` log event reports: a side call, not a second compaction.
  const call: LlmCall = {
    workspaceId: ctx.workspaceId,
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    conversationId: w.conv.id,
    conversationSynthetic: w.conv.synthetic,
    agentId: w.agentId,
    streamKey: w.streamKey,
    runId: w.runId,
    sideCall,
    requestId,
    startNs: span.startTimeUnixNano,
    endNs: span.endTimeUnixNano,
    producer,
    provider: provider(a),
    requestModel: reqModel,
    responseModel: resModel,
    ...usage,
    contextWindow: win.window,
    windowSource: win.source,
    agentVersion: agent?.version ?? null,
    finishReasonRaw: finishRaw,
    finishClass,
    outputToolCall:
      hasToolCall || content.outputToolCall || finishClass === 'tool_call'
        ? true
        : outputUnknown(producer, a, content.outputMessagesParsed)
          ? null
          : false,
    outputToolName: content.outputToolName,
    maxOutputTokens: maxOutputTokens(a),
    parts: content.parts ?? partsFromInputSizes(a) ?? claudeCodeSystemParts(producer, a),
    compacted: flag || ic !== null || usageCompaction,
  };
  // the messages as sent, for What was lost (the raw span is not kept by default)
  const messages = ctx.captureContent ? messageAttributes(a) : undefined;
  if (messages) call.inputMessages = messages;
  // Gemini CLI: output and parts read natively (src/ingest/gemini.ts), not from its cut messages
  if (producer === QWEN_PRODUCER) return { ...call, ...qwenSpanFacts(a, finishRaw) };
  return producer === GEMINI_PRODUCER ? { ...call, ...geminiSpanFacts(a) } : call;
}

/**
 * True when nothing says whether the output held a tool call: Claude Code spans carry only
 * `stop_reason` unless detailed beta tracing adds `response.has_tool_call` (conventions §5.0).
 */
function outputUnknown(producer: string, a: Attributes, outputMessages: unknown): boolean {
  return (
    producer === 'claude_code' &&
    a['response.has_tool_call'] === undefined &&
    (outputMessages === null || outputMessages === undefined)
  );
}

/** Claude Code with detailed beta tracing: the system prompt's size, as estimated tokens. */
function claudeCodeSystemParts(producer: string, a: Attributes): InputParts | null {
  if (producer !== 'claude_code') return null;
  const length = num(a, 'system_prompt_length');
  return length === null ? null : partsFromBytes({}, length);
}

function buildToolResult(n: Node, w: Where, workspaceId: string): ToolResult | null {
  const span = n.span;
  // Claude Code sub-spans of a tool (execution, blocked_on_user) would count it twice
  if (
    span.name === 'claude_code.tool.execution' ||
    span.name === 'claude_code.tool.blocked_on_user'
  )
    return null;
  const a = span.attributes;
  // Claude Code: `tool_name` is the name the model knows (`mcp__logs__fetch_logs`), its
  // `gen_ai.tool.name` only the MCP tool's own (`fetch_logs`)
  const toolName =
    (isClaudeCode(n) ? claudeCodeToolName(a) : null) ??
    firstStr(a, TOOL_NAME_KEYS) ??
    toolNameFromSpanName(span.name);
  let resultSize: number | null = null;
  let sizeUnit: ToolResult['sizeUnit'] = 'chars';
  const tokens = num(a, 'result_tokens');
  if (tokens !== null) {
    resultSize = tokens;
    sizeUnit = 'tokens';
  } else {
    for (const k of TOOL_RESULT_KEYS) {
      const v = a[k];
      if (v !== undefined) {
        resultSize = resultAttrSize(v);
        break;
      }
    }
    if (resultSize === null) {
      const bytes = firstNum(a, ['tool_result_size_bytes', 'gen_ai.tool.call.result.size']);
      if (bytes !== null) {
        resultSize = bytes.value;
        sizeUnit = 'bytes';
      }
    }
  }
  return {
    workspaceId,
    traceId: span.traceId,
    spanId: span.spanId,
    conversationId: w.conv.id,
    streamKey: w.streamKey,
    toolName,
    toolCallId: firstStr(a, TOOL_ID_KEYS),
    resultSize,
    sizeUnit,
    atNs: span.endTimeUnixNano,
    source: span.name.startsWith('claude_code') ? 'claude_code_span' : 'tool_span',
  };
}

function toolNameFromSpanName(name: string): string {
  if (name.startsWith('execute_tool ')) return name.slice('execute_tool '.length);
  return name;
}

/**
 * GitHub Copilot CLI reports its window on the run's `invoke_agent` span
 * (`github.copilot.session.usage_info` events, ./agent-windows.ts): the calls of that trace in
 * the batch get it (source `agent`), unless an override or their own report gives theirs.
 */
function reportedByRun(nodes: readonly Node[], calls: LlmCall[], ctx: NormalizeContext): void {
  let byTrace: Map<string, number> | null = null;
  for (const n of nodes) {
    if (n.span.events.length === 0) continue;
    const window = eventReportedWindow(n.span);
    if (window !== null) (byTrace ??= new Map()).set(n.span.traceId, window);
  }
  if (byTrace === null) return;
  calls.forEach((call, i) => {
    const reported = byTrace.get(call.traceId);
    if (reported === undefined || call.windowSource === 'agent') return;
    const win = reportedWindowFor(
      call.responseModel ?? call.requestModel,
      reported,
      call.contextTokens,
      ctx.windowOverrides,
    );
    calls[i] = { ...call, contextWindow: win.window, windowSource: win.source };
  });
}

/**
 * Tool spans as the parts fallback (§9.7 rule 5): each sized tool result is joined to the
 * next LLM call of its stream (the first call starting at or after the result); calls
 * without parts from messages get `source: 'tool_spans'` with the results since the previous
 * call of the stream. One unit per call (the first result's); other units are skipped.
 */
function joinToolSpans(calls: LlmCall[], results: readonly ToolResult[]): void {
  if (results.length === 0 || calls.length === 0) return;
  const byStream = new Map<string, LlmCall[]>();
  for (const c of calls) {
    // Copilot CLI's calls have their tool results from ./copilot.ts
    if (c.sideCall !== null || c.producer === COPILOT_PRODUCER) continue;
    let l = byStream.get(c.streamKey);
    if (l === undefined) byStream.set(c.streamKey, (l = []));
    l.push(c);
  }
  for (const l of byStream.values()) l.sort((x, y) => cmpNs(x.startNs, y.startNs));
  for (const r of results) {
    if (r.resultSize === null) continue;
    const l = byStream.get(r.streamKey);
    if (l === undefined) continue;
    const next = l[firstAtOrAfter(l, r.atNs)];
    if (next === undefined || (next.parts !== null && next.parts.source !== 'tool_spans')) continue;
    // bytes of UTF-8 text are counted as characters: close enough for shares
    const unit = r.sizeUnit === 'tokens' ? 'tokens' : 'chars';
    next.parts ??= { unit, total: null, system: null, tools: {}, source: 'tool_spans' };
    if (next.parts.unit !== unit) continue;
    next.parts.tools[r.toolName] = (next.parts.tools[r.toolName] ?? 0) + r.resultSize;
  }
}

/** Index of the first call (sorted by start) starting at or after `ns`; `l.length` when none. */
function firstAtOrAfter(l: readonly LlmCall[], ns: string): number {
  let lo = 0;
  let hi = l.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmpNs((l[mid] as LlmCall).startNs, ns) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
