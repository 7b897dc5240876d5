/**
 * Signal coverage (GET /api/coverage): per detector, the share of the workspace's calls that
 * carry what it needs, so a quiet detector can be told from a blind one; per producer, the
 * detectors that see none of its calls and what to turn on, in that producer's words; the
 * models of the recent calls with their windows; and the Claude Code versions seen against the
 * verified ones. The counts are src/store/coverage.ts; what each detector needs is declared once
 * in src/model/detector-needs.ts (its words: src/detectors/registry.ts); the coding agents' own
 * knobs are src/model/producer-advice.ts.
 */
import { DETECTOR_NEEDS } from '../detectors/registry.ts';
import { LOG_CALL_PRODUCERS } from '../ingest/producers.ts';
import { contextWindowFor, overrideWindow } from '../ingest/windows.ts';
import {
  agentLimits,
  agentName,
  agentOf,
  coverageHint,
  cutToolUnknownHint,
  type CoverageDetector,
} from '../model/producer-advice.ts';
import { nsToIso } from '../model/telemetry.ts';
import { DETECTOR_IDS } from '../model/vocabulary.ts';
import type { WindowOverride } from '../model/window-overrides.ts';
import {
  windowOverrideSetting,
  windowUnknownAdvice,
  windowUnknownText,
} from '../model/window-unknown.ts';
import { getAlertSettings } from '../store/alerts.ts';
import {
  CLAUDE_CODE_VERSIONS,
  claudeCodeVersionStatus,
  compareVersions,
} from '../model/window-catalog.ts';
import {
  producerCounts,
  recentClaudeCodeVersions,
  recentModelWindows,
  windowlessCalls,
  workspaceCounts,
  type CoverageRules,
  type ProducerCounts,
  type WindowlessRow,
} from '../store/coverage.ts';
import type { Db } from '../store/db.ts';
import type {
  CallCoverage,
  ClaudeCodeCoverage,
  ClaudeCodeVersionCoverage,
  DetectorCoverage,
  ModelWindowCoverage,
  ProducerCoverage,
  WindowUnknownCoverage,
} from './answers/coverage.ts';

export type {
  CallCoverage,
  ClaudeCodeCoverage,
  ClaudeCodeVersionCoverage,
  DetectorCoverage,
  ModelWindowCoverage,
  ProducerCoverage,
  WindowUnknownCoverage,
} from './answers/coverage.ts';

/**
 * A Claude Code call from a log event comes with the logs exporter on, which sends every tool
 * result's size too: such a call is covered for `tool_takeover` even when no result entered its
 * input (the first call of a session), rather than making a correct setup look partly blind.
 */
const COVERAGE_RULES: CoverageRules = { toolSizesLoggedBy: LOG_CALL_PRODUCERS };

/** The recent calls of the model and version lists: this long before the workspace's newest call. */
export const RECENT_CALLS_DAYS = 30;
const RECENT_NS = BigInt(RECENT_CALLS_DAYS) * 86_400n * 1_000_000_000n;

const detectorsOf = (covered: Record<CoverageDetector, number>) =>
  Object.keys(covered) as CoverageDetector[];

/**
 * Per producer and model, the calls with token counts that get no window under the current
 * overrides (a stored window from an override that no longer applies is worked out again with
 * ingest's rule), and the calls stored without one that an override now gives one: the evaluator
 * applies the overrides as it reads calls (src/evaluator/window-overrides.ts), so these are judged.
 */
function windowsNow(rows: readonly WindowlessRow[], overrides: readonly WindowOverride[]) {
  /** Calls stored without a window that an override now covers, by producer. */
  const gained = new Map<string, number>();
  /** Calls stored with an override's window that now have none, by producer. */
  const lost = new Map<string, number>();
  /** Calls not judged for lack of a window now, by producer and model. */
  const unknown = new Map<string, Map<string, number>>();
  const add = (map: Map<string, number>, key: string, n: number) =>
    map.set(key, (map.get(key) ?? 0) + n);
  for (const row of rows) {
    const window =
      row.model === null
        ? null
        : row.overridden
          ? contextWindowFor(row.model, null, overrides).window
          : overrideWindow(row.model, overrides);
    if (window !== null) {
      if (!row.overridden) add(gained, row.producer, row.calls);
      continue;
    }
    if (row.overridden) add(lost, row.producer, row.calls);
    if (row.model === null) continue;
    const models = unknown.get(row.producer) ?? new Map<string, number>();
    add(models, row.model, row.calls);
    unknown.set(row.producer, models);
  }
  return { gained, lost, unknown };
}

