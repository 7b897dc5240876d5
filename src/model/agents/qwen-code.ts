/**
 * Qwen Code (agents.md; src/ingest/qwen.ts, qwen-sessions.ts, src/receiver/qwen.ts): spans, and
 * logs carrying the compressor's side calls, compressions and tool sizes; its session files
 * (`~/.qwen/projects/<cwd>/chats/<session>.jsonl`).
 */
import type { AgentProfile } from './types.ts';

export const qwenCode = {
  id: 'qwen_code',
  name: 'Qwen Code',
  producers: ['qwen_code', 'qwen_code_session'],
  installer: {
    command: 'qwen',
    module: 'qwen-install',
    usage: `  rotscope qwen install [--user|--project] [--url URL] [--token TOKEN] [--keep-exporter] [--uninstall] [--dry-run]
                                             point Qwen Code's telemetry (OTLP/HTTP) at a rotscope server in ~/.qwen/settings.json`,
  },
  recognize: { producer: 'qwen_code', scopeNames: ['qwen-code'], serviceNames: ['qwen-code'] },
  telemetry: {
    runIsSession: true,
    window: { onCall: { attribute: 'qwen-code.context.usage', field: 'window_size_tokens' } },
    logEvents: {
      apiRequest: 'qwen-code.api_request',
      apiResponse: 'qwen-code.api_response',
      apiError: 'qwen-code.api_error',
      toolCall: 'qwen-code.tool_call',
      compactions: { 'qwen-code.chat_compression': 'summarize' },
    },
    toolCallKeys: { name: 'function_name', callId: 'call_id', size: 'content_length' },
    compactionKeys: { tokensBefore: 'tokens_before', tokensAfter: 'tokens_after' },
    // the last user message of the history compressor's request
    sideCallMarkers: { compressor: 'You are the component that summarizes a conversation' },
  },
  splitEvidence: ['qwen_code'],
  sessionFiles: {
    format: 'qwen_session',
    name: 'Qwen Code session file',
    where: '~/.qwen/projects/*/chats/*.jsonl',
    producer: 'qwen_code_session',
    reader: 'qwen-sessions',
    // the request id is the response id
    countedOnce: { by: 'request_id' },
  },
  compactionEvidence: {
    qwen_code_event: 'Qwen Code’s chat compression event',
    qwen_code_session: 'Qwen Code’s session file (its chat_compression record)',
  },
  limits: {
    output_cut_off:
      'Qwen Code exports nothing that shows a tool call cut at the output limit (no tool span, no tool_call event, no response text): such a cut is a warning whose output is unknown, not a critical finding naming the tool',
  },
  coverageHints: {
    context_too_full:
      "send Qwen Code's telemetry (rotscope qwen install writes the telemetry block of ~/.qwen/settings.json): its qwen-code.llm_request spans carry every call's tokens, model and window",
    tool_takeover:
      "send Qwen Code's logs as well as its spans (rotscope qwen install): its qwen-code.tool_call events carry each tool result's size (content_length)",
    history_lost:
      "send Qwen Code's logs and spans (rotscope qwen install): its qwen-code.chat_compression events tell a compression from lost history, and keep telemetry.logPrompts on so the compressor's requests are told apart",
    output_cut_off:
      "send Qwen Code's spans (rotscope qwen install): the finish reason is on its qwen-code.llm_request spans",
  },
} as const satisfies AgentProfile;
