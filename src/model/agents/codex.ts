/**
 * Codex CLI (conventions §5.0.2; src/ingest/codex.ts, codex-sessions.ts): spans and logs, and
 * its session files (`$CODEX_HOME/sessions/<y>/<m>/<d>/rollout-*.jsonl`), which carry its window.
 */
import type { AgentProfile } from './types.ts';

export const codex = {
  id: 'codex',
  name: 'Codex CLI',
  producers: ['codex', 'codex_session'],
  installer: {
    command: 'codex',
    module: 'codex-install',
    usage: `  rotscope codex install [--url URL] [--token TOKEN] [--keep-exporter] [--uninstall] [--dry-run]
                                             send Codex CLI's telemetry to rotscope ([otel] in ~/.codex/config.toml)`,
  },
  // `codex_exec`, `codex_cli_rs`, ...
  recognize: { producer: 'codex', serviceNamePrefixes: ['codex'] },
  sessionFiles: {
    format: 'codex_session',
    name: 'Codex session file',
    where: '$CODEX_HOME/sessions/**/rollout-*.jsonl',
    producer: 'codex_session',
    reader: 'codex-sessions',
    // the turn's trace id and the token counts (src/ingest/codex.ts codexRequestId)
    countedOnce: { by: 'request_id' },
  },
  coverageHints: {
    context_too_full:
      "send Codex's traces and logs (rotscope codex install writes the [otel] table of ~/.codex/config.toml): the model is on its logs and the window on its session files",
    tool_takeover:
      "send Codex's logs and traces (rotscope codex install): codex.tool_result carries each result's size",
    history_lost:
      "send Codex's traces (rotscope codex install): every call's tokens and its compactions (run_auto_compact) are on them",
    output_cut_off:
      "Codex's telemetry carries no finish reason (a cut response fails the turn and sends no usage): import its session files with rotscope import ~/.codex/sessions, or run rotscope analyze on them",
  },
  cutOffAdvice: () =>
    'ask Codex for the large output in smaller pieces (a cut response fails its turn), or pick a model with a larger output limit',
} as const satisfies AgentProfile;
