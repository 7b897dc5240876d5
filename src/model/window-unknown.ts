/**
 * What rotscope says about a model no source gives a window (issue 34 §2): its calls carry token
 * counts, but `context_too_full` cannot judge them. The same words on the Coverage page, in the
 * `window.unknown` notice every channel gets once, and in `rotscope analyze`: the model, how many
 * calls went unjudged, and the exact setting that fixes it.
 */
import { plural } from './plural.ts';

/** How a user sets a window override for `model` on a server (the Context rot alert's setting). */
export function windowOverrideSetting(model: string): string {
  return (
    'set a window override: on the Context rot alert page of the console (Window overrides), or ' +
    `PUT /api/alerts/context-rot with "windowOverrides": [{ "model": ${JSON.stringify(model)}, ` +
    '"window": <tokens> }] (the list replaces the current overrides: send them too)'
  );
}

/** The same for `rotscope analyze`, which takes its overrides as flags. */
export function windowOverrideFlag(model: string): string {
  return `pass --window '${model.replace(/'/g, "'\\''")}=TOKENS' (its context window in tokens)`;
}

/** "no window known for claude-x: 12 calls not judged for context too full". */
export function windowUnknownText(model: string, calls: number): string {
  return `no window known for ${model}: ${plural(calls, 'call')} not judged for context too full`;
}

/** The whole advice for a server's user: what is wrong and the setting that fixes it. */
export function windowUnknownAdvice(model: string, calls: number): string {
  return `${windowUnknownText(model, calls)}; ${windowOverrideSetting(model)}`;
}
