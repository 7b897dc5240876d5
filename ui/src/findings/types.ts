/** A finding as `GET /api/findings` returns it (the Finding JSON of DESIGN §8; ../api-types.ts). */
import type { Answer } from '../api-types.ts';

export type Finding = Answer<'/api/findings/{id}'>;

/** A page of `GET /api/findings`: its items are {@link Finding}s. */
export type FindingList = Answer<'/api/findings'>;

/** Where a finding is looked at: its run with it selected, else its conversation. */
export function findingTarget(finding: Pick<Finding, 'id' | 'runId' | 'conversationId'>): {
  path: string[];
  query: Record<string, string>;
} {
  return finding.runId
    ? { path: ['runs', finding.runId], query: { finding: finding.id } }
    : { path: ['conversations', finding.conversationId], query: { finding: finding.id } };
}