/** The models, most calls first (then by name). */
function byCalls(models: Map<string, number>): WindowUnknownCoverage[] {
  return [...models]
    .map(([model, calls]) => ({ model, calls }))
    .sort((a, b) => b.calls - a.calls || a.model.localeCompare(b.model));
}

/**
 * "no window known for claude-x: 12 calls not judged for context too full; set a window
 * override: ..." (src/model/window-unknown.ts), each model named, the setting once.
 */
export function windowUnknownHint(models: readonly WindowUnknownCoverage[]): string {
  const [first, ...rest] = models;
  if (first === undefined) return '';
  if (rest.length === 0) return windowUnknownAdvice(first.model, first.calls);
  return `${models.map((m) => windowUnknownText(m.model, m.calls)).join('; ')}; ${windowOverrideSetting(first.model)}`;
}

/**
 * One producer's counts as coverage: the detectors blind to it and the hints for those it misses.
 * `unknown`: its models without a window; `context_too_full`'s hint then names them and the
 * setting, plus the generic advice when a library's other calls lack something else (token
 * counts, a model); never "turn on telemetry" to an agent whose calls carry token counts.
 */
function producerCoverage(
  { producer, calls, covered, cutOutputUnknown = 0 }: ProducerCounts,
  unknown: readonly WindowUnknownCoverage[],
): ProducerCoverage {
  const detectors = detectorsOf(covered);
  const agent = agentOf(producer);
  const hintFor = (d: CoverageDetector) => {
    const own = coverageHint(producer, d);
    if (d !== 'context_too_full' || unknown.length === 0) return own ?? DETECTOR_NEEDS[d].hint;
    // an agent whose calls carry token counts has its telemetry on: no telemetry advice to it
    const windowless = unknown.reduce((n, m) => n + m.calls, 0);
    const other = calls - covered[d] - windowless;
    return other > 0 && own === undefined
      ? `${windowUnknownHint(unknown)}. Other calls: ${DETECTOR_NEEDS[d].hint}`
      : windowUnknownHint(unknown);
  };
  const hints: Partial<Record<CoverageDetector, string>> = Object.fromEntries(
    detectors.filter((d) => covered[d] < calls).map((d) => [d, hintFor(d)]),
  );
  // cut responses it cannot tell apart (text or a tool call): said, though their finish reason came
  const unknownCut =
    cutOutputUnknown > 0 ? cutToolUnknownHint(producer, cutOutputUnknown) : undefined;
  if (unknownCut !== undefined)
    hints.output_cut_off = hints.output_cut_off
      ? `${unknownCut} ${hints.output_cut_off}`
      : unknownCut;
  return {
    producer,
    agent: agent ? agentName(agent) : null,
    calls,
    covered,
    blind: detectors.filter((d) => covered[d] === 0),
    hints,
    ...limitsOf(producer),
  };
}

/** `{ limits }` when the producer's agent has some (src/model/producer-advice.ts), else nothing. */
function limitsOf(producer: string): Pick<ProducerCoverage, 'limits'> {
  const limits = agentLimits(producer);
  return Object.keys(limits).length > 0 ? { limits } : {};
}

/**
 * The hint for a detector over the whole workspace: when every producer whose calls it misses is
 * a coding agent with its own knob (a Claude Code only workspace), those agents' words; else the
 * generic one, which names the attributes an SDK or library sends. For `context_too_full`, the
 * models without a window and the setting come first, and the producers' advice only for the
 * calls that lack something else.
 */
