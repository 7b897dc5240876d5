/**
 * `output_cut_off` (DESIGN §6, issue 3): a call stopped because it hit its output limit
 * (finish reason `length`, `max_tokens` or `max_output_tokens` in any case, or the
 * `output_limit` class). Warning; critical when the cut-off output was a tool call, whose
 * arguments are then incomplete. When the producer does not say what the output was
 * (`outputToolCall` null), the finding says so (`output: 'unknown'`) and stays a warning.
 * Stateless; side calls count too.
 */
import { cutOffAdvice } from '../model/producer-advice.ts';
import type { LlmCall } from '../model/calls.ts';
import type { FindingDraft } from '../model/findings.ts';
import type { Detector } from './types.ts';
import { summaryWithAdvice } from './advice.ts';
import { callAnchor, formatInt, modelOf } from './shared.ts';

const CUT_OFF_REASONS = new Set(['length', 'max_tokens', 'max_output_tokens']);

/** No state: each call is judged on its own. */
export type OutputCutOffState = Record<string, never>;

/** True when the call's output stopped at its output limit. */
export function isCutOff(call: LlmCall): boolean {
  const raw = call.finishReasonRaw?.trim().toLowerCase();
  return call.finishClass === 'output_limit' || (raw !== undefined && CUT_OFF_REASONS.has(raw));
}

/** What was cut: text, a tool call, or unknown (the producer does not say, e.g. plain Claude Code spans). */
export type CutOutput = 'text' | 'tool_call' | 'unknown';

function cutOutputOf(call: LlmCall): CutOutput {
  if (call.outputToolCall === null) return 'unknown';
  return call.outputToolCall ? 'tool_call' : 'text';
}

function toFinding(call: LlmCall): FindingDraft {
  const model = modelOf(call);
  const output = cutOutputOf(call);
  const tool = output === 'tool_call';
  const at = call.outputTokens === null ? '' : ` at ${formatInt(call.outputTokens)} tokens`;
  const limit = call.maxOutputTokens === null ? '' : ` (limit ${formatInt(call.maxOutputTokens)})`;
  const what = tool
    ? ` while writing a call to tool ${call.outputToolName ?? '(unknown)'}: its arguments are incomplete`
    : output === 'unknown'
      ? '; whether it was text or a tool call is unknown (the telemetry does not say)'
      : '';
  return {
    detector: 'output_cut_off',
    anchor: callAnchor(call),
    severity: tool ? 'critical' : 'warning',
    kind: null,
    conversationId: call.conversationId,
    streamKey: call.streamKey,
    runId: call.runId,
    traceId: call.traceId,
    spanId: call.spanId,
    model,
    summary: summaryWithAdvice(
      `Output cut off${at}${limit} on ${model ?? 'an unknown model'}${what}`,
      cutOffAdvice(call.producer, tool),
    ),
    details: {
      model,
      outputTokens: call.outputTokens,
      maxOutputTokens: call.maxOutputTokens,
      finishReason: call.finishReasonRaw,
      output,
      outputToolCall: call.outputToolCall,
      toolName: tool ? call.outputToolName : null,
    },
  };
}

/** The `output_cut_off` detector. */
export const outputCutOff: Detector<OutputCutOffState> = {
  id: 'output_cut_off',
  initial: () => ({}),
  step(state, item) {
    if (item.type !== 'call' || !isCutOff(item.call)) return { state, findings: [] };
    return { state, findings: [toFinding(item.call)] };
  },
};
