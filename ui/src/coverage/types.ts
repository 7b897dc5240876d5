/** `GET /api/coverage` (the server's schema: ../api-types.ts), and how the page names its values. */
import type { Answer } from '../api-types.ts';
import type { DetectorId } from '../findings/detectors.ts';

export type Coverage = Answer<'/api/coverage'>;

export type DetectorCoverage = Coverage['detectors'][DetectorId];

export type ProducerCoverage = Coverage['producers'][number];

/** One model of the recent calls with one window it was given. */
export type ModelWindow = Coverage['models'][number];

export type ClaudeCodeVersion = Coverage['claudeCode']['versions'][number];

/** Requests refused for their token, counted (GET /api/coverage `refusals`). */
export type Refusals = Coverage['refusals'];

export type Refusal = Refusals['items'][number];

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