function workspaceHint(
  producers: ProducerCoverage[],
  detector: CoverageDetector,
  unknown: ReadonlyMap<string, readonly WindowUnknownCoverage[]> = new Map(),
): string {
  const windowless = (p: ProducerCoverage) =>
    detector === 'context_too_full'
      ? (unknown.get(p.producer) ?? []).reduce((n, m) => n + m.calls, 0)
      : 0;
  const models = detector === 'context_too_full' ? mergedModels(unknown) : [];
  // with a model to name, an agent whose calls carry token counts (its telemetry is on) gets no
  // telemetry advice for the few that do not
  const missing = producers.filter(
    (p) =>
      p.covered[detector] + windowless(p) < p.calls &&
      (models.length === 0 ||
        coverageHint(p.producer, detector) === undefined ||
        p.covered.history_lost === 0),
  );
  const own = new Map<string, string>();
  let generic = false;
  for (const producer of missing) {
    const hint = coverageHint(producer.producer, detector);
    if (hint === undefined) generic = true;
    else own.set(producer.agent ?? producer.producer, hint);
  }
  const advice =
    generic || (own.size === 0 && models.length === 0)
      ? DETECTOR_NEEDS[detector].hint
      : own.size === 1
        ? [...own.values()][0]!
        : [...own].map(([agent, hint]) => `${agent}: ${hint}`).join(' ');
  if (models.length === 0) return advice;
  return missing.length === 0
    ? windowUnknownHint(models)
    : `${windowUnknownHint(models)}. Other calls: ${advice}`;
}

/** The models without a window over every producer, most calls first. */
function mergedModels(
  unknown: ReadonlyMap<string, readonly WindowUnknownCoverage[]>,
): WindowUnknownCoverage[] {
  const calls = new Map<string, number>();
  for (const models of unknown.values())
    for (const m of models) calls.set(m.model, (calls.get(m.model) ?? 0) + m.calls);
  return byCalls(calls);
}

/**
 * The coverage of a workspace's calls, under its current window overrides (the evaluator
 * applies them as it reads the calls, so a call stored without a window that an override now
 * covers is judged, and the model lists show the override).
 */
export async function getCoverage(db: Db, workspaceId: string): Promise<CallCoverage> {
  const { windowOverrides } = await getAlertSettings(db, workspaceId);
  const counts = await workspaceCounts(db, workspaceId);
  const now = windowsNow(await windowlessCalls(db, workspaceId), windowOverrides);
  const judged = (producer: string) =>
    (now.gained.get(producer) ?? 0) - (now.lost.get(producer) ?? 0);
  const unknown = new Map(
    [...now.unknown].map(([producer, models]) => [producer, byCalls(models)]),
  );
  const producerRows = (await producerCounts(db, workspaceId, COVERAGE_RULES)).map((row) => ({
    ...row,
    covered: {
      ...row.covered,
      context_too_full: row.covered.context_too_full + judged(row.producer),
    },
  }));
  // every call has one producer: the workspace's covered calls are the producers' summed
  const covered = Object.fromEntries(
    DETECTOR_IDS.map((d) => [d, producerRows.reduce((n, row) => n + row.covered[d], 0)]),
  ) as Record<CoverageDetector, number>;
  const producers = producerRows.map((row) =>
    producerCoverage(row, unknown.get(row.producer) ?? []),
  );
  const detectors = Object.fromEntries(
    detectorsOf(covered).map((d) => [
      d,
      {
        covered: covered[d],
        share: counts.calls === 0 ? 0 : covered[d] / counts.calls,
        needs: DETECTOR_NEEDS[d].needs,
        hint: workspaceHint(producers, d, unknown),
      },
    ]),
  ) as Record<CoverageDetector, DetectorCoverage>;
  return {
    calls: counts.calls,
    conversations: counts.conversations,
    compactions: counts.compactions,
    detectors,
    producers,
    ...(await recentCoverage(db, workspaceId, counts.newestNs, windowOverrides)),
    windowsUnknown: mergedModels(unknown),
  };
}

