/**
 * Producers × expected data, end to end. Each row starts a fresh rotscope with its evaluator
 * (test/helpers/producers/e2e.ts) and the fake LLM, runs the producer's driver (a real SDK and
 * instrumentation, test/helpers/producers/<name>.ts) over the real OTLP/HTTP exporters, and
 * states what rotscope must have received and stored. The columns are the checks every row
 * shares, one generic `describe` each (requests, spans, calls, usage, finish, parts, window,
 * tool results, findings); a row's module in test/e2e/producers/<name>.ts holds only the checks
 * no other producer has. The scripted conversations and what each producer emits:
 * test/e2e/producers/README.md.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  NO_USAGE,
  callsOf,
  exclusiveUsage,
  findingsOf,
  inclusiveUsage,
  partsOf,
  spansOf,
  startHarness,
  toolResultsOf,
  toolsConversationParts,
  usageOf,
  type CallRow,
  type FindingRow,
  type Harness,
  type ProducerRun,
} from '../helpers/producers/e2e.ts';
import { PRODUCERS, type ProducerName } from '../helpers/producers/index.ts';
import * as anthropicSdk from '../helpers/producers/anthropic-sdk.ts';
import * as claudeCode from '../helpers/producers/claude-code.ts';
import * as langchainOpenInference from '../helpers/producers/langchain-openinference.ts';
import * as langfuse from '../helpers/producers/langfuse.ts';
import { LOOP_TOOL_RESULTS, LOOP_USAGE } from '../helpers/producers/loop-script.ts';
import { AGENT_SESSION } from '../helpers/producers/openinference-agents.ts';
import * as openInference from '../helpers/producers/openinference.ts';
import {
  RESPONSES_CONVERSATION,
  RESPONSES_REPLIES,
  type OtelGenaiRun,
} from '../helpers/producers/otel-genai.ts';
import {
  ANTHROPIC_FINDING_USAGE,
  ANTHROPIC_MODEL,
  ANTHROPIC_TOOLS_USAGE,
  ANTHROPIC_WINDOW,
  OPENAI_FINDING_USAGE,
  OPENAI_MODEL,
  OPENAI_TOOLS_USAGE,
  OPENAI_WINDOW,
  READ_FILE_RESULT,
  RUN_TESTS_RESULT,
  SYSTEM_PROMPT,
  contextOf,
} from '../helpers/producers/script.ts';
import type { ScriptedUsage } from '../helpers/fake-llm.ts';
import * as traceloopAnthropic from '../helpers/producers/traceloop-anthropic.ts';
import * as traceloopOpenai from '../helpers/producers/traceloop-openai.ts';
import * as vercelAi from '../helpers/producers/vercel-ai.ts';
import { claudeCodeRows } from './producers/claude-code.ts';
import { langchainOpenInferenceRows } from './producers/langchain-openinference.ts';
import { langfuseRows } from './producers/langfuse.ts';
import { openInferenceAgentsRows } from './producers/openinference-agents.ts';
import { openInferenceRows } from './producers/openinference.ts';
import { otelGenaiRows } from './producers/otel-genai.ts';
import { vercelAiRows } from './producers/vercel-ai.ts';
import { countOf } from '../../src/store/columns.ts';

/** One expected finding: conversation, detector, severity, kind, tool (tool_takeover's tool). */
type Expected = [
  conversation: string,
  detector: FindingRow['detector'],
  severity: FindingRow['severity'],
  kind: string | null,
  tool: string | null,
];

/** A request the fake provider received: its endpoint and whether it was streamed. */
type Request = [endpoint: string | null, stream: boolean];

/** Requests to one endpoint, streamed or not, in order. */
const requestsTo = (endpoint: string, streamed: boolean[]) =>
  streamed.map((stream): Request => [endpoint, stream]);

/** Stored spans: how many of one name, role and instrumentation scope. */
type SpanCount = [name: string, role: string | null, scope: string | null, count: number];

/** A call's finish: raw reason, class, whether the output was a tool call, and which tool. */
type Finish = [
  raw: string | null,
  finishClass: string | null,
  toolCall: boolean | null,
  toolName: string | null,
];

type Usage = ReturnType<typeof usageOf>;
/** partsOf of a call, or toolsConversationParts (its plain-string form). */
type Parts = ReturnType<typeof partsOf> | ReturnType<typeof toolsConversationParts>[number];

