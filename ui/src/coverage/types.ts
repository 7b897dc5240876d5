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

export interface Coverage {
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
