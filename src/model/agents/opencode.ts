/**
 * OpenCode (agents.md; src/ingest/opencode.ts): the AI SDK's `ai.streamText` spans with
 * `experimental.openTelemetry`; its sessions (sqlite) are not read.
 */
import type { AgentProfile } from './types.ts';

export const openCode = {
  id: 'opencode',
  name: 'OpenCode',
  producers: ['opencode'],
  installer: {
    command: 'opencode',
    module: 'opencode-install',
    usage: `  rotscope opencode install [--user|--project] [--url URL] [--token TOKEN] [--keep-exporter] [--uninstall] [--dry-run]
                                             turn on OpenCode's model-call spans (opencode.json) and print the OTLP lines for the shell profile`,
  },
  recognize: { producer: 'opencode', serviceNames: ['opencode'] },
  telemetry: {
    sideCallMarkers: {
      // the last user message of its compaction's summary request, and that request's system prompt
      summaryPrompt: 'Here is the conversation so far:',
      summarySystem: 'You are a context summarization agent',
      // the system prompt of its title generator
      titleSystem: 'You are a title generator',
    },
  },
  coverageHints: {
    context_too_full:
      'OpenCode exports its model calls only with experimental.openTelemetry in opencode.json and OTEL_EXPORTER_OTLP_ENDPOINT in its environment (rotscope opencode install writes the one and prints the other); it sends no window: a custom model the catalog lacks needs a window override',
    tool_takeover:
      "turn on OpenCode's model-call spans (experimental.openTelemetry; rotscope opencode install): their prompt carries each tool result",
    history_lost:
      "turn on OpenCode's model-call spans (rotscope opencode install): every call's tokens and its compaction summary calls are on them; set OTEL_BSP_SCHEDULE_DELAY=500 so fewer of the last spans are lost when opencode run exits",
    output_cut_off:
      "turn on OpenCode's model-call spans (rotscope opencode install): they carry the finish reason and the tool of a cut call",
  },
  cutOffAdvice: (toolCall) =>
    toolCall
      ? "raise the model's limit.output in opencode.json (OpenCode asks for at most 32,000 output tokens unless OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX says otherwise), or ask for the large file or edit in smaller pieces"
      : "raise the model's limit.output in opencode.json (OpenCode asks for at most 32,000 output tokens unless OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX says otherwise), or ask for a shorter answer",
} as const satisfies AgentProfile;
