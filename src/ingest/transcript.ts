/**
 * Claude Code transcript JSONL → LLM calls, tool results and compactions (conventions §7).
 * - One line per content block: assistant lines are de-duplicated by `message.id` (usage
 *   repeated; `output_tokens` provisional in older versions, the largest seen is kept).
 * - Sidechain lines (`isSidechain: true`) are sub-agent streams: `agentId` from the line,
 *   else `sidechain-<uuid of the sidechain's first line>`.
 * - Parts are estimated tokens of each tool's results held in the stream's context. A
 *   transcript lacks the system prompt and tool definitions, so character shares of the
 *   messages would overstate a tool's share of the input; instead the growth of the usage
 *   between two calls is split over what was added between them, in proportion to its
 *   characters (conventions §9.7, item 7). Without a previous call, 4 characters count as a
 *   token. A fall in usage empties the held results; `compact_boundary` does too, and yields
 *   a Compaction. The system prompt is unknown (null) unless the transcript has the request
 *   lines of Claude Code ≥ 2.1.3xx (`api-request` → `api-request-shape`, with the full system
 *   prompt): then it is its characters / 4, and the request's `querySource` marks side calls.
 * - `type: "summary"` lines are titles, not compactions.
 * - Ids are derived (trace = sha256(sessionId), span = sha256(message.id)) so a re-import
 *   writes the same rows.
 * - Each line's `cwd` is where the session runs (its project; the last one wins).
 * - With the workspace capturing content, the calls at a drop (a boundary, a fall in usage)
 *   keep the messages their input held, for What was lost (./transcript-messages.ts).
 */
import {
  latestProjects,
  type Compaction,
  type ConversationProject,
  type LlmCall,
  type Normalized,
  type ToolResult,
} from '../model/calls.ts';
import { contextUsageEntry } from '../model/usage-rules.ts';
import { isObj, isoToNs, numField } from './attrs.ts';
import { jsonObjectLines } from './json-lines.ts';
import { projectReport } from './projects.ts';
import { compaction, normalizeTrigger } from './compactions.ts';
import { classifyQuerySource, streamKeyOf } from './conversation.ts';
import { classifyFinishReason } from './finish.ts';
import { spanIdFor, traceIdFor } from './ids.ts';
import { TranscriptMessages } from './transcript-messages.ts';
import { fromProviderMessage, type Msg } from './messages.ts';
import { contextUsage, type Usage } from './tokens.ts';
import type { NormalizeContext, SessionFileReader } from './types.ts';
import { claudeCodeAgent, contextWindowFor } from './windows.ts';

/** Options for one transcript file. */
export interface TranscriptOptions {
  /** Session id for lines that lack one (each line's `sessionId` wins). */
  sessionId?: string;
  /** Agent id of a `subagents/agent-*.jsonl` file: every line belongs to that sub-agent. */
  agentId?: string;
}

/**
 * A stream's history, kept as running sizes so each call's parts cost O(tools), not
 * O(history): a long session stays linear.
 */
interface Stream {
  /** Characters of the messages added since the stream's last call. */
  newChars: number;
  /** Characters of each tool's results among them. */
  newToolChars: Record<string, number>;
  /** Estimated tokens of each tool's results held in the stream's context. */
  heldTokens: Record<string, number>;
  /** Usage of the stream's last call; null before the first one and after a boundary. */
  lastContext: number | null;
  lastBoundary: Compaction | null;
}

const newStream = (): Stream => ({
  newChars: 0,
  newToolChars: {},
  heldTokens: {},
  lastContext: null,
  lastBoundary: null,
});

/** Used only when there is no usage growth to split: characters per token. */
const CHARS_PER_TOKEN = 4;
/** The fewest characters a token of a tool's results is credited with (tokenizers average 3–4). */
const MIN_CHARS_PER_TOKEN = 2;