/** What the calls of one conversation must look like, call by call in call order. */
interface ConversationCalls {
  /** Fields every call of the conversation has (compared with toMatchObject). */
  shared: Partial<CallRow>;
  /** usageOf per call; its length is the number of calls (partial objects: toMatchObject). */
  usage: Array<Partial<Usage>>;
  /** Each call's run: its own trace, or the conversation (one run across traces). */
  run?: 'trace' | 'conversation';
  /** How many traces the conversation's calls came in. */
  traces?: number;
  finish?: Finish[];
  /** partsOf per call. */
  parts?: Parts[];
  /** read_file's chars in each call's input (0: absent); no tool result is left unnamed. */
  readFileInInput?: number[];
  /** The call nearest the window: its share of the window and its max output tokens. */
  full?: { call: number; share: number; maxOutputTokens?: number };
  /** The tool names of the conversation's stored tool results, in order. */
  toolResults?: string[];
  /** Their sizes, when the row pins them. */
  toolResultSizes?: number[];
}

interface Row<R> {
  name: ProducerName;
  /** The conversation ids of this run, by the label the findings and `calls` use. */
  conversations(result: R): Record<string, string>;
  /** Every request the fake provider received, in order (none left pending). */
  requests: Request[];
  /** Every stored span, counted by name, role and scope. */
  spans: SpanCount[];
  /** Per conversation label, its calls. */
  calls: Record<string, ConversationCalls>;
  /** Every finding of the run (compared in value order, see byValue). */
  findings: Expected[];
  /** The checks only this producer has (test/e2e/producers/<name>.ts). */
  checks?(ctx: ProducerRun<R>): void;
}

/** A row of the table, its driver's result type erased (the table holds every row). */
const row = <R>(r: Row<R>) => r as Row<unknown>;

/** Sorted by value: for lists whose order the store does not fix. */
const byValue = <T>(l: T[]) =>
  [...l].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));

/** The fields every call of one model's conversation shares. */
function shared(
  producer: string,
  provider: string,
  model: string,
  window: number,
  extra: Partial<CallRow> = {},
): Partial<CallRow> {
  return {
    producer,
    provider,
    request_model: model,
    response_model: model,
    context_window: window,
    window_source: 'catalog',
    agent_id: null,
    side_call: null,
    conversation_synthetic: false,
    ...extra,
  };
}

/** Usage as counted by a producer that drops the cache attributes (input includes cache). */
const noCache = (u: ScriptedUsage) => inclusiveUsage(u, null, null, 'no_cache');
/** Usage with cache reads reported (OpenAI: inclusive), no cache write. */
const withCacheRead = (u: ScriptedUsage) => inclusiveUsage(u, u.cacheRead ?? 0, null, 'inclusive');
/** Usage with cache reads and writes, input inclusive of both. */
const withCache = (u: ScriptedUsage) =>
  inclusiveUsage(u, u.cacheRead ?? 0, u.cacheWrite ?? 0, 'inclusive');

/** The "tools" script's three calls: read_file, run_tests, then the answer. */
const TOOLS_FINISH = (toolCall: string, stop: string): Finish[] => [
  [toolCall, 'tool_call', true, 'read_file'],
  [toolCall, 'tool_call', true, 'run_tests'],
  [stop, 'stop', false, null],
];
/** The "finding" script's two calls: an answer, then one cut at the output limit. */
const FINDING_FINISH = (stop: string, length: string): Finish[] => [
  [stop, 'stop', false, null],
  [length, 'output_limit', false, null],
];
const TOOLS_PARTS = toolsConversationParts(
  SYSTEM_PROMPT.length,
  READ_FILE_RESULT.length,
  RUN_TESTS_RESULT.length,
);
/** The "finding" script's second call sits at 80% of the window and may write 4096 tokens. */
const FINDING_FULL = { call: 1, share: 0.8, maxOutputTokens: 4096 };

/** The loop script (test/helpers/producers/loop-script.ts): read_file stays in calls 2–6. */
const LOOP_READ_FILE = [0, ...Array<number>(5).fill(READ_FILE_RESULT.length), 0, 0];
const LOOP_TOOL_NAMES = ['read_file', 'list_dir', 'git_log', 'write_file', 'write_file'];
/**
 * The "tools" script through the AI SDK, either provider: AI SDK finish values, and tool
 * results from the ai.toolCall spans sized as the decoded output the model got (3000), not as
 * the JSON text of ai.toolCall.result (3044).
 */
