/** `GET /api/coverage`. */
import type { DetectorId } from '../findings/detectors.ts';

export interface DetectorCoverage {
  covered: number;
  share: number;
  needs: string;
  hint: string;
}

export interface ProducerCoverage {
  producer: string;
  calls: number;
  covered: Record<DetectorId, number>;
  blind: DetectorId[];
  /** The coding agent behind the producer (Claude Code, Codex CLI, Gemini CLI), if one. */
  agent: string | null;
  /** Per detector that misses some of these calls: what to turn on, in the producer's words. */
  hints: Partial<Record<DetectorId, string>>;
}

/** One model of the recent calls with one window it was given. */
export interface ModelWindow {
  model: string | null;
  /** null: no rule knows the model; Context too full does not judge its calls. */
  window: number | null;
  windowSource: string | null;
  calls: number;
  lastCallAt: string | null;
}

export interface ClaudeCodeVersion {
  version: string;
  status: 'verified' | 'supported' | 'older' | 'newer' | 'unknown';
  calls: number;
  conversations: number;
  lastCallAt: string | null;
}

/** Requests refused for their token, counted (GET /api/coverage `refusals.items`). */
export interface Refusal {
  /** null: no token told the workspace (no token sent, an unknown or revoked one). */
  workspace: string | null;
  status: number;
  /** Method and route, e.g. `POST /v1/logs`. */
  route: string;
  reason: string;
  reasonText: string;
  /** The first word of the sender's User-Agent. */
  agent: string;
  count: number;
  firstSeen: string;
  lastSeen: string;
  /** What to do so the sender gets through. */
  hint: string;
}

export interface Refusals {
  since: string;
  items: Refusal[];
  /** Refusals of no workspace, counted only (listed in `items` for an admin token). */
  withoutWorkspace: { count: number; lastSeen: string | null } | null;
}

export interface Coverage {
  refusals: Refusals;
  calls: number;
  conversations: number;
  compactions: number;
  producers: ProducerCoverage[];
  detectors: Record<DetectorId, DetectorCoverage>;
  /** Models and Claude Code versions are of the calls since then. */
  recentSince: string | null;
  models: ModelWindow[];
  modelsWithoutWindow: string[];
  claudeCode: {
    oldestSupported: string;
    newestVerified: string;
    verified: string[];
    versions: ClaudeCodeVersion[];
    warning: string | null;
  };
}

/** Where a call's window came from, as the console says it. */
export const WINDOW_SOURCE_LABEL: Record<string, string> = {
  override: 'workspace override',
  model_id: 'the model id ([1m])',
  agent: 'reported by the agent',
  inferred: 'inferred from usage above a window',
  compaction: "the agent's automatic compaction",
  catalog: 'catalog',
  assumed: 'assumed (the model id does not settle it)',
};

export const VERSION_STATUS_LABEL: Record<ClaudeCodeVersion['status'], string> = {
  verified: 'verified',
  supported: 'supported',
  older: 'older than supported',
  newer: 'newer than verified',
  unknown: 'not a version',
};

/** blind: sees no call; partial: some; sees: every call. */
export function sight(covered: number, calls: number): 'blind' | 'partial' | 'sees' {
  if (calls === 0 || covered === 0) return 'blind';
  return covered < calls ? 'partial' : 'sees';
}
