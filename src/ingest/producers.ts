/**
 * Producer ids whose data needs a rule beyond normalization: which calls yield to which, and
 * which conversations must settle longer before they are evaluated. The receiver applies them.
 */
import { CODEX_PRODUCER, CODEX_TOOL_RESULT_SOURCE } from './codex.ts';
import { CODEX_SESSION_PRODUCER } from './codex-sessions.ts';
import { COPILOT_SESSION_PRODUCER } from './copilot-sessions.ts';
import { GEMINI_SESSION_PRODUCER } from './gemini-sessions.ts';

/** Claude Code's producers: spans (`claude_code`) and log events (`claude_code_log`). */
export const CLAUDE_CODE_PRODUCERS: readonly string[] = ['claude_code', 'claude_code_log'];

/** Producers whose calls come from log events and yield to a span of the same request id. */
export const LOG_CALL_PRODUCERS: readonly string[] = ['claude_code_log'];

/**
 * Producers that send a call's evidence in two signals on separate export schedules (Claude
 * Code: spans, and log events carrying compactions and side calls): their conversations get
 * a longer quiet time before evaluation (`splitEvidenceSettleMs`), so a compaction in the logs
 * is seen before the drop it explains.
 */
export const SPLIT_EVIDENCE_PRODUCERS: ReadonlySet<string> = new Set([
  ...CLAUDE_CODE_PRODUCERS,
  // Gemini CLI: spans, and logs carrying finish reasons, side calls and compressions
  'gemini_cli',
  // Qwen Code: spans, and logs carrying the compressor's side calls, compressions and tool sizes
  'qwen_code',
]);

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
 * Producers whose calls come from session files (`rotscope import` of Claude Code transcripts
 * and of Codex session files): they yield to telemetry of the same request id and fill what it
 * lacks (src/store/merge.ts).
 */
export const IMPORT_CALL_PRODUCERS: readonly string[] = [
  'claude_code_transcript',
  CODEX_SESSION_PRODUCER,
  COPILOT_SESSION_PRODUCER,
  // Qwen Code session files (./qwen-sessions.ts): the request id is the response id
  'qwen_code_session',
  // Gemini CLI chat files (./gemini-sessions.ts): no request id; a session telemetry stored is
  // not taken from its file again (src/receiver/pipeline.ts)
  GEMINI_SESSION_PRODUCER,
];
