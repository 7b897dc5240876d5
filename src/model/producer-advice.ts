/**
 * Advice in the words of the agent that sent the calls. A Claude Code user cannot "send
 * gen_ai.input.messages" or "raise max tokens" in code: they set an environment variable of
 * Claude Code, or run `rotscope claude-code install`. Where a producer has its own knob, the
 * coverage hints and the findings' advice name it; elsewhere the generic advice stands.
 * Knobs named here are the ones measured from the real CLIs (conventions.md §5.0–5.0.2).
 */

import { CLAUDE_CODE_CALL_PRODUCERS } from './window-catalog.ts';
import { plural } from './plural.ts';

/** The detectors whose coverage the Coverage page reports. */
export type CoverageDetector =
  'context_too_full' | 'tool_takeover' | 'history_lost' | 'output_cut_off';

/** The agent a producer id belongs to (several producer ids per agent: spans, logs, files). */
export type Agent =
  'claude_code' | 'codex' | 'gemini_cli' | 'copilot_cli' | 'opencode' | 'qwen_code';

const AGENT_OF: Record<string, Agent> = {
  ...Object.fromEntries(CLAUDE_CODE_CALL_PRODUCERS.map((producer) => [producer, 'claude_code'])),
  codex: 'codex',
  codex_session: 'codex',
  gemini_cli: 'gemini_cli',
  copilot_cli: 'copilot_cli',
  copilot_session: 'copilot_cli',
  opencode: 'opencode',
  qwen_code: 'qwen_code',
  qwen_code_session: 'qwen_code',
};

/** The agent behind a producer id, or undefined for a library or SDK producer. */
export function agentOf(producer: string | null | undefined): Agent | undefined {
  return producer ? AGENT_OF[producer] : undefined;
}

/** How each agent is named to people. */
export const AGENT_NAMES: Record<Agent, string> = {
  claude_code: 'Claude Code',
  codex: 'Codex CLI',
  gemini_cli: 'Gemini CLI',
  copilot_cli: 'GitHub Copilot CLI',
  opencode: 'OpenCode',
  qwen_code: 'Qwen Code',
};

const CLAUDE_CODE_INSTALL =
  'rotscope claude-code install writes all of it into ~/.claude/settings.json';

/** What to turn on in each agent so a blind detector sees its calls. */
const COVERAGE_HINTS: Record<Agent, Record<CoverageDetector, string>> = {
  claude_code: {
    context_too_full: `turn on Claude Code's telemetry (CLAUDE_CODE_ENABLE_TELEMETRY=1, OTEL_LOGS_EXPORTER=otlp and, for spans, CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1 with OTEL_TRACES_EXPORTER=otlp): its api_request events carry every call's tokens and model; ${CLAUDE_CODE_INSTALL}`,
    tool_takeover: `Claude Code sends each tool result's size in its tool_result log events (no message content is needed): set OTEL_LOGS_EXPORTER=otlp; ${CLAUDE_CODE_INSTALL}. For the system prompt's share, turn on detailed beta tracing (ENABLE_BETA_TRACING_DETAILED=1) or import the transcripts (rotscope import ~/.claude/projects)`,
    history_lost: `send Claude Code's logs and spans (OTEL_LOGS_EXPORTER=otlp, OTEL_TRACES_EXPORTER=otlp) so every call's tokens and its compactions arrive, and install the compaction hook; ${CLAUDE_CODE_INSTALL}`,
    output_cut_off: `Claude Code says why a response ended on its spans: turn on CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1 with OTEL_TRACES_EXPORTER=otlp, or import the transcripts (rotscope import ~/.claude/projects); ${CLAUDE_CODE_INSTALL}`,
  },
  codex: {
    context_too_full:
      "send Codex's traces and logs (rotscope codex install writes the [otel] table of ~/.codex/config.toml): the model is on its logs and the window on its session files",
    tool_takeover:
      "send Codex's logs and traces (rotscope codex install): codex.tool_result carries each result's size",
    history_lost:
      "send Codex's traces (rotscope codex install): every call's tokens and its compactions (run_auto_compact) are on them",
    output_cut_off:
      "Codex's telemetry carries no finish reason (a cut response fails the turn and sends no usage): import its session files with rotscope import ~/.codex/sessions, or run rotscope analyze on them",
  },
  gemini_cli: {
    context_too_full:
      "turn on Gemini CLI's traces as well as its logs (GEMINI_TELEMETRY_TRACES_ENABLED=true; rotscope gemini install writes it): without traces its calls carry no token counts",
    tool_takeover:
      "keep Gemini CLI's telemetry.logPrompts on (its default; rotscope gemini install leaves it as it is): its logs then carry the content that gives each tool result its size",
    history_lost:
      "turn on Gemini CLI's traces and logs (rotscope gemini install): the calls' tokens come on the spans and its chat_compression events on the logs",
    output_cut_off:
      'Gemini CLI sends finish reasons only in its api_response log events: turn on its logs (rotscope gemini install)',
  },
  copilot_cli: {
    context_too_full:
      "send GitHub Copilot CLI's traces (OTEL_EXPORTER_OTLP_ENDPOINT in the shell profile; rotscope copilot install prints the lines): its chat spans carry every call's tokens and its invoke_agent span its own window (token_limit)",
    tool_takeover:
      'let GitHub Copilot CLI send its tool results (telemetry.capture.toolOutput in ~/.copilot/settings.json; rotscope copilot install writes it): without them its spans carry no tool sizes',
    history_lost:
      "send GitHub Copilot CLI's traces (rotscope copilot install): every call's tokens, and its compactions (session.compaction_complete), are on them",
    output_cut_off:
      "send GitHub Copilot CLI's traces (rotscope copilot install): its chat spans carry the finish reasons, and the execute_tool span of a cut tool call names the tool",
  },
  opencode: {
    context_too_full:
      'OpenCode exports its model calls only with experimental.openTelemetry in opencode.json and OTEL_EXPORTER_OTLP_ENDPOINT in its environment (rotscope opencode install writes the one and prints the other); it sends no window: a custom model the catalog lacks needs a window override',
    tool_takeover:
      "turn on OpenCode's model-call spans (experimental.openTelemetry; rotscope opencode install): their prompt carries each tool result",
    history_lost:
      "turn on OpenCode's model-call spans (rotscope opencode install): every call's tokens and its compaction summary calls are on them; set OTEL_BSP_SCHEDULE_DELAY=500 so fewer of the last spans are lost when opencode run exits",
    output_cut_off:
      "turn on OpenCode's model-call spans (rotscope opencode install): they carry the finish reason and the tool of a cut call",
  },
  qwen_code: {
    context_too_full:
      "send Qwen Code's telemetry (rotscope qwen install writes the telemetry block of ~/.qwen/settings.json): its qwen-code.llm_request spans carry every call's tokens, model and window",
    tool_takeover:
      "send Qwen Code's logs as well as its spans (rotscope qwen install): its qwen-code.tool_call events carry each tool result's size (content_length)",
    history_lost:
      "send Qwen Code's logs and spans (rotscope qwen install): its qwen-code.chat_compression events tell a compression from lost history, and keep telemetry.logPrompts on so the compressor's requests are told apart",
    output_cut_off:
      "send Qwen Code's spans (rotscope qwen install): the finish reason is on its qwen-code.llm_request spans",
  },
};

