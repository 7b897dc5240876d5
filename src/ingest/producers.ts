/**
 * Producer ids whose data needs a rule beyond normalization: which calls yield to which, and
 * which conversations must settle longer before they are evaluated. The receiver applies them.
 */

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
export const SPLIT_EVIDENCE_PRODUCERS: ReadonlySet<string> = new Set(CLAUDE_CODE_PRODUCERS);