/** Adds a message's sizes to the stream; tool results are named through earlier tool_use ids. */
function append(stream: Stream, msg: Msg, toolNames: ReadonlyMap<string, string>): void {
  for (const b of msg.blocks) {
    stream.newChars += b.size;
    if (b.kind === 'tool_result') {
      const name = b.name ?? (b.id !== null ? toolNames.get(b.id) : undefined) ?? 'unknown';
      stream.newToolChars[name] = (stream.newToolChars[name] ?? 0) + b.size;
    }
  }
}

/**
 * Moves what was added since the stream's last call into the held results, in tokens: the
 * usage growth split by characters, and returns a copy of the held results.
 */
function holdNewResults(stream: Stream, contextTokens: number | null): Record<string, number> {
  if (contextTokens === null) return { ...stream.heldTokens };
  const last = stream.lastContext;
  if (last !== null && contextTokens < last) stream.heldTokens = {}; // history was cut
  const growth = last === null ? 0 : contextTokens - last;
  for (const [tool, chars] of Object.entries(stream.newToolChars)) {
    // growth the transcript does not show (attachments, reminders, tool definitions) must not
    // be credited to a small result: a result holds at most one token per MIN_CHARS_PER_TOKEN
    const tokens =
      growth > 0 && stream.newChars > 0
        ? Math.min((growth * chars) / stream.newChars, chars / MIN_CHARS_PER_TOKEN)
        : chars / CHARS_PER_TOKEN;
    stream.heldTokens[tool] = (stream.heldTokens[tool] ?? 0) + Math.round(tokens);
  }
  stream.newChars = 0;
  stream.newToolChars = {};
  stream.lastContext = contextTokens;
  return { ...stream.heldTokens };
}

type Line = Record<string, unknown>;

function s(o: Line, k: string): string | null {
  const v = o[k];
  return typeof v === 'string' && v !== '' ? v : null;
}

function tsNs(line: Line): string {
  return isoToNs(s(line, 'timestamp')) ?? '0';
}

/**
 * Normalizes one Claude Code transcript (the text of a `.jsonl` file). Lines that are not
 * JSON objects are skipped. `options.agentId` marks a sub-agent file; an agent id starting
 * with `acompact` is the compaction summarizer, whose calls are side calls (`compact`).
 */