const VERCEL_TOOLS = {
  finish: TOOLS_FINISH('tool-calls', 'stop'),
  parts: TOOLS_PARTS,
  toolResults: ['read_file', 'run_tests'],
  toolResultSizes: [READ_FILE_RESULT.length, RUN_TESTS_RESULT.length],
} satisfies Partial<ConversationCalls>;

/** The simulated Claude Code sessions' calls, in call order (test/helpers/producers/claude-code.ts). */
const CC_TOOLS_CALLS = [
  claudeCode.TOOLS_CALLS.p1a,
  claudeCode.TOOLS_CALLS.p1b,
  claudeCode.TOOLS_CALLS.p2a,
  claudeCode.TOOLS_CALLS.sub,
  claudeCode.TOOLS_CALLS.p2b,
];
const CC_FINDING_CALLS = [
  claudeCode.FINDING_CALLS.full,
  claudeCode.FINDING_CALLS.compact,
  claudeCode.FINDING_CALLS.cut,
];

/** The loop's tool spans, for a producer that keeps them: one per tool run. */
const loopToolSpans = (scope: string): SpanCount[] => [
  ['read_file', 'tool', scope, 1],
  ['list_dir', 'tool', scope, 1],
  ['git_log', 'tool', scope, 1],
  ['write_file', 'tool', scope, 2],
];
const LOOP_TOOL_SIZES = LOOP_TOOL_NAMES.map((n) => LOOP_TOOL_RESULTS[n]!.length);
const LANGCHAIN_SCOPE = '@arizeai/openinference-instrumentation-langchain';
const CLAUDE_CODE_SCOPE = 'com.anthropic.claude_code';

/**
 * The scripted "finding" conversation (test/helpers/producers/script.ts): its second call sits
 * at 80% of the window, between usageThreshold (0.7) and usageCritical (0.85), and stops on the
 * output limit with text, not a tool call.
 */
const FINDING: Expected[] = [
  ['finding', 'context_too_full', 'warning', null, null],
  ['finding', 'output_cut_off', 'warning', null, null],
];
// The "tools" conversation stays quiet everywhere: far below the window, no call cut off, and
// a tool's results are in at most two calls' input (tool_takeover needs 1 + toolPersistCalls).

