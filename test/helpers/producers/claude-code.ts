/**
 * Producer: Claude Code 2.1.x native telemetry, SIMULATED.
 *
 * The real Claude Code binary cannot run here (no network to install it, no Anthropic API),
 * so this module reproduces the shapes its documentation and captured exports describe
 * (conventions.md §5: https://code.claude.com/docs/en/monitoring-usage, traces beta with
 * `CLAUDE_CODE_ENABLE_TELEMETRY=1`, `CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1`,
 * `OTEL_TRACES_EXPORTER=otlp`, `OTEL_LOGS_EXPORTER=otlp`), emitted with the real OTel SDK
 * (tracer + logger providers, real OTLP exporters). Nothing here comes from running Claude
 * Code: if its real output differs, this simulation is what is wrong.
 *
 * What it emits, as documented:
 * - one trace per user prompt: `claude_code.interaction` → `claude_code.llm_request` /
 *   `claude_code.tool` (→ `claude_code.tool.blocked_on_user`, `claude_code.tool.execution`);
 *   a sub-agent's spans nest under the parent's `claude_code.tool` span and carry `agent_id`;
 * - every span has `span.type` and the standard attributes (`session.id`, `user.id`, ...);
 * - `claude_code.llm_request`: unprefixed `input_tokens` (EXCLUDING cache),
 *   `cache_read_tokens`, `cache_creation_tokens`, `output_tokens`, `request_id`,
 *   `gen_ai.response.id`, raw `stop_reason` and `gen_ai.response.finish_reasons = [stop_reason]`;
 *   no `gen_ai.usage.*`, no `gen_ai.operation.name`, no `query_source` (plain beta);
 * - log events (no trace context): `claude_code.api_request` per API call (with
 *   `query_source`: `repl_main_thread`, the sub-agent's name, or `compact` for the
 *   summarizer call), `claude_code.tool_result` (`tool_result_size_bytes`),
 *   `claude_code.compaction` (`trigger`, `pre_tokens`, `post_tokens`, `success`). This version
 *   emits no compaction span.
 *
 * Two sessions (each its own conversation and run):
 * - TOOLS_SESSION: prompt 1 reads a file (2 main calls), prompt 2 delegates to a sub-agent
 *   (main call, sub-agent call under the Task tool, main call);
 * - FINDING_SESSION: prompt 1's call sits at 80% of the 200k window; before prompt 2's call
 *   the history is auto-compacted (summarizer call + compaction event), and prompt 2's call
 *   stops on `max_tokens`.
 *
 * Times come from a synthetic clock (one second per step, starting ten minutes ago), so
 * the order of calls is exact.
 */
import { ROOT_CONTEXT, SpanKind, trace, type Context, type Span } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { startTelemetry, type ProducerOptions } from './otel.ts';

export const CLAUDE_CODE_VERSION = '2.1.274';
export const TOOLS_SESSION = '7c1f4e2a-0b7d-4d55-9a61-3f0c2d9e8a11';
export const FINDING_SESSION = '9e2b6d13-5a4c-4f0e-8b27-c61d0f3a7b42';
export const MODEL = 'claude-opus-4-6';
export const SUBAGENT_ID = 'a3f9c2e1';
export const SUBAGENT_TYPE = 'general-purpose';
/** The sub-agent's `query_source` (Claude Code names sub-agent sources `agent:builtin:<type>` / `agent:custom`). */
export const SUBAGENT_QUERY_SOURCE = `agent:builtin:${SUBAGENT_TYPE}`;

export interface CcUsage {
  input: number;
  cacheRead: number;
  cacheCreation: number;
  output: number;
}

export interface CcCall {
  requestId: string;
  usage: CcUsage;
  stopReason: string;
  /** `repl_main_thread`, the sub-agent type, or `compact`. */
  querySource: string;
  agentId?: string;
}

/** The calls of each session, in order, with the numbers the tests assert. */
export const TOOLS_CALLS = {
  p1a: {
    requestId: 'req_cc_t1',
    usage: { input: 3, cacheRead: 0, cacheCreation: 15000, output: 210 },
    stopReason: 'tool_use',
    querySource: 'repl_main_thread',
  },
  p1b: {
    requestId: 'req_cc_t2',
    usage: { input: 5, cacheRead: 15000, cacheCreation: 1200, output: 320 },
    stopReason: 'end_turn',
    querySource: 'repl_main_thread',
  },
  p2a: {
    requestId: 'req_cc_t3',
    usage: { input: 4, cacheRead: 16200, cacheCreation: 900, output: 110 },
    stopReason: 'tool_use',
    querySource: 'repl_main_thread',
  },
  sub: {
    requestId: 'req_cc_t4',
    usage: { input: 6, cacheRead: 0, cacheCreation: 4000, output: 260 },
    stopReason: 'end_turn',
    querySource: SUBAGENT_QUERY_SOURCE,
    agentId: SUBAGENT_ID,
  },
  p2b: {
    requestId: 'req_cc_t5',
    usage: { input: 3, cacheRead: 17100, cacheCreation: 600, output: 150 },
    stopReason: 'end_turn',
    querySource: 'repl_main_thread',
  },
} satisfies Record<string, CcCall>;

