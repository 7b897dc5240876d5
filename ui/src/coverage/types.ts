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

export interface Coverage {
  calls: number;
  conversations: number;
  compactions: number;
  producers: ProducerCoverage[];
  detectors: Record<DetectorId, DetectorCoverage>;
}

/** blind: sees no call; partial: some; sees: every call. */
export function sight(covered: number, calls: number): 'blind' | 'partial' | 'sees' {
  if (calls === 0 || covered === 0) return 'blind';
  return covered < calls ? 'partial' : 'sees';
}
