/**
 * Per-workspace context window overrides (`windowOverrides: [{ model: glob, window }]`),
 * applied to calls as the evaluator reads them, so a changed override takes effect on the
 * next evaluation without re-ingesting. The first matching override wins.
 */
import type { LlmCall } from '../model/calls.ts';
import type { WindowOverride } from '../store/alerts.ts';

const globCache = new Map<string, RegExp>();

/**
 * True when `model` matches `glob`, case-insensitively: `*` matches any run of characters
 * (also none), `?` exactly one; every other character matches itself.
 */
export function matchesModelGlob(glob: string, model: string): boolean {
  let pattern = globCache.get(glob);
  if (!pattern) {
    const body = [...glob]
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
      .join('');
    pattern = new RegExp(`^${body}$`, 'is');
    if (globCache.size > 1000) globCache.clear();
    globCache.set(glob, pattern);
  }
  return pattern.test(model);
}

/**
 * The call with its window replaced by the first override whose glob matches its response or
 * request model (`windowSource: 'override'`); the same call when none matches.
 */
export function applyWindowOverrides(call: LlmCall, overrides: readonly WindowOverride[]): LlmCall {
  if (overrides.length === 0) return call;
  const models = [call.responseModel, call.requestModel].filter((m): m is string => m !== null);
  const match = overrides.find((o) => models.some((model) => matchesModelGlob(o.model, model)));
  if (!match) return call;
  if (call.contextWindow === match.window && call.windowSource === 'override') return call;
  return { ...call, contextWindow: match.window, windowSource: 'override' };
}
