/**
 * Context windows (DESIGN §5, issue 19 §3): the best window known for a call, and where it came
 * from (`LlmCall.windowSource`, reported by findings). In this order:
 * 1. a workspace override (`override`): the first glob that matches the model id;
 * 2. what the agent itself says: `[1m]` / `-1m` in the model id (`model_id`); observed usage
 *    above the window (`inferred`, below); Claude Code's automatic compaction near 167k tokens
 *    (`compaction`: cross-call, applied by the `context_too_full` detector, which sees the
 *    conversation's compactions);
 * 3. the catalog (src/model/window-catalog.ts, data with a source and date per row), with the
 *    defaults that depend on the agent's version (`catalog`, or `assumed` where the id cannot
 *    settle it);
 * 4. unknown: window and source null. The call is not judged by `context_too_full`, and
 *    /api/coverage lists the model. Nothing here guesses.
 * Observed usage above the window from 1–3 moves it to the next size the model's family comes
 * in (`inferred`); with no such size (no family known, or above its largest) it is unknown.
 */
import type { LlmCall, WindowSource } from '../model/calls.ts';
import type { Attributes } from '../model/telemetry.ts';
import {
  CLAUDE_CODE_CALL_PRODUCERS,
  compareVersions,
  MODEL_ID_1M_WINDOW,
  WINDOW_CATALOG,
  WINDOW_FAMILIES,
  type AgentInfo,
  type WindowCatalogRow,
} from '../model/window-catalog.ts';
import type { WindowOverride } from '../model/window-overrides.ts';

export type { AgentInfo } from '../model/window-catalog.ts';

/** Lower-cases and strips provider prefixes (`anthropic/`, `us.anthropic.`, `models/`). */
export function canonicalModel(model: string): string {
  let m = model.trim().toLowerCase();
  const slash = m.lastIndexOf('/');
  if (slash >= 0) m = m.slice(slash + 1);
  // Bedrock ids: `us.anthropic.claude-…`, `anthropic.claude-…`
  const dot = m.indexOf('anthropic.');
  if (dot >= 0) m = m.slice(dot + 'anthropic.'.length);
  return m;
}

/** `[1m]` anywhere, or a Claude id with a `-1m` / `:1m` variant suffix. */
function is1mVariant(m: string): boolean {
  if (m.includes('[1m]')) return true;
  return m.startsWith('claude') && (m.endsWith('-1m') || m.includes('-1m-') || m.includes(':1m'));
}

const globCache = new Map<string, RegExp>();

/** Compiles (once) a case-insensitive glob: `*` any run, `?` one character. */
function globRegExp(glob: string): RegExp {
  let re = globCache.get(glob);
  if (re === undefined) {
    const body = glob
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
      .join('');
    re = new RegExp(`^${body}$`, 'i');
    if (globCache.size > 1000) globCache.clear();
    globCache.set(glob, re);
  }
  return re;
}

/** The first override whose glob matches the model id (as sent, or canonical). */
export function overrideWindow(model: string, overrides: readonly WindowOverride[]): number | null {
  if (overrides.length === 0) return null;
  const c = canonicalModel(model);
  for (const o of overrides) {
    const re = globRegExp(o.model);
    if (re.test(model) || re.test(c)) return o.window;
  }
  return null;
}

/** Whether a version-bound row applies to this agent (never when the version is unknown). */
function agentMatches(row: WindowCatalogRow, agent: AgentInfo | null | undefined): boolean {
  if (row.agent === undefined) return true;
  if (!agent || agent.name !== row.agent.name || agent.version === null) return false;
  const { from, through } = row.agent;
  if (from !== undefined) {
    const c = compareVersions(agent.version, from);
    if (c === null || c < 0) return false;
  }
  if (through !== undefined) {
    const c = compareVersions(agent.version, through);
    if (c === null || c > 0) return false;
  }
  return true;
}

/** The catalog row that gives the model's window for this agent (first match), or null. */
export function catalogRow(model: string, agent?: AgentInfo | null): WindowCatalogRow | null {
  const m = canonicalModel(model);
  for (const row of WINDOW_CATALOG) {
    if (globRegExp(row.model).test(m) && agentMatches(row, agent)) return row;
  }
  return null;
}

/** The window the model id itself names (`[1m]`, `-1m`), else null. */
export function modelIdWindow(model: string): number | null {
  return is1mVariant(canonicalModel(model)) ? MODEL_ID_1M_WINDOW : null;
}

