/**
 * Claude Code (conventions §5.0–5.0.1; src/ingest/spans.ts, claude-code-logs.ts, transcript.ts):
 * spans, log events and transcripts (`~/.claude/projects/<project>/<session>.jsonl`); the Claude
 * Agent SDK runs it, so SDK apps are read as Claude Code.
 */
import { CLAUDE_CODE_CALL_PRODUCERS } from '../window-catalog.ts';
import { plural } from '../plural.ts';
import type { AgentProfile } from './types.ts';

const CLAUDE_CODE_INSTALL =
  'rotscope claude-code install writes all of it into ~/.claude/settings.json';

export const claudeCode = {
  id: 'claude_code',
  name: 'Claude Code',
  producers: CLAUDE_CODE_CALL_PRODUCERS,
  installer: {
    command: 'claude-code',
    module: 'claude-code-install',
    usage: `  rotscope claude-code install [--user|--project] [--url URL] [--token TOKEN] [--keep-statusline] [--no-guard] [--keep-exporter] [--uninstall] [--dry-run]
                                             add (or remove) the status line, hooks and telemetry settings in Claude Code's settings.json`,
  },
  recognize: { producer: 'claude_code', spanNamePrefixes: ['claude_code'] },
  telemetry: {
    // from 2.1.3xx `gen_ai.conversation.id` is a sub-agent's id on its spans (conventions §5.0.1)
    conversationKeys: ['session.id'],
    runIsSession: true,
  },
  splitEvidence: ['claude_code', 'claude_code_log'],
  sessionFiles: {
    format: 'claude_code_transcript',
    name: 'Claude Code transcript',
    where: '~/.claude/projects/*/*.jsonl',
    producer: 'claude_code_transcript',
    reader: 'transcript',
    countedOnce: { by: 'request_id' },
  },
  compactionEvidence: {
    claude_code_event: 'Claude Code’s compaction event',
    claude_code_side_call: 'Claude Code’s compaction request',
    transcript_boundary: 'the compaction boundary in the transcript',
  },
  coverageHints: {
    context_too_full: `turn on Claude Code's telemetry (CLAUDE_CODE_ENABLE_TELEMETRY=1, OTEL_LOGS_EXPORTER=otlp and, for spans, CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1 with OTEL_TRACES_EXPORTER=otlp): its api_request events carry every call's tokens and model; ${CLAUDE_CODE_INSTALL}`,
    tool_takeover: `Claude Code sends each tool result's size in its tool_result log events (no message content is needed): set OTEL_LOGS_EXPORTER=otlp; ${CLAUDE_CODE_INSTALL}. For the system prompt's share, turn on detailed beta tracing (ENABLE_BETA_TRACING_DETAILED=1) or import the transcripts (rotscope import ~/.claude/projects)`,
    history_lost: `send Claude Code's logs and spans (OTEL_LOGS_EXPORTER=otlp, OTEL_TRACES_EXPORTER=otlp) so every call's tokens and its compactions arrive, and install the compaction hook; ${CLAUDE_CODE_INSTALL}`,
    output_cut_off: `Claude Code says why a response ended on its spans: turn on CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1 with OTEL_TRACES_EXPORTER=otlp, or import the transcripts (rotscope import ~/.claude/projects); ${CLAUDE_CODE_INSTALL}`,
  },
  cutOffAdvice: (toolCall) =>
    toolCall
      ? "raise Claude Code's output limit with CLAUDE_CODE_MAX_OUTPUT_TOKENS (in the env block of ~/.claude/settings.json, e.g. 64000; the model's own cap still applies), or ask for the large file or edit in smaller pieces"
      : "raise Claude Code's output limit with CLAUDE_CODE_MAX_OUTPUT_TOKENS (in the env block of ~/.claude/settings.json, e.g. 64000; the model's own cap still applies), or ask for a shorter answer",
  cutToolUnknownHint: (calls) => {
    const n = plural(calls, 'response', 'responses', String);
    return `${n} cut at the output limit: Claude Code (and the Claude Agent SDK, which runs it) exports nothing for a tool call cut there, so such a cut is reported as a warning, not as a critical cut tool call naming the tool. Detailed beta tracing (ENABLE_BETA_TRACING_DETAILED=1) says whether the cut output was a tool call; importing the transcripts (rotscope import ~/.claude/projects) names the tool; ${CLAUDE_CODE_INSTALL}.`;
  },
} as const satisfies AgentProfile;