const TABLE: Array<Row<unknown>> = [
  row<OtelGenaiRun>({
    name: 'otel-genai',
    conversations: (r) => ({
      tools: r.toolsTraceId,
      finding: r.findingTraceId,
      responses: RESPONSES_CONVERSATION,
    }),
    // plain and streamed chat completions, then the Responses API
    requests: [
      ['chat', false],
      ['chat', true],
      ['chat', true],
      ['chat', false],
      ['chat', true],
      ['responses', false],
      ['responses', true],
    ],
    // application spans without GenAI interest are dropped
    spans: [['chat gpt-4o', 'llm_call', '@opentelemetry/instrumentation-openai', 7]],
    calls: {
      // no conversation attribute on chat spans: the trace is the conversation (synthetic)
      tools: {
        shared: shared('semconv', 'openai', OPENAI_MODEL, OPENAI_WINDOW, {
          conversation_synthetic: true,
        }),
        run: 'conversation',
        usage: OPENAI_TOOLS_USAGE.map(noCache),
        // the tool called in each output comes from the gen_ai.choice log event
        finish: TOOLS_FINISH('tool_calls', 'stop'),
        // content only as log records, joined to the call by trace and span id
        parts: TOOLS_PARTS,
      },
      finding: {
        shared: shared('semconv', 'openai', OPENAI_MODEL, OPENAI_WINDOW, {
          conversation_synthetic: true,
        }),
        usage: OPENAI_FINDING_USAGE.map(noCache),
        finish: FINDING_FINISH('stop', 'length'),
        full: FINDING_FULL,
      },
      // gen_ai.conversation.id joins two traces (each its run); streamed usage from
      // response.completed; OTel finish values derived from the output items
      responses: {
        shared: shared('semconv', 'openai', OPENAI_MODEL, OPENAI_WINDOW),
        run: 'trace',
        traces: 2,
        usage: RESPONSES_REPLIES.map((r) => noCache(r.usage)),
        finish: [
          ['tool_call', 'tool_call', true, 'read_file'],
          ['stop', 'stop', false, null],
        ],
      },
    },
    findings: FINDING,
    checks: otelGenaiRows,
  }),
  row<void>({
    name: 'traceloop-openai',
    conversations: () => ({
      tools: traceloopOpenai.TOOLS_SESSION,
      finding: traceloopOpenai.FINDING_SESSION,
    }),
    requests: requestsTo('chat', [false, true, true, false, false]),
    spans: [['chat gpt-4o', 'llm_call', '@traceloop/instrumentation-openai', 5]],
    calls: {
      // the association property session_id is the conversation; each call is its own run
      tools: {
        shared: shared('semconv', 'openai', OPENAI_MODEL, OPENAI_WINDOW),
        run: 'trace',
        traces: 3,
        // the streamed calls carry no usage (the instrumentation drops the usage chunk)
        usage: [noCache(OPENAI_TOOLS_USAGE[0]), NO_USAGE, NO_USAGE],
        finish: TOOLS_FINISH('tool_call', 'stop'),
        parts: TOOLS_PARTS,
      },
      finding: {
        shared: shared('semconv', 'openai', OPENAI_MODEL, OPENAI_WINDOW),
        usage: OPENAI_FINDING_USAGE.map(noCache),
        finish: FINDING_FINISH('stop', 'length'),
        full: FINDING_FULL,
      },
    },
    findings: FINDING,
  }),
  row<void>({
    name: 'traceloop-anthropic',
    conversations: () => ({
      tools: traceloopAnthropic.TOOLS_SESSION,
      finding: traceloopAnthropic.FINDING_SESSION,
    }),
    requests: requestsTo('messages', [false, true, true, false, false]),
    // only the Traceloop spans are kept
    spans: [[`chat ${ANTHROPIC_MODEL}`, 'llm_call', '@traceloop/instrumentation-anthropic', 5]],
    calls: {
      // cache-exclusive input is detected (raw < cache)
      tools: {
        shared: shared('semconv', 'anthropic', ANTHROPIC_MODEL, ANTHROPIC_WINDOW),
        usage: ANTHROPIC_TOOLS_USAGE.map((u) => exclusiveUsage(u, 'exclusive_inferred')),
        // no finish on streamed calls: the instrumentation drops message_delta
        finish: [
          ['tool_call', 'tool_call', true, 'read_file'],
          [null, null, true, 'run_tests'],
          [null, null, false, null],
        ],
        parts: TOOLS_PARTS,
      },
      // max_tokens is mapped to length
      finding: {
        shared: shared('semconv', 'anthropic', ANTHROPIC_MODEL, ANTHROPIC_WINDOW),
        usage: ANTHROPIC_FINDING_USAGE.map((u) => exclusiveUsage(u, 'exclusive_inferred')),
        finish: FINDING_FINISH('stop', 'length'),
        full: FINDING_FULL,
      },
    },
    findings: FINDING,
  }),
  row<void>({
    name: 'openinference',
    conversations: () => ({
      tools: openInference.TOOLS_SESSION,
      finding: openInference.FINDING_SESSION,
    }),
    requests: requestsTo('chat', [false, true, true, false, false]),
    spans: [
      ['OpenAI Chat Completions', 'llm_call', '@arizeai/openinference-instrumentation-openai', 5],
    ],
    calls: {
      // session.id is the conversation
      tools: {
        shared: shared('openinference', 'openai', OPENAI_MODEL, OPENAI_WINDOW),
        run: 'trace',
        // the plain call's cache read 0 makes it inclusive; streamed calls carry no tokens
        usage: [inclusiveUsage(OPENAI_TOOLS_USAGE[0], 0, null, 'inclusive'), NO_USAGE, NO_USAGE],
        // raw llm.finish_reason; parts from llm.input_messages
        finish: TOOLS_FINISH('tool_calls', 'stop'),
        parts: TOOLS_PARTS,
      },
      finding: {
        shared: shared('openinference', 'openai', OPENAI_MODEL, OPENAI_WINDOW),
        usage: OPENAI_FINDING_USAGE.map(withCacheRead),
        finish: FINDING_FINISH('stop', 'length'),
        full: { call: 1, share: 0.8 },
      },
    },
    findings: FINDING,
    checks: openInferenceRows,
  }),
  row<{ finalOutput: string }>({
    name: 'openinference-agents',
    conversations: () => ({ agent: AGENT_SESSION }),
    requests: requestsTo('responses', [false, false, false]),
    // the Agents SDK's own tracing goes to the OpenAI platform, not OTel: only the LLM spans
    spans: [['OpenAI Responses', 'llm_call', '@arizeai/openinference-instrumentation-openai', 3]],
    calls: {
      agent: {
        shared: shared('openinference', 'openai', OPENAI_MODEL, OPENAI_WINDOW),
        usage: OPENAI_TOOLS_USAGE.map(withCacheRead),
        // no finish reason on Responses spans
        finish: [
          [null, null, true, 'read_file'],
          [null, null, true, 'run_tests'],
          [null, null, false, null],
        ],
        parts: TOOLS_PARTS,
      },
    },
    // one agent run of the tools script: no finding
    findings: [],
    checks: openInferenceAgentsRows,
  }),
  row<void>({
    name: 'vercel-ai',
    conversations: () => ({
      tools: vercelAi.TOOLS_SESSION,
      anthropic: vercelAi.ANTHROPIC_SESSION,
      finding: vercelAi.FINDING_SESSION,
    }),
    requests: [
      ['responses', false],
      ['responses', false],
      ['responses', false],
      ['messages', true],
      ['messages', true],
      ['messages', true],
      ['chat', false],
      ['chat', false],
    ],
    // roots are agent steps (aggregates), do* spans are calls, ai.toolCall spans are tools
    spans: [
      ['ai.generateText', 'agent_step', 'ai', 3],
      ['ai.streamText', 'agent_step', 'ai', 1],
      ['ai.generateText.doGenerate', 'llm_call', 'ai', 5],
      ['ai.streamText.doStream', 'llm_call', 'ai', 3],
      ['ai.toolCall', 'tool', 'ai', 4],
    ],
    calls: {
      // OpenAI Responses, generateText: one run, sessionId metadata is the conversation
      tools: {
        shared: shared('vercel', 'openai.responses', OPENAI_MODEL, OPENAI_WINDOW),
        run: 'trace',
        traces: 1,
        usage: OPENAI_TOOLS_USAGE.map(withCacheRead),
        ...VERCEL_TOOLS,
      },
      // streamText: v6 input_tokens include cache reads and writes
      anthropic: {
        shared: shared('vercel', 'anthropic.messages', ANTHROPIC_MODEL, ANTHROPIC_WINDOW),
        usage: ANTHROPIC_TOOLS_USAGE.map(withCache),
        ...VERCEL_TOOLS,
      },
      // two runs of one session
      finding: {
        shared: shared('vercel', 'openai.chat', OPENAI_MODEL, OPENAI_WINDOW),
        run: 'trace',
        traces: 2,
        usage: OPENAI_FINDING_USAGE.map(withCacheRead),
        finish: FINDING_FINISH('stop', 'length'),
        full: FINDING_FULL,
      },
    },
    findings: FINDING,
    checks: vercelAiRows,
  }),
  row<void>({
    name: 'anthropic-sdk',
    conversations: () => ({
      tools: anthropicSdk.TOOLS_CONVERSATION,
      finding: anthropicSdk.FINDING_CONVERSATION,
    }),
    requests: requestsTo('messages', [false, true, true, false, true]),
    // one CLIENT span per API call once a tracer provider is registered
    spans: [['anthropic.messages.create', 'llm_call', 'com.anthropic.sdk.typescript', 5]],
    calls: {
      // gen_ai.conversation.id from the request option; inclusive input, cache_write spelling
      tools: {
        shared: shared('semconv', 'anthropic', ANTHROPIC_MODEL, ANTHROPIC_WINDOW),
        usage: ANTHROPIC_TOOLS_USAGE.map(withCache),
        // raw anthropic.message.stop_reason; streamed spans carry no gen_ai.output.messages,
        // so the tool's name is unknown there
        finish: [
          ['tool_use', 'tool_call', true, 'read_file'],
          ['tool_use', 'tool_call', true, null],
          ['end_turn', 'stop', false, null],
        ],
        // tool results given as content blocks are sized as their text (3000), not the JSON
        // of the blocks (3069)
        parts: TOOLS_PARTS,
      },
      finding: {
        shared: shared('semconv', 'anthropic', ANTHROPIC_MODEL, ANTHROPIC_WINDOW),
        usage: ANTHROPIC_FINDING_USAGE.map(withCache),
        finish: FINDING_FINISH('end_turn', 'max_tokens'),
        full: FINDING_FULL,
      },
    },
    findings: FINDING,
  }),
  row<void>({
    name: 'langchain-openinference',
    conversations: () => ({
      loop: langchainOpenInference.LOOP_SESSION,
      finding: langchainOpenInference.FINDING_SESSION,
    }),
    // calls 5–8 and finding 2 streamed
    requests: [
      ...Array<Request>(4).fill(['chat', false]),
      ...Array<Request>(4).fill(['chat', true]),
      ['chat', false],
      ['chat', true],
    ],
    // LangChain's tool runs are kept as tools
    spans: [['ChatOpenAI', 'llm_call', LANGCHAIN_SCOPE, 10], ...loopToolSpans(LANGCHAIN_SCOPE)],
    calls: {
      // tokens on every call, streamed ones included; raw finish reasons
      loop: {
        shared: { producer: 'openinference', request_model: OPENAI_MODEL },
        usage: LOOP_USAGE.map((u) => ({ context_tokens: contextOf(u) })),
        finish: [
          ['tool_calls', 'tool_call', true, 'read_file'],
          ['tool_calls', 'tool_call', true, 'list_dir'],
          ['tool_calls', 'tool_call', true, 'git_log'],
          ['stop', 'stop', false, null],
          ['length', 'output_limit', false, null],
          ['length', 'output_limit', true, 'write_file'],
          ['tool_calls', 'tool_call', true, 'write_file'],
          ['stop', 'stop', false, null],
        ],
        // the flattened messages have no call ids: tool results named by message order
        readFileInInput: LOOP_READ_FILE,
        toolResults: LOOP_TOOL_NAMES,
      },
      finding: {
        shared: { producer: 'openinference', request_model: OPENAI_MODEL },
        usage: OPENAI_FINDING_USAGE.map((u) => ({ context_tokens: contextOf(u) })),
      },
    },
    findings: [
      ...FINDING,
      // calls 7→8 of the loop: 29,000 → 6,000 tokens with no compaction marker
      ['loop', 'history_lost', 'warning', 'lost', null],
      // call 5: a cut text (warning), call 6: a tool call cut at the output limit (critical)
      ['loop', 'output_cut_off', 'warning', null, null],
      ['loop', 'output_cut_off', 'critical', null, null],
      // read_file's 3,000 chars in the input of calls 2–4 (the tool named by message order)
      ['loop', 'tool_takeover', 'warning', null, 'read_file'],
    ],
    checks: langchainOpenInferenceRows,
  }),
  row<void>({
    name: 'langfuse',
    conversations: () => ({ loop: langfuse.LOOP_SESSION, finding: langfuse.FINDING_SESSION }),
    // only "finding" 2 is streamed
    requests: [...Array<Request>(9).fill(['chat', false]), ['chat', true]],
    // generations and tools kept by langfuse.observation.type
    spans: [['OpenAI.chat', 'llm_call', 'langfuse-sdk', 10], ...loopToolSpans('langfuse-sdk')],
    calls: {
      // session.id is the conversation; usage_details input + cached = the context; model
      // from model.name; no finish reason at all
      loop: {
        shared: {
          conversation_synthetic: false,
          producer: 'langfuse',
          request_model: OPENAI_MODEL,
          context_window: OPENAI_WINDOW,
          finish_reason_raw: null,
        },
        usage: LOOP_USAGE.map((u) => ({
          input_tokens_raw: u.fresh,
          cache_read_tokens: u.cacheRead ?? 0,
          context_tokens: contextOf(u),
          usage_rule: 'exclusive_producer',
        })),
        // named from the request messages (by call id), and by the tool observations
        readFileInInput: LOOP_READ_FILE,
        toolResults: LOOP_TOOL_NAMES,
        toolResultSizes: LOOP_TOOL_SIZES,
      },
      // the streamed call at 80% of the window; its cut is invisible (no finish reason)
      finding: {
        shared: { finish_reason_raw: null },
        usage: OPENAI_FINDING_USAGE.map((u) => ({
          context_tokens: contextOf(u),
          output_tokens: u.output,
        })),
      },
    },
    // no finish reason anywhere: output_cut_off is blind (the cut calls 5, 6 and "finding" 2)
    findings: [
      ['finding', 'context_too_full', 'warning', null, null],
      ['loop', 'history_lost', 'warning', 'lost', null],
      ['loop', 'tool_takeover', 'warning', null, 'read_file'],
    ],
    checks: langfuseRows,
  }),
  row<void>({
    name: 'claude-code',
    conversations: () => ({
      tools: claudeCode.TOOLS_SESSION,
      finding: claudeCode.FINDING_SESSION,
    }),
    // simulated: no provider is called
    requests: [],
    spans: [
      ['claude_code.interaction', 'agent_step', CLAUDE_CODE_SCOPE, 4],
      ['claude_code.llm_request', 'llm_call', CLAUDE_CODE_SCOPE, 8],
      ['claude_code.tool', 'tool', CLAUDE_CODE_SCOPE, 2],
      ['claude_code.tool.blocked_on_user', 'tool', CLAUDE_CODE_SCOPE, 2],
      ['claude_code.tool.execution', 'tool', CLAUDE_CODE_SCOPE, 2],
    ],
    calls: {
      // the session is the conversation and the run across its prompts' traces; unprefixed
      // input_tokens exclude the cache: context = input + cache read + cache creation
      tools: {
        shared: {
          conversation_synthetic: false,
          producer: 'claude_code',
          provider: 'anthropic',
          request_model: claudeCode.MODEL,
          context_window: 200_000,
          window_source: 'catalog',
        },
        run: 'conversation',
        traces: 2,
        usage: CC_TOOLS_CALLS.map(ccUsage),
        finish: CC_TOOLS_CALLS.map(ccFinish),
      },
      // a call at 80% of the window, a compaction (side call + event), then a max_tokens stop
      finding: {
        shared: { request_model: claudeCode.MODEL },
        usage: CC_FINDING_CALLS.map(ccUsage),
        finish: CC_FINDING_CALLS.map(ccFinish),
        full: {
          call: 0,
          share: contextOf(ccScripted(claudeCode.FINDING_CALLS.full)) / 200_000,
        },
      },
    },
    findings: [
      ['finding', 'context_too_full', 'warning', null, null],
      // the compaction before prompt 2's call: the drop is explained, so info
      ['finding', 'history_lost', 'info', 'compacted', null],
      ['finding', 'output_cut_off', 'warning', null, null],
    ],
    checks: claudeCodeRows,
  }),
];

