/**
 * The Claude Code tool-result guard's spans (`rotscope.guard`, sent by src/cli/guard.ts): one per
 * decision, read into a row of its own. Pure; a span that is not the guard's, or lacks what a
 * decision needs, is undefined (and left to the span normalizer, which drops it).
 */
import type { Span } from '../model/telemetry.ts';
import type { GuardDecision } from '../model/guard.ts';
import { num, str } from './attrs.ts';

export type { GuardDecision };

export const GUARD_SPAN_NAME = 'rotscope.guard';

export function isGuardSpan(span: Span): boolean {
  return span.name === GUARD_SPAN_NAME && span.scope.name === GUARD_SPAN_NAME;
}

/** The decision a guard span records, or undefined. */
export function guardDecisionOf(workspaceId: string, span: Span): GuardDecision | undefined {
  if (!isGuardSpan(span)) return undefined;
  const a = span.attributes;
  const conversationId = str(a, 'session.id');
  const action = str(a, 'rotscope.guard.action');
  const tool = str(a, 'rotscope.guard.tool');
  const count = (key: string) => {
    const value = num(a, key);
    return value !== null && Number.isSafeInteger(value) && value >= 0 ? value : null;
  };
  const resultTokens = count('rotscope.guard.result_tokens');
  const budgetTokens = count('rotscope.guard.budget_tokens');
  const keptOutTokens = count('rotscope.guard.kept_out_tokens');
  if (
    conversationId === null ||
    (action !== 'narrowed' && action !== 'warned') ||
    tool === null ||
    resultTokens === null ||
    budgetTokens === null ||
    keptOutTokens === null
  )
    return undefined;
  return {
    workspaceId,
    conversationId,
    spanId: span.spanId,
    atNs: span.startTimeUnixNano,
    action,
    tool,
    resultTokens,
    budgetTokens,
    keptOutTokens,
  };
}
