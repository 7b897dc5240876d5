/** A finding as `GET /api/findings` returns it (the Finding JSON of DESIGN §8). */
export interface Finding {
  id: string;
  workspace: string;
  detector: string;
  anchor: string;
  severity: 'info' | 'warning' | 'critical';
  kind: string | null;
  conversationId: string;
  streamKey: string;
  runId: string;
  traceId: string | null;
  spanId: string | null;
  model: string | null;
  summary: string;
  details: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** Where a finding is looked at: its run with it selected, else its conversation. */
export function findingTarget(finding: Pick<Finding, 'id' | 'runId' | 'conversationId'>): {
  path: string[];
  query: Record<string, string>;
} {
  return finding.runId
    ? { path: ['runs', finding.runId], query: { finding: finding.id } }
    : { path: ['conversations', finding.conversationId], query: { finding: finding.id } };
}