export function normalizeTranscript(
  text: string,
  ctx: NormalizeContext,
  options: TranscriptOptions = {},
): Normalized {
  const calls: LlmCall[] = [];
  const toolResults: ToolResult[] = [];
  const compactions: Compaction[] = [];
  const toolNames = new Map<string, string>();
  const sidechainRoot = new Map<string, string>();
  const streams = new Map<string, Stream>();
  const byMessageId = new Map<string, LlmCall>();
  const requests = new RequestLines();
  const projects: ConversationProject[] = [];
  const lastCwd = new Map<string, { cwd: string; atNs: string }>();
  const texts = ctx.captureContent ? new TranscriptMessages() : null;

  for (const line of jsonObjectLines(text)) {
    const type = s(line, 'type');
    if (type === 'api-request-shape' || type === 'api-request') {
      requests.read(type, line);
      continue;
    }
    // other entry types (`attachment`, `cost-state`, `tools-used`, `api-request-blob`, ...) say
    // nothing a call needs
    if (type !== 'assistant' && type !== 'user' && type !== 'system') continue;

    const sessionId = s(line, 'sessionId') ?? options.sessionId ?? 'unknown-session';
    const uuid = s(line, 'uuid');
    const sidechain = line['isSidechain'] === true;
    let agentId: string | null = options.agentId ?? null;
    if (sidechain && agentId === null) {
      const parent = s(line, 'parentUuid');
      const root = (parent !== null ? sidechainRoot.get(parent) : undefined) ?? uuid ?? 'unknown';
      if (uuid !== null) sidechainRoot.set(uuid, root);
      agentId = s(line, 'agentId') ?? `sidechain-${root}`;
    }
    const streamKey = streamKeyOf(sessionId, agentId);
    let stream = streams.get(streamKey);
    if (stream === undefined) streams.set(streamKey, (stream = newStream()));
    const traceId = traceIdFor(sessionId);
    const atNs = tsNs(line);
    const cwd = s(line, 'cwd');
    if (cwd !== null) {
      // the file's order is the session's (line times may step back): each report is timed
      // at the latest line so far, so the last cwd written wins
      const seen = lastCwd.get(sessionId);
      const at = seen !== undefined && BigInt(seen.atNs) > BigInt(atNs) ? seen.atNs : atNs;
      if (cwd !== seen?.cwd) projects.push(...projectReport(sessionId, cwd, at));
      lastCwd.set(sessionId, { cwd, atNs: at });
    }

    if (type === 'system') {
      if (s(line, 'subtype') !== 'compact_boundary') continue;
      const meta = isObj(line['compactMetadata']) ? line['compactMetadata'] : {};
      const c = compaction({
        workspaceId: ctx.workspaceId,
        conversationId: sessionId,
        streamKey,
        runId: sessionId,
        traceId,
        spanId: null,
        atNs,
        evidence: 'transcript_boundary',
        sourceKey: `transcript:${sessionId}:${uuid ?? atNs}`,
        trigger: normalizeTrigger(meta['trigger'] as string | undefined),
        tokensBefore: numField(meta, 'preTokens'),
        tokensAfter: numField(meta, 'postTokens'),
        messagesKept: Array.isArray(
          isObj(meta['preservedMessages']) ? meta['preservedMessages']['uuids'] : undefined,
        )
          ? ((meta['preservedMessages'] as Line)['uuids'] as unknown[]).length
          : null,
      });
      compactions.push(c);
      Object.assign(stream, newStream(), { lastBoundary: c });
      texts?.boundary(streamKey);
      continue;
    }

    const message = line['message'];
    if (!isObj(message)) continue;

    if (type === 'user') {
      const msg = fromProviderMessage({ role: 'user', content: message['content'] });
      append(stream, msg, toolNames);
      texts?.add(streamKey, 'user', message['content']);
      if (line['isCompactSummary'] === true && stream.lastBoundary !== null) {
        const size = msg.blocks.reduce((n, b) => n + b.size, 0);
        stream.lastBoundary.summarySize = size;
        const content = message['content'];
        if (ctx.captureContent && typeof content === 'string')
          stream.lastBoundary.summary = content;
      }
      for (const b of msg.blocks) {
        if (b.kind !== 'tool_result' || b.id === null) continue;
        toolResults.push({
          workspaceId: ctx.workspaceId,
          traceId,
          spanId: spanIdFor(`tool_result:${b.id}`),
          conversationId: sessionId,
          streamKey,
          toolName: toolNames.get(b.id) ?? 'unknown',
          toolCallId: b.id,
          resultSize: b.size,
          sizeUnit: 'chars',
          atNs,
          source: 'claude_code_transcript',
        });
      }
      continue;
    }

    // assistant: one line per content block
    const model = typeof message['model'] === 'string' ? message['model'] : null;
    if (model === '<synthetic>') continue; // locally written error notes, not API calls
    const msg = fromProviderMessage({ role: 'assistant', content: message['content'] });
    const messageId = (typeof message['id'] === 'string' ? message['id'] : null) ?? uuid ?? atNs;
    let call = byMessageId.get(messageId);
    if (call === undefined) {
      call = newCall(line, message, {
        ctx,
        sessionId,
        agentId,
        streamKey,
        traceId,
        spanId: spanIdFor(messageId),
        atNs,
        model,
        stream,
        request: requests.of(s(line, 'requestRef')),
      });
      byMessageId.set(messageId, call);
      calls.push(call);
      texts?.call(streamKey, call);
    } else {
      call.endNs = atNs;
      const usage = message['usage'];
      const out = isObj(usage) ? numField(usage, 'output_tokens') : null;
      if (out !== null && (call.outputTokens === null || out > call.outputTokens))
        call.outputTokens = out;
      const stop = typeof message['stop_reason'] === 'string' ? message['stop_reason'] : null;
      if (stop !== null) {
        call.finishReasonRaw = stop;
        call.finishClass = classifyFinishReason(stop);
        if (call.finishClass === 'tool_call') call.outputToolCall = true;
      }
    }
    for (const b of msg.blocks) {
      if (b.kind !== 'tool_call') continue;
      call.outputToolCall = true;
      if (b.name !== null) {
        call.outputToolName = b.name;
        if (b.id !== null) toolNames.set(b.id, b.name);
      }
    }
    append(stream, msg, toolNames);
    texts?.add(streamKey, 'assistant', message['content']);
  }
  texts?.finish();
  return { calls, toolResults, compactions, projects: latestProjects(projects) };
}