/** The models and Claude Code versions of the calls within RECENT_CALLS_DAYS of `newestNs`. */
async function recentCoverage(
  db: Db,
  workspaceId: string,
  newestNs: string | null,
  overrides: readonly WindowOverride[],
): Promise<Pick<CallCoverage, 'recentSince' | 'models' | 'modelsWithoutWindow' | 'claudeCode'>> {
  const since = newestNs === null ? null : (BigInt(newestNs) - RECENT_NS).toString();
  const modelRows = since === null ? [] : await recentModelWindows(db, workspaceId, since);
  const versionRows = since === null ? [] : await recentClaudeCodeVersions(db, workspaceId, since);
  const models = modelsUnderOverrides(
    modelRows.map(({ lastNs, ...r }) => ({ ...r, lastCallAt: nsToIso(lastNs) })),
    overrides,
  );
  const versions: ClaudeCodeVersionCoverage[] = versionRows
    .map(({ lastNs, ...r }) => ({
      version: r.version,
      status: claudeCodeVersionStatus(r.version),
      calls: r.calls,
      conversations: r.conversations,
      lastCallAt: nsToIso(lastNs),
    }))
    .sort((a, b) => compareVersions(b.version, a.version) ?? b.version.localeCompare(a.version));
  return {
    recentSince: nsToIso(since),
    models,
    modelsWithoutWindow: modelsWithoutWindow(models),
    claudeCode: claudeCodeCoverage(versions),
  };
}

/**
 * The model rows under the workspace's current window overrides (the evaluator applies them as it
 * reads calls, src/evaluator/window-overrides.ts): a row an override matches now shows it; a row
 * whose override was removed shows what the model id or the catalog gives (no agent version at
 * this grain: a version-bound row does not apply). Rows that become alike are merged.
 */
export function modelsUnderOverrides(
  models: readonly ModelWindowCoverage[],
  overrides: readonly WindowOverride[],
): ModelWindowCoverage[] {
  const merged = new Map<string, ModelWindowCoverage>();
  for (const row of models) {
    let next = row;
    if (
      row.model !== null &&
      (overrideWindow(row.model, overrides) !== null || row.windowSource === 'override')
    ) {
      const { window, source } = contextWindowFor(row.model, null, overrides);
      next = { ...row, window, windowSource: source };
    }
    const key = JSON.stringify([next.model, next.window, next.windowSource]);
    const known = merged.get(key);
    merged.set(
      key,
      known === undefined
        ? next
        : {
            ...known,
            calls: known.calls + next.calls,
            lastCallAt:
              (known.lastCallAt ?? '') > (next.lastCallAt ?? '')
                ? known.lastCallAt
                : next.lastCallAt,
          },
    );
  }
  return [...merged.values()].sort(
    (a, b) => (a.model ?? '').localeCompare(b.model ?? '') || b.calls - a.calls,
  );
}

/** The models none of whose listed calls has a window. */
export function modelsWithoutWindow(models: readonly ModelWindowCoverage[]): string[] {
  const withWindow = new Set(models.filter((m) => m.window !== null).map((m) => m.model));
  const names = models
    .filter((m) => m.window === null && !withWindow.has(m.model))
    .map((m) => m.model ?? '(no model)');
  return [...new Set(names)].sort();
}

/** The Claude Code versions seen, against the verified ones, with a warning when one is outside. */
export function claudeCodeCoverage(versions: ClaudeCodeVersionCoverage[]): ClaudeCodeCoverage {
  const { oldestSupported, newestVerified, verified } = CLAUDE_CODE_VERSIONS;
  const newer = versions.filter((v) => v.status === 'newer').map((v) => v.version);
  const older = versions.filter((v) => v.status === 'older').map((v) => v.version);
  const warnings: string[] = [];
  if (newer.length > 0) {
    warnings.push(
      `Claude Code ${newer.join(', ')} ${newer.length === 1 ? 'is' : 'are'} newer than the newest version rotscope has verified (${newestVerified}): what it exports may have changed, so findings for its sessions may be wrong or missing until that version is verified (README, Claude Code)`,
    );
  }
  if (older.length > 0) {
    warnings.push(
      `Claude Code ${older.join(', ')} ${older.length === 1 ? 'is' : 'are'} older than the oldest version rotscope supports (${oldestSupported})`,
    );
  }
  return {
    oldestSupported,
    newestVerified,
    verified: [...verified],
    versions,
    warning: warnings.length === 0 ? null : `${warnings.join('. ')}.`,
  };
}