export const READ_TOOL = {
  toolUseId: 'toolu_cc_read_1',
  name: 'Read',
  resultTokens: 750,
  resultBytes: 3000,
};
export const TASK_TOOL = {
  toolUseId: 'toolu_cc_task_1',
  name: 'Task',
  resultTokens: 180,
  resultBytes: 720,
};

export const FINDING_CALLS = {
  full: {
    requestId: 'req_cc_f1',
    usage: { input: 2, cacheRead: 158000, cacheCreation: 2000, output: 400 },
    stopReason: 'end_turn',
    querySource: 'repl_main_thread',
  },
  compact: {
    requestId: 'req_cc_f2',
    usage: { input: 3, cacheRead: 160000, cacheCreation: 0, output: 9000 },
    stopReason: 'end_turn',
    querySource: 'compact',
  },
  cut: {
    requestId: 'req_cc_f3',
    usage: { input: 5, cacheRead: 0, cacheCreation: 12400, output: 32000 },
    stopReason: 'max_tokens',
    querySource: 'repl_main_thread',
  },
} satisfies Record<string, CcCall>;

export const COMPACTION = {
  trigger: 'auto',
  preTokens: 160402,
  postTokens: 12400,
  durationMs: 41000,
};

export async function runClaudeCode(opts: ProducerOptions): Promise<void> {
  const telemetry = startTelemetry(opts, 'claude-code');
  const tracer = telemetry.tracerProvider.getTracer(
    'com.anthropic.claude_code',
    CLAUDE_CODE_VERSION,
  );
  const logger = telemetry.loggerProvider.getLogger(
    'com.anthropic.claude_code.events',
    CLAUDE_CODE_VERSION,
  );
  let clock = Date.now() - 10 * 60_000;
  const tick = (ms = 1000) => (clock += ms);
  let eventSequence = 0;

  const standard = (sessionId: string) => ({
    'session.id': sessionId,
    'user.id': 'b1c7f0e2d4a6',
    'user.account_uuid': '5f0e8c2a-1d3b-4c6e-9a7f-0b2d4e6f8a1c',
    'organization.id': '3d5f7a9b-2c4e-4f6a-8b0d-1e3f5a7c9e2b',
    'terminal.type': 'vscode',
  });

  function event(
    sessionId: string,
    promptId: string,
    name: string,
    attributes: Record<string, string | number | boolean>,
  ) {
    logger.emit({
      timestamp: clock,
      observedTimestamp: clock,
      context: ROOT_CONTEXT,
      severityNumber: SeverityNumber.INFO,
      eventName: `claude_code.${name}`,
      body: `claude_code.${name}`,
      attributes: {
        ...standard(sessionId),
        'event.name': name,
        'event.timestamp': new Date(clock).toISOString(),
        'event.sequence': eventSequence++,
        'prompt.id': promptId,
        ...attributes,
      },
    });
  }

  function span(
    name: string,
    parent: Context,
    sessionId: string,
    attributes: Record<string, string | number | boolean | string[]>,
  ): Span {
    return tracer.startSpan(
      `claude_code.${name}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: tick(),
        attributes: { 'span.type': name, ...standard(sessionId), ...attributes },
      },
      parent,
    );
  }

  function llmRequest(
    parent: Context,
    sessionId: string,
    promptId: string,
    call: CcCall,
    context: string,
  ) {
    const s = span('llm_request', parent, sessionId, {
      model: MODEL,
      'gen_ai.system': 'anthropic',
      'gen_ai.request.model': MODEL,
      'llm_request.context': context,
      ...(call.agentId ? { agent_id: call.agentId } : {}),
      attempt: 1,
      client_request_id: `${call.requestId}-client`,
    });
    const durationMs = 2000;
    s.setAttributes({
      duration_ms: durationMs,
      ttft_ms: 600,
      input_tokens: call.usage.input,
      output_tokens: call.usage.output,
      cache_read_tokens: call.usage.cacheRead,
      cache_creation_tokens: call.usage.cacheCreation,
      request_id: call.requestId,
      'gen_ai.response.id': call.requestId,
      success: true,
      status_code: 200,
      'response.has_tool_call': call.stopReason === 'tool_use',
      stop_reason: call.stopReason,
      'gen_ai.response.finish_reasons': [call.stopReason],
    });
    s.end(tick(durationMs));
    event(sessionId, promptId, 'api_request', {
      model: MODEL,
      cost_usd: 0.01,
      duration_ms: durationMs,
      input_tokens: call.usage.input,
      output_tokens: call.usage.output,
      cache_read_tokens: call.usage.cacheRead,
      cache_creation_tokens: call.usage.cacheCreation,
      request_id: call.requestId,
      client_request_id: `${call.requestId}-client`,
      query_source: call.querySource,
      speed: 'normal',
      ...(call.agentId ? { 'agent.name': SUBAGENT_TYPE } : {}),
    });
  }

  /** A tool span with its blocked_on_user and execution children; `body` runs inside it (sub-agents). */
  function toolSpan(
    parent: Context,
    sessionId: string,
    promptId: string,
    tool: { toolUseId: string; name: string; resultTokens: number; resultBytes: number },
    body?: (ctx: Context) => void,
  ) {
    const s = span('tool', parent, sessionId, {
      tool_name: tool.name,
      tool_name_safe: tool.name,
      tool_use_id: tool.toolUseId,
      'gen_ai.tool.call.id': tool.toolUseId,
      ...(tool.name === 'Task' ? { subagent_type: SUBAGENT_TYPE } : {}),
    });
    const ctx = trace.setSpan(parent, s);
    span('tool.blocked_on_user', ctx, sessionId, {
      duration_ms: 0,
      decision: 'accept',
      source: 'config',
    }).end(tick(1));
    const exec = span('tool.execution', ctx, sessionId, {
      tool_use_id: tool.toolUseId,
      'gen_ai.tool.call.id': tool.toolUseId,
    });
    body?.(ctx);
    exec.setAttributes({ success: true, duration_ms: 1500 });
    exec.end(tick());
    s.setAttributes({ duration_ms: 1600, result_tokens: tool.resultTokens });
    s.end(tick(1));
    event(sessionId, promptId, 'tool_result', {
      tool_name: tool.name,
      tool_use_id: tool.toolUseId,
      success: true,
      duration_ms: 1500,
      tool_input_size_bytes: 64,
      tool_result_size_bytes: tool.resultBytes,
    });
  }

  function interaction(
    sessionId: string,
    sequence: number,
    promptLength: number,
    body: (ctx: Context, promptId: string) => void,
  ) {
    const promptId = `${sessionId.slice(0, 8)}-prompt-${sequence}`;
    event(sessionId, promptId, 'user_prompt', {
      prompt_length: promptLength,
      prompt: '<REDACTED>',
    });
    const root = span('interaction', ROOT_CONTEXT, sessionId, {
      user_prompt: '<REDACTED>',
      user_prompt_length: promptLength,
      'interaction.sequence': sequence,
    });
    body(trace.setSpan(ROOT_CONTEXT, root), promptId);
    root.setAttribute('interaction.duration_ms', 9000);
    root.end(tick());
  }

  try {
    // TOOLS_SESSION
    interaction(TOOLS_SESSION, 1, 33, (ctx, promptId) => {
      llmRequest(ctx, TOOLS_SESSION, promptId, TOOLS_CALLS.p1a, 'interaction');
      toolSpan(ctx, TOOLS_SESSION, promptId, READ_TOOL);
      llmRequest(ctx, TOOLS_SESSION, promptId, TOOLS_CALLS.p1b, 'interaction');
    });
    interaction(TOOLS_SESSION, 2, 58, (ctx, promptId) => {
      llmRequest(ctx, TOOLS_SESSION, promptId, TOOLS_CALLS.p2a, 'interaction');
      toolSpan(ctx, TOOLS_SESSION, promptId, TASK_TOOL, (toolCtx) => {
        llmRequest(toolCtx, TOOLS_SESSION, promptId, TOOLS_CALLS.sub, 'tool');
      });
      llmRequest(ctx, TOOLS_SESSION, promptId, TOOLS_CALLS.p2b, 'interaction');
    });

    // FINDING_SESSION
    interaction(FINDING_SESSION, 1, 41, (ctx, promptId) => {
      llmRequest(ctx, FINDING_SESSION, promptId, FINDING_CALLS.full, 'interaction');
    });
    interaction(FINDING_SESSION, 2, 27, (ctx, promptId) => {
      // auto-compaction before the prompt's first call: the summarizer call, then the event
      llmRequest(ctx, FINDING_SESSION, promptId, FINDING_CALLS.compact, 'interaction');
      tick();
      event(FINDING_SESSION, promptId, 'compaction', {
        trigger: COMPACTION.trigger,
        success: true,
        duration_ms: COMPACTION.durationMs,
        pre_tokens: COMPACTION.preTokens,
        post_tokens: COMPACTION.postTokens,
      });
      llmRequest(ctx, FINDING_SESSION, promptId, FINDING_CALLS.cut, 'interaction');
    });
  } finally {
    await telemetry.shutdown();
  }
}