/**
 * What an agent cannot send, whatever is turned on: the Coverage page says it beside the agent's
 * calls, so a quiet detector is not read as a clean bill.
 */
const AGENT_LIMITS: Partial<Record<Agent, Partial<Record<CoverageDetector, string>>>> = {
  qwen_code: {
    output_cut_off:
      'Qwen Code exports nothing that shows a tool call cut at the output limit (no tool span, no tool_call event, no response text): such a cut is a warning whose output is unknown, not a critical finding naming the tool',
  },
};

/** What `producer`'s agent cannot send, per detector (empty for producers without limits). */
export function agentLimits(producer: string | null): Partial<Record<CoverageDetector, string>> {
  const agent = agentOf(producer);
  return (agent && AGENT_LIMITS[agent]) ?? {};
}

/** The hint for a detector blind on `producer`'s calls, when the producer has its own. */
export function coverageHint(
  producer: string | null,
  detector: CoverageDetector,
): string | undefined {
  const agent = agentOf(producer);
  return agent ? COVERAGE_HINTS[agent][detector] : undefined;
}

/**
 * Said of an agent's calls cut at the output limit when nothing says whether the cut output was
 * a tool call: Claude Code (and Claude Agent SDK apps, which run it) export no tool span, no
 * `tool_decision` and no `tool_result` for a tool call cut by `max_tokens`, and their spans carry
 * only `stop_reason` unless detailed beta tracing adds `response.has_tool_call`. Undefined for
 * producers without such a note.
 */
export function cutToolUnknownHint(producer: string | null, calls: number): string | undefined {
  if (agentOf(producer) !== 'claude_code') return undefined;
  const n = plural(calls, 'response', 'responses', String);
  return `${n} cut at the output limit: Claude Code (and the Claude Agent SDK, which runs it) exports nothing for a tool call cut there, so such a cut is reported as a warning, not as a critical cut tool call naming the tool. Detailed beta tracing (ENABLE_BETA_TRACING_DETAILED=1) says whether the cut output was a tool call; importing the transcripts (rotscope import ~/.claude/projects) names the tool; ${CLAUDE_CODE_INSTALL}.`;
}

/** What to do about a cut-off output, in the producer's words. */
export function cutOffAdvice(producer: string | null, toolCall: boolean): string {
  switch (agentOf(producer)) {
    case 'claude_code':
      return toolCall
        ? "raise Claude Code's output limit with CLAUDE_CODE_MAX_OUTPUT_TOKENS (in the env block of ~/.claude/settings.json, e.g. 64000; the model's own cap still applies), or ask for the large file or edit in smaller pieces"
        : "raise Claude Code's output limit with CLAUDE_CODE_MAX_OUTPUT_TOKENS (in the env block of ~/.claude/settings.json, e.g. 64000; the model's own cap still applies), or ask for a shorter answer";
    case 'copilot_cli':
      return toolCall
        ? 'GitHub Copilot CLI asks for at most 4,096 output tokens per call and runs a cut tool call with its arguments cleared: ask for the large file or edit in smaller pieces'
        : 'GitHub Copilot CLI asks for at most 4,096 output tokens per call (it asks the model to continue): ask for a shorter answer or one in parts';
    case 'opencode':
      return toolCall
        ? "raise the model's limit.output in opencode.json (OpenCode asks for at most 32,000 output tokens unless OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX says otherwise), or ask for the large file or edit in smaller pieces"
        : "raise the model's limit.output in opencode.json (OpenCode asks for at most 32,000 output tokens unless OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX says otherwise), or ask for a shorter answer";
    case 'codex':
      return 'ask Codex for the large output in smaller pieces (a cut response fails its turn), or pick a model with a larger output limit';
    default:
      return toolCall
        ? 'raise the output limit (max tokens) for this call, or have the model write large tool input in smaller pieces'
        : 'raise the output limit (max tokens), or ask for a shorter answer';
  }
}