/** What a 2.1.3xx `api-request` line (with its `api-request-shape`) says about one request. */
interface RequestFacts {
  /** Characters of the system prompt the request sent; null when its shape is not known. */
  systemChars: number | null;
  /** `querySource` (`sdk`, `compact`, `agent:…`); null when absent. */
  querySource: string | null;
}

/**
 * The request lines of Claude Code ≥ 2.1.3xx transcripts: `api-request-shape` carries the
 * full system prompt and tools once per shape (`shapeHash`), each `api-request` names its
 * shape and query source, and the assistant line names its request (`requestRef`).
 */
class RequestLines {
  private readonly systemChars = new Map<string, number>();
  private readonly requests = new Map<
    string,
    { shapeHash: string | null; querySource: string | null }
  >();

  read(type: 'api-request-shape' | 'api-request', line: Line): void {
    if (type === 'api-request-shape') {
      const hash = s(line, 'shapeHash');
      const shape = line['shape'];
      if (hash === null || !isObj(shape)) return;
      this.systemChars.set(hash, systemPromptChars(shape['system']));
      return;
    }
    const id = s(line, 'id');
    if (id === null) return;
    this.requests.set(id, { shapeHash: s(line, 'shapeHash'), querySource: s(line, 'querySource') });
  }

  of(requestRef: string | null): RequestFacts | null {
    const r = requestRef === null ? undefined : this.requests.get(requestRef);
    if (r === undefined) return null;
    const chars = r.shapeHash === null ? undefined : this.systemChars.get(r.shapeHash);
    return { systemChars: chars ?? null, querySource: r.querySource };
  }
}

/** Characters of a Messages API `system` (a string or text blocks). */
function systemPromptChars(system: unknown): number {
  if (typeof system === 'string') return system.length;
  if (!Array.isArray(system)) return 0;
  let n = 0;
  for (const b of system) if (isObj(b) && typeof b['text'] === 'string') n += b['text'].length;
  return n;
}

interface CallInit {
  ctx: NormalizeContext;
  sessionId: string;
  agentId: string | null;
  streamKey: string;
  traceId: string;
  spanId: string;
  atNs: string;
  model: string | null;
  stream: Stream;
  /** The request line of this call (2.1.3xx), if the transcript has one. */
  request: RequestFacts | null;
}

/**
 * The usage counts of an assistant message: those of the entry that holds the call's context
 * (src/model/usage-rules.ts: the last `message` iteration, else the top level), the output
 * counted at the top level when the entry has none. All zero is no measurement: null.
 */
export function transcriptUsage(message: Line): Usage | null {
  const entry = contextUsageEntry(message['usage']);
  if (entry === null) return null;
  const raw = rawUsageOf(entry);
  if (raw.outputTokens === null && entry !== message['usage'] && isObj(message['usage']))
    raw.outputTokens = numField(message['usage'], 'output_tokens');
  return contextUsage(raw, 'excludes');
}

