/**
 * Per-workspace context window overrides (`windowOverrides: [{ model: glob, window }]`),
 * re-applied to calls as the evaluator reads them, so a changed override takes effect on the
 * next evaluation without re-ingesting. The rule is ingest's, not a copy of it: the glob
 * matcher and the window a call gets are src/ingest/windows.ts's (`overrideWindow`,
 * `contextWindowFor`), so a call evaluated here has the window ingest would give it today.
 */
import { agentOfCall, contextWindowFor, overrideWindow } from '../ingest/windows.ts';
import type { WindowOverride } from '../model/window-overrides.ts';
import type { LlmCall } from '../model/calls.ts';

/**
 * The call with the window ingest would give it under `overrides`: when an override matches
 * its model (the response model, else the request model, as ingest reads it), or when its
 * window came from an override that may since have changed, the window is worked out again
 * (the first matching override, else the model id, else the catalog for the agent version the
 * call recorded; observed usage above it moves it up, source `inferred`). Otherwise, and when
 * nothing changes, the same call.
 */
export function applyWindowOverrides(call: LlmCall, overrides: readonly WindowOverride[]): LlmCall {
  const model = call.responseModel ?? call.requestModel;
  if (model === null) return call;
  const overridden = overrideWindow(model, overrides) !== null;
  if (!overridden && call.windowSource !== 'override') return call;
  const { window, source } = contextWindowFor(
    model,
    call.contextTokens,
    overrides,
    agentOfCall(call),
  );
  if (window === call.contextWindow && source === call.windowSource) return call;
  return { ...call, contextWindow: window, windowSource: source };
}
