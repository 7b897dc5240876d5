/**
 * GitHub Copilot CLI (agents.md; src/ingest/copilot.ts, copilot-sessions.ts): GenAI spans, no
 * logs; its session files (`~/.copilot/session-state/<id>/events.jsonl`).
 */
import type { AgentProfile } from './types.ts';

export const copilotCli = {
  id: 'copilot_cli',
  name: 'GitHub Copilot CLI',
  producers: ['copilot_cli', 'copilot_session'],
  installer: {
    command: 'copilot',
    module: 'copilot-install',
    usage: `  rotscope copilot install [--url URL] [--token TOKEN] [--keep-exporter] [--uninstall] [--dry-run] [--print-env]
                                             connect GitHub Copilot CLI: tool results on in ~/.copilot/settings.json, the OTLP lines for the shell profile`,
  },
  recognize: {
    producer: 'copilot_cli',
    serviceNames: ['github-copilot'],
    scopeNames: ['github.copilot'],
  },
  telemetry: {
    // on its `invoke_agent` span, the ancestor of the calls of its run
    window: {
      onRunEvent: {
        event: 'github.copilot.session.usage_info',
        attribute: 'github.copilot.token_limit',
      },
    },
    compactionEvents: {
      start: 'github.copilot.session.compaction_start',
      complete: 'github.copilot.session.compaction_complete',
      successAttribute: 'github.copilot.success',
    },
  },
  sessionFiles: {
    format: 'copilot_session',
    name: 'Copilot CLI session file',
    where: '~/.copilot/session-state/*/events.jsonl',
    producer: 'copilot_session',
    reader: 'copilot-sessions',
    // a call's `apiCallId` is its telemetry's `gen_ai.response.id`
    countedOnce: { by: 'request_id' },
  },
  coverageHints: {
    context_too_full:
      "send GitHub Copilot CLI's traces (OTEL_EXPORTER_OTLP_ENDPOINT in the shell profile; rotscope copilot install prints the lines): its chat spans carry every call's tokens and its invoke_agent span its own window (token_limit)",
    tool_takeover:
      'let GitHub Copilot CLI send its tool results (telemetry.capture.toolOutput in ~/.copilot/settings.json; rotscope copilot install writes it): without them its spans carry no tool sizes',
    history_lost:
      "send GitHub Copilot CLI's traces (rotscope copilot install): every call's tokens, and its compactions (session.compaction_complete), are on them",
    output_cut_off:
      "send GitHub Copilot CLI's traces (rotscope copilot install): its chat spans carry the finish reasons, and the execute_tool span of a cut tool call names the tool",
  },
  cutOffAdvice: (toolCall) =>
    toolCall
      ? 'GitHub Copilot CLI asks for at most 4,096 output tokens per call and runs a cut tool call with its arguments cleared: ask for the large file or edit in smaller pieces'
      : 'GitHub Copilot CLI asks for at most 4,096 output tokens per call (it asks the model to continue): ask for a shorter answer or one in parts',
} as const satisfies AgentProfile;
