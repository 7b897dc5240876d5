/**
 * Producer ids whose data needs a rule beyond normalization: which calls yield to which, and
 * which conversations must settle longer before they are evaluated. The receiver applies them.
 */
import { CODEX_PRODUCER, CODEX_TOOL_RESULT_SOURCE } from './codex.ts';
import { SESSION_FILES } from '../model/agents/index.ts';

/** Claude Code's producers: spans (`claude_code`) and log events (`claude_code_log`). */
export const CLAUDE_CODE_PRODUCERS: readonly string[] = ['claude_code', 'claude_code_log'];

/** Producers whose calls come from log events and yield to a span of the same request id. */
export const LOG_CALL_PRODUCERS: readonly string[] = ['claude_code_log'];

/**
 * Producers that send a call's evidence in two signals on separate export schedules (Claude
 * Code: spans, and log events carrying compactions and side calls; Gemini CLI and Qwen Code
 * alike): their conversations get a longer quiet time before evaluation
 * (`splitEvidenceSettleMs`), so a compaction in the logs is seen before the drop it explains.
 * Declared by each agent's profile (src/model/agents/).
 */
export { SPLIT_EVIDENCE_PRODUCERS } from '../model/agents/index.ts';

/**
 * Producers whose tool results arrive apart from the calls they enter and are joined to the next
 * call of the stream by the receiver (src/receiver/logged-tool-parts.ts): Claude Code's
 * `tool_result` log events, Codex's `codex.tool_result` span and log events (./codex.ts).
 */
export const LOGGED_TOOL_RESULT_PRODUCERS: readonly string[] = [
  ...CLAUDE_CODE_PRODUCERS,
  CODEX_PRODUCER,
];

/** The tool-result sources whose sizes that join adds up (Claude Code's logged bytes, Codex's). */
export const LOGGED_TOOL_RESULT_SOURCES: readonly string[] = [
  'claude_code_log',
  CODEX_TOOL_RESULT_SOURCE,
];

/** True for a tool result of one of those producers (Claude Code's spans and logs, Codex's). */
export function isLoggedToolResultSource(source: string): boolean {
  return source.startsWith('claude_code') || source === CODEX_TOOL_RESULT_SOURCE;
}

/**
 * Producers whose calls come from session files (`rotscope import` of Claude Code transcripts,
 * Codex, Copilot CLI, Qwen Code and Gemini CLI session files): they yield to telemetry of the same
 * request id and fill what it lacks (src/receiver/merge-rules.ts). Declared by each agent's profile
 * (`sessionFiles.producer`); a file whose calls share no id with the telemetry is counted once per
 * session instead (src/receiver/pipeline.ts).
 */
export const IMPORT_CALL_PRODUCERS: readonly string[] = SESSION_FILES.map((f) => f.producer);

/** The session-file producers counted once per session, each with its telemetry's producer. */
export const SESSION_COUNTED_PRODUCERS: ReadonlyMap<string, string> = new Map(
  SESSION_FILES.flatMap((f) =>
    f.countedOnce.by === 'session' ? [[f.producer, f.countedOnce.telemetryProducer] as const] : [],
  ),
);
