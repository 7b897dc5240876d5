/**
 * The normalizer (DESIGN §5, conventions §9): decoded spans, Claude Code log events and
 * Claude Code transcripts → LLM calls, tool results and compactions. Pure functions; see
 * README.md for the module map.
 */
export type { NormalizeContext } from './types.ts';
export { normalizeSpans, normalizeSpansSliced, type SpanBatch } from './spans.ts';
export { normalizeLogs, type LogBatch } from './claude-code-logs.ts';
export { callContentFromLogs } from './content-logs.ts';
export { eventNameOf } from './events.ts';
export {
  normalizeTranscript,
  transcriptOptionsForPath,
  type TranscriptOptions,
} from './transcript.ts';
export { contextWindowFor, catalogWindow } from './windows.ts';
export { classifyFinishReason } from './finish.ts';
export { classifyRole, type RoleDecision } from './roles.ts';
export { contextUsage, readRawUsage, type Usage } from './tokens.ts';
