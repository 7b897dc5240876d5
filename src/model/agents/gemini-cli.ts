/**
 * Gemini CLI (conventions §5.0.2; src/ingest/gemini.ts, gemini-sessions.ts, src/receiver/gemini.ts):
 * `llm_call` spans, and logs carrying finish reasons, side calls and compressions; its chat files
 * (`~/.gemini/tmp/<project>/chats/session-*.jsonl`).
 */
import type { AgentProfile } from './types.ts';

export const geminiCli = {
  id: 'gemini_cli',
  name: 'Gemini CLI',
  producers: ['gemini_cli', 'gemini_cli_session'],
  installer: {
    command: 'gemini',
    module: 'gemini-install',
    usage: `  rotscope gemini install [--user|--project] [--url URL] [--token TOKEN] [--keep-exporter] [--uninstall] [--dry-run]
                                             point Gemini CLI's telemetry (traces, OTLP/HTTP) at a rotscope server in ~/.gemini/settings.json`,
  },
  recognize: { producer: 'gemini_cli', scopeNames: ['gemini-cli'], serviceNames: ['gemini-cli'] },
  telemetry: {
    runIsSession: true,
    logEvents: {
      apiRequest: 'gemini_cli.api_request',
      apiResponse: 'gemini_cli.api_response',
      apiError: 'gemini_cli.api_error',
      toolCall: 'gemini_cli.tool_call',
      compactions: {
        'gemini_cli.chat_compression': 'summarize',
        'gemini_cli.tool_output_masking': 'clear_tool_results',
      },
    },
    toolCallKeys: { name: 'function_name', size: 'content_length' },
    compactionKeys: { tokensBefore: 'tokens_before', tokensAfter: 'tokens_after' },
  },
  splitEvidence: ['gemini_cli'],
  sessionFiles: {
    format: 'gemini_session',
    name: 'Gemini CLI chat file',
    where: '~/.gemini/tmp/*/chats/session-*.jsonl',
    producer: 'gemini_cli_session',
    reader: 'gemini-sessions',
    countedOnce: { by: 'session', telemetryProducer: 'gemini_cli' },
  },
  compactionEvidence: {
    gemini_cli_event: 'Gemini CLI’s history compression or tool-output masking event',
    gemini_cli_session:
      'Gemini CLI’s chat file (the state snapshot that opens the compressed history)',
  },
  coverageHints: {
    context_too_full:
      "turn on Gemini CLI's traces as well as its logs (GEMINI_TELEMETRY_TRACES_ENABLED=true; rotscope gemini install writes it): without traces its calls carry no token counts",
    tool_takeover:
      "keep Gemini CLI's telemetry.logPrompts on (its default; rotscope gemini install leaves it as it is): its logs then carry the content that gives each tool result its size",
    history_lost:
      "turn on Gemini CLI's traces and logs (rotscope gemini install): the calls' tokens come on the spans and its chat_compression events on the logs",
    output_cut_off:
      'Gemini CLI sends finish reasons only in its api_response log events: turn on its logs (rotscope gemini install)',
  },
} as const satisfies AgentProfile;