/** The window of a model id without override or usage: what the id says, else the catalog's; null when not known. */
export function catalogWindow(model: string, agent?: AgentInfo | null): number | null {
  return modelIdWindow(model) ?? catalogRow(model, agent)?.window ?? null;
}

/** The assumed window of a model id the catalog cannot settle (a row of source `assumed`), else null. */
export function assumedWindow(model: string, agent?: AgentInfo | null): number | null {
  if (modelIdWindow(model) !== null) return null;
  const row = catalogRow(model, agent);
  return row?.source === 'assumed' ? row.window : null;
}

/**
 * The smallest size ≥ `tokens` that the model's family comes in (src/model/window-catalog.ts
 * `WINDOW_FAMILIES`); null when the model is of no known family or `tokens` is above its
 * largest size (no guess from other vendors' sizes).
 */
export function nextKnownSize(tokens: number, model: string): number | null {
  const m = canonicalModel(model);
  const family = WINDOW_FAMILIES.find((f) => f.test.test(m));
  if (family === undefined) return null;
  for (const s of family.sizes) if (s >= tokens) return s;
  return null;
}

/** The agent of a span or log record by its resource: Claude Code with its `service.version`. */
export function agentOfResource(resource: Attributes, claudeCode = false): AgentInfo | null {
  if (!claudeCode && resource['service.name'] !== 'claude-code') return null;
  const version = resource['service.version'];
  return {
    name: 'claude-code',
    version: typeof version === 'string' && version !== '' ? version : null,
  };
}

/** The agent of a Claude Code transcript line (its `version`). */
export function claudeCodeAgent(version: string | null): AgentInfo {
  return { name: 'claude-code', version };
}

/** The agent of a stored call: Claude Code's producers with the version the call recorded. */
export function agentOfCall(call: Pick<LlmCall, 'producer' | 'agentVersion'>): AgentInfo | null {
  return CLAUDE_CODE_CALL_PRODUCERS.includes(call.producer)
    ? { name: 'claude-code', version: call.agentVersion ?? null }
    : null;
}

/**
 * The context window of a call and its source, by the precedence in the module doc: an
 * override, else the model id's `[1m]`, else the catalog row for the model and `agent` (a
 * row bound to versions of the agent applies only when its version is known). When
 * `observedTokens` (the call's context usage) exceeds that window, the observation wins: the
 * next size of the model's family (`inferred`), or unknown when there is none. A model no
 * rule knows gives `{ window: null, source: null }`.
 */
export function contextWindowFor(
  model: string | null,
  observedTokens: number | null,
  overrides: readonly WindowOverride[],
  agent?: AgentInfo | null,
): { window: number | null; source: WindowSource | null } {
  if (model === null || model === '') return { window: null, source: null };
  let window = overrideWindow(model, overrides);
  let source: WindowSource | null = window === null ? null : 'override';
  if (window === null) {
    window = modelIdWindow(model);
    source = window === null ? null : 'model_id';
  }
  if (window === null) {
    const row = catalogRow(model, agent);
    if (row !== null) [window, source] = [row.window, row.source];
  }
  if (window === null) return { window: null, source: null };
  if (observedTokens !== null && observedTokens > window) {
    const next = nextKnownSize(observedTokens, model);
    return next === null ? { window: null, source: null } : { window: next, source: 'inferred' };
  }
  return { window, source };
}

/**
 * The window of a call whose agent reports it (Codex's `model_context_window`, in its session
 * files; `reported` null when it does not): a workspace override first, else the reported
 * number (`agent`), else as {@link contextWindowFor}. Usage above the reported window moves it to
 * the next size of the model's family (`inferred`), or unknown when there is none.
 */
export function reportedWindowFor(
  model: string | null,
  reported: number | null,
  observedTokens: number | null,
  overrides: readonly WindowOverride[],
  agent?: AgentInfo | null,
): { window: number | null; source: WindowSource | null } {
  const overridden = model !== null && model !== '' && overrideWindow(model, overrides) !== null;
  if (reported === null || reported <= 0 || overridden)
    return contextWindowFor(model, observedTokens, overrides, agent);
  if (observedTokens !== null && observedTokens > reported) {
    const next = model === null ? null : nextKnownSize(observedTokens, model);
    return next === null ? { window: null, source: null } : { window: next, source: 'inferred' };
  }
  return { window: reported, source: 'agent' };
}