/** A simulated Claude Code call's usage in the script's terms. */
function ccScripted(call: claudeCode.CcCall): ScriptedUsage {
  return {
    fresh: call.usage.input,
    cacheRead: call.usage.cacheRead,
    cacheWrite: call.usage.cacheCreation,
    output: call.usage.output,
  };
}

/** A simulated Claude Code call's finish: its raw stop_reason, classified; no tool names sent. */
function ccFinish(call: claudeCode.CcCall): Finish {
  const classes: Record<string, Finish> = {
    tool_use: ['tool_use', 'tool_call', true, null],
    end_turn: ['end_turn', 'stop', false, null],
    max_tokens: ['max_tokens', 'output_limit', false, null],
  };
  return classes[call.stopReason]!;
}

/** Claude Code's unprefixed input_tokens exclude the cache; the producer says so. */
function ccUsage(call: claudeCode.CcCall) {
  return exclusiveUsage(ccScripted(call), 'exclusive_producer');
}

describe.each(TABLE)('producer $name', (r) => {
  // filled in by beforeAll, which runs before the columns' and the row's own tests
  const ctx = {} as ProducerRun<unknown>;
  let h: Harness | undefined;
  const ids = () => r.conversations(ctx.result);
  const conversations = Object.entries(r.calls);
  const withData = <K extends keyof ConversationCalls>(key: K) =>
    conversations.filter(([, c]) => c[key] !== undefined);
  // a column runs for the rows that give its data
  const has = (key: keyof ConversationCalls) => withData(key).length > 0;
  const callsOfLabel = (label: string) => callsOf(ctx.h, ids()[label]);

  beforeAll(async () => {
    h = await startHarness();
    ctx.h = h;
    ctx.result = await PRODUCERS[r.name].run(h.opts);
  }, 120_000);

  afterAll(async () => {
    await h?.close();
  });

  describe('requests', () => {
    it('the real client hit the fake provider as scripted', () => {
      expect(ctx.h.llm.pending()).toBe(0);
      expect(ctx.h.llm.requests.map((q): Request => [q.endpoint, q.stream])).toEqual(r.requests);
    });
  });

  describe('spans', () => {
    it('keeps exactly these spans, by name, role and scope', async () => {
      const counts = new Map<string, SpanCount>();
      for (const s of await spansOf(ctx.h)) {
        const key = JSON.stringify([s.name, s.role, s.scope_name]);
        const seen = counts.get(key) ?? [s.name, s.role, s.scope_name, 0];
        seen[3] += 1;
        counts.set(key, seen);
      }
      expect(byValue([...counts.values()])).toEqual(byValue(r.spans));
    });
  });

  describe('calls', () => {
    it.each(conversations)(
      '"%s": the calls, their shared fields, conversation and run',
      async (label, c) => {
        const id = ids()[label]!;
        const calls = await callsOfLabel(label);
        expect(calls).toHaveLength(c.usage.length);
        for (const call of calls) {
          expect(call).toMatchObject(c.shared);
          expect(call.stream_key).toBe(`${id}|${call.agent_id ?? 'main'}`);
          if (c.run === 'trace') expect(call.run_id).toBe(call.trace_id);
          if (c.run === 'conversation') expect(call.run_id).toBe(id);
        }
        if (c.traces !== undefined)
          expect(new Set(calls.map((x) => x.trace_id)).size).toBe(c.traces);
      },
    );
  });

  describe('usage', () => {
    it.each(conversations)('"%s": usage of each call', async (label, c) => {
      expect((await callsOfLabel(label)).map(usageOf)).toMatchObject(c.usage);
    });
  });

  describe.runIf(has('finish'))('finish', () => {
    it.each(withData('finish'))(
      '"%s": finish reason, class and output tool call of each call',
      async (label, c) => {
        const calls = await callsOfLabel(label);
        expect(
          calls.map((x): Finish => [
            x.finish_reason_raw,
            x.finish_class,
            x.output_tool_call,
            x.output_tool_name,
          ]),
        ).toEqual(c.finish);
      },
    );
  });

  describe.runIf(has('parts') || has('readFileInInput'))('parts', () => {
    it.each(withData('parts'))('"%s": input parts of each call', async (label, c) => {
      expect((await callsOfLabel(label)).map(partsOf)).toEqual(c.parts);
    });

    it.each(withData('readFileInInput'))(
      '"%s": read_file in each call\'s input, every tool result named',
      async (label, c) => {
        const calls = await callsOfLabel(label);
        expect(calls.map((x) => x.parts?.tools.read_file ?? 0)).toEqual(c.readFileInInput);
        expect(calls.every((x) => !('unknown' in (x.parts?.tools ?? {})))).toBe(true);
      },
    );
  });

  describe.runIf(has('full'))('window', () => {
    it.each(withData('full'))('"%s": the fullest call\'s share of the window', async (label, c) => {
      const call = (await callsOfLabel(label))[c.full!.call]!;
      expect(countOf(call.context_tokens)! / call.context_window!).toBe(c.full!.share);
      if (c.full!.maxOutputTokens !== undefined)
        expect(countOf(call.max_output_tokens)).toBe(c.full!.maxOutputTokens);
    });
  });

  describe.runIf(has('toolResults'))('tool results', () => {
    it.each(withData('toolResults'))('"%s": tool results by name (and size)', async (label, c) => {
      const rows = await toolResultsOf(ctx.h, ids()[label]);
      expect(rows.map((t) => t.tool_name)).toEqual(c.toolResults);
      if (c.toolResultSizes) expect(rows.map((t) => t.result_size)).toEqual(c.toolResultSizes);
    });
  });

  describe('findings', () => {
    it('draws exactly the expected findings', async () => {
      const label = new Map(Object.entries(ids()).map(([k, v]) => [v, k]));
      const found = (await findingsOf(ctx.h)).map((f): Expected => {
        const details = f.details as { tool?: string } | null;
        return [
          label.get(f.conversation_id) ?? f.conversation_id,
          f.detector,
          f.severity,
          f.kind,
          details?.tool ?? null,
        ];
      });
      expect(byValue(found)).toEqual(byValue(r.findings));
    });
  });

  r.checks?.(ctx);
});