function rawUsageOf(u: Line) {
  return {
    inputTokensRaw: numField(u, 'input_tokens'),
    cacheReadTokens: numField(u, 'cache_read_input_tokens'),
    cacheWriteTokens: numField(u, 'cache_creation_input_tokens'),
    outputTokens: numField(u, 'output_tokens'),
  };
}

const NO_USAGE: Usage = {
  inputTokensRaw: null,
  cacheReadTokens: null,
  cacheWriteTokens: null,
  outputTokens: null,
  contextTokens: null,
  usageRule: null,
};

function newCall(line: Line, message: Line, init: CallInit): LlmCall {
  const usage = transcriptUsage(message) ?? NO_USAGE;
  const agent = claudeCodeAgent(s(line, 'version'));
  const win = contextWindowFor(init.model, usage.contextTokens, init.ctx.windowOverrides, agent);
  const stop = typeof message['stop_reason'] === 'string' ? message['stop_reason'] : null;
  const finishClass = classifyFinishReason(stop);

  const querySource = init.request?.querySource ?? null;
  const sideCall =
    init.agentId !== null && init.agentId.startsWith('acompact')
      ? 'compact'
      : querySource !== null && classifyQuerySource(querySource) === 'side'
        ? querySource
        : null;
  const systemChars = init.request?.systemChars ?? null;
  return {
    workspaceId: init.ctx.workspaceId,
    traceId: init.traceId,
    spanId: init.spanId,
    parentSpanId: null,
    conversationId: init.sessionId,
    conversationSynthetic: false,
    agentId: init.agentId,
    streamKey: init.streamKey,
    runId: init.sessionId,
    sideCall,
    requestId: s(line, 'requestId'),
    startNs: init.atNs,
    endNs: init.atNs,
    producer: 'claude_code_transcript',
    provider: 'anthropic',
    requestModel: init.model,
    responseModel: init.model,
    ...usage,
    contextWindow: win.window,
    windowSource: win.source,
    agentVersion: agent.version,
    finishReasonRaw: stop,
    finishClass,
    outputToolCall: finishClass === 'tool_call',
    outputToolName: null,
    maxOutputTokens: null,
    parts: {
      unit: 'tokens',
      total: null,
      // the system prompt of the request's shape, in estimated tokens (2.1.3xx transcripts)
      system: systemChars === null ? null : Math.round(systemChars / CHARS_PER_TOKEN),
      tools: holdNewResults(init.stream, usage.contextTokens),
      source: 'estimated',
    },
    compacted: false,
  };
}

/**
 * Options for a transcript file from its path: `<session>/subagents/agent-<id>.jsonl` is the
 * sub-agent `<id>` of session `<session>`; `<session>.jsonl` is the session's main file. The
 * session id from the path is only a fallback: each line's `sessionId` is the conversation id.
 */
export function transcriptOptionsForPath(path: string): TranscriptOptions {
  const parts = path.split(/[\\/]/);
  const file = parts[parts.length - 1] ?? '';
  const opts: TranscriptOptions = {};
  const m = /^agent-(.+)\.jsonl$/.exec(file);
  if (m !== null && parts[parts.length - 2] === 'subagents') {
    opts.agentId = m[1] as string;
    const session = parts[parts.length - 3];
    if (session !== undefined && session !== '') opts.sessionId = session;
  } else if (file.endsWith('.jsonl')) {
    opts.sessionId = file.slice(0, -'.jsonl'.length);
  }
  // the lines' own sessionId wins; the file name only stands in for lines without one
  return opts;
}

/**
 * This module as the reader of Claude Code's transcripts (../model/agents/, `sessionFiles.reader`):
 * any JSON line with a `type` may be one, so it is tried last (./session-files.ts).
 */
export const sessionFileReader: SessionFileReader = {
  isEntry: (v) => typeof v['type'] === 'string',
  normalize: (text, ctx, path) => normalizeTranscript(text, ctx, transcriptOptionsForPath(path)),
};
