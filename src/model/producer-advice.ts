/**
 * Advice in the words of the agent that sent the calls. A Claude Code user cannot "send
 * gen_ai.input.messages" or "raise max tokens" in code: they set an environment variable of
 * Claude Code, or run `rotscope claude-code install`. Where a producer has its own knob, the
 * coverage hints and the findings' advice name it; elsewhere the generic advice stands.
 * Knobs named here are the ones measured from the real CLIs (conventions.md §5.0–5.0.2).
 */

import {
  agentProfile,
  profileOfProducer,
  type Agent,
  type CoverageDetector,
} from './agents/index.ts';

export type { Agent, CoverageDetector } from './agents/index.ts';

/** The agent behind a producer id, or undefined for a library or SDK producer. */
export function agentOf(producer: string | null | undefined): Agent | undefined {
  return profileOfProducer(producer)?.id as Agent | undefined;
}

/** How an agent is named to people. */
export function agentName(agent: Agent): string {
  return agentProfile(agent).name;
}

/** What `producer`'s agent cannot send, per detector (empty for producers without limits). */
export function agentLimits(producer: string | null): Partial<Record<CoverageDetector, string>> {
  return profileOfProducer(producer)?.limits ?? {};
}

/** The hint for a detector blind on `producer`'s calls, when the producer has its own. */
export function coverageHint(
  producer: string | null,
  detector: CoverageDetector,
): string | undefined {
  return profileOfProducer(producer)?.coverageHints[detector];
}

/**
 * Said of an agent's calls cut at the output limit when nothing says whether the cut output was
 * a tool call (Claude Code, and Claude Agent SDK apps, which run it, export nothing for a tool
 * call cut by `max_tokens`; ./agents/claude-code.ts). Undefined for producers without such a note.
 */
export function cutToolUnknownHint(producer: string | null, calls: number): string | undefined {
  return profileOfProducer(producer)?.cutToolUnknownHint?.(calls);
}

/** What to do about a cut-off output, in the producer's words. */
export function cutOffAdvice(producer: string | null, toolCall: boolean): string {
  const advice = profileOfProducer(producer)?.cutOffAdvice;
  if (advice !== undefined) return advice(toolCall);
  return toolCall
    ? 'raise the output limit (max tokens) for this call, or have the model write large tool input in smaller pieces'
    : 'raise the output limit (max tokens), or ask for a shorter answer';
}
