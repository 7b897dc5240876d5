/**
 * Signal coverage (GET /api/coverage): per detector, the share of the workspace's calls that
 * carry what it needs, so a quiet detector can be told from a blind one; per producer, the
 * detectors that see none of its calls and what to turn on, in that producer's words; the
 * models of the recent calls with their windows; and the Claude Code versions seen against the
 * verified ones. The counts are src/store/coverage.ts; what each detector needs is
 * src/detectors/registry.ts; the coding agents' own knobs are src/model/producer-advice.ts.
 */
import { DETECTOR_NEEDS } from '../detectors/registry.ts';
import {
  AGENT_NAMES,
  agentOf,
  coverageHint,
  type CoverageDetector,
} from '../model/producer-advice.ts';
import { nsToIso } from '../model/telemetry.ts';
import {
  CLAUDE_CODE_VERSIONS,
  claudeCodeVersionStatus,
  compareVersions,
  type ClaudeCodeVersionStatus,
} from '../model/window-catalog.ts';
import {
  producerCounts,
  recentClaudeCodeVersions,
  recentModelWindows,
  workspaceCounts,
  type ProducerCounts,
} from '../store/coverage.ts';
import type { Db } from '../store/db.ts';

export interface DetectorCoverage {
  /** Calls that carry what the detector needs. */
  covered: number;
  /** covered / calls (0 when there are no calls). */
  share: number;
  needs: string;
  /** What to send so the detector sees the calls it misses (the "quiet or blind?" answer). */
  hint: string;
}

/**
 * One producer's calls (`llm_calls.producer`, e.g. `langfuse`, `openinference`) and what each
 * detector sees of them; `blind` lists the detectors none of its calls feed (Langfuse sends no
 * finish reason: `output_cut_off`).
 */
export interface ProducerCoverage {
  producer: string;
  /** The coding agent behind the producer id (Claude Code, Codex CLI, Gemini CLI), if one. */
  agent: string | null;
  calls: number;
  covered: Record<CoverageDetector, number>;
  blind: CoverageDetector[];
  /** For each detector that misses some of its calls: what to turn on, in that producer's words. */
  hints: Partial<Record<CoverageDetector, string>>;
}

/** One model of the recent calls with one window it was given (a model may have several). */
export interface ModelWindowCoverage {
  /** The response model, else the request model; null when the calls name none. */
  model: string | null;
  /** null: no rule knows the model, so `context_too_full` does not judge these calls. */
  window: number | null;
  /** `LlmCall.windowSource` (override, model_id, inferred, catalog, assumed); null with no window. */
  windowSource: string | null;
  calls: number;
  lastCallAt: string | null;
}

/** One Claude Code version the recent calls came from (`service.version`, a transcript's `version`). */
export interface ClaudeCodeVersionCoverage {
  version: string;
  status: ClaudeCodeVersionStatus;
  calls: number;
  conversations: number;
  lastCallAt: string | null;
}

export interface ClaudeCodeCoverage {
  oldestSupported: string;
  newestVerified: string;
  verified: string[];
  /** Newest first. */
  versions: ClaudeCodeVersionCoverage[];
  /** Set when a version seen is newer than the newest verified (or older than the oldest supported). */
  warning: string | null;
}

export interface Coverage {
  calls: number;
  conversations: number;
  compactions: number;
  detectors: Record<CoverageDetector, DetectorCoverage>;
  /** Per producer, by producer name: a detector blind to one producer is named here. */
  producers: ProducerCoverage[];
  /** The start of the recent calls `models` and `claudeCode` describe; null with no calls. */
  recentSince: string | null;
  /** Each model of the recent calls with its window and source, by model, most calls first. */
  models: ModelWindowCoverage[];
  /** Models of recent calls without a window: not judged by `context_too_full`. */
  modelsWithoutWindow: string[];
  claudeCode: ClaudeCodeCoverage;
}

/** The recent calls of the model and version lists: this long before the workspace's newest call. */
export const RECENT_CALLS_DAYS = 30;
const RECENT_NS = BigInt(RECENT_CALLS_DAYS) * 86_400n * 1_000_000_000n;

const detectorsOf = (covered: Record<CoverageDetector, number>) =>
  Object.keys(covered) as CoverageDetector[];

/** One producer's counts as coverage: the detectors blind to it and the hints for those it misses. */
function producerCoverage({ producer, calls, covered }: ProducerCounts): ProducerCoverage {
  const detectors = detectorsOf(covered);
  const agent = agentOf(producer);
  return {
    producer,
    agent: agent ? AGENT_NAMES[agent] : null,
    calls,
    covered,
    blind: detectors.filter((d) => covered[d] === 0),
    hints: Object.fromEntries(
      detectors
        .filter((d) => covered[d] < calls)
        .map((d) => [d, coverageHint(producer, d) ?? DETECTOR_NEEDS[d].hint]),
    ),
  };
}

/**
 * The hint for a detector over the whole workspace: when every producer whose calls it misses is
 * a coding agent with its own knob (a Claude Code only workspace), those agents' words; else the
 * generic one, which names the attributes an SDK or library sends.
 */
function workspaceHint(producers: ProducerCoverage[], detector: CoverageDetector): string {
  const missing = producers.filter((p) => p.covered[detector] < p.calls);
  const own = new Map<string, string>();
  for (const producer of missing) {
    const hint = coverageHint(producer.producer, detector);
    if (hint === undefined) return DETECTOR_NEEDS[detector].hint;
    own.set(producer.agent ?? producer.producer, hint);
  }
  if (own.size === 0) return DETECTOR_NEEDS[detector].hint;
  if (own.size === 1) return [...own.values()][0]!;
  return [...own].map(([agent, hint]) => `${agent}: ${hint}`).join(' ');
}

/** The coverage of a workspace's calls. */
export async function getCoverage(db: Db, workspaceId: string): Promise<Coverage> {
  const counts = await workspaceCounts(db, workspaceId);
  const producers = (await producerCounts(db, workspaceId)).map(producerCoverage);
  const detectors = Object.fromEntries(
    detectorsOf(counts.covered).map((d) => [
      d,
      {
        covered: counts.covered[d],
        share: counts.calls === 0 ? 0 : counts.covered[d] / counts.calls,
        needs: DETECTOR_NEEDS[d].needs,
        hint: workspaceHint(producers, d),
      },
    ]),
  ) as Record<CoverageDetector, DetectorCoverage>;
  return {
    calls: counts.calls,
    conversations: counts.conversations,
    compactions: counts.compactions,
    detectors,
    producers,
    ...(await recentCoverage(db, workspaceId, counts.newestNs)),
  };
}

/** The models and Claude Code versions of the calls within RECENT_CALLS_DAYS of `newestNs`. */
async function recentCoverage(
  db: Db,
  workspaceId: string,
  newestNs: string | null,
): Promise<Pick<Coverage, 'recentSince' | 'models' | 'modelsWithoutWindow' | 'claudeCode'>> {
  const since = newestNs === null ? null : (BigInt(newestNs) - RECENT_NS).toString();
  const modelRows = since === null ? [] : await recentModelWindows(db, workspaceId, since);
  const versionRows = since === null ? [] : await recentClaudeCodeVersions(db, workspaceId, since);
  const models: ModelWindowCoverage[] = modelRows.map(({ lastNs, ...r }) => ({
    ...r,
    lastCallAt: nsToIso(lastNs),
  }));
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
