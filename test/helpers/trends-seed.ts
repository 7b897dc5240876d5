/**
 * Rows for the trend tests (test/integration/api-trends.test.ts, test/browser/trends.test.ts):
 * calls at a given time, and findings of a conversation, written straight into a store.
 */
import type { LlmCall } from '../../src/model/calls.ts';
import type { FindingDraft } from '../../src/model/findings.ts';
import type { Db } from '../../src/store/db.ts';
import { upsertFinding } from '../../src/store/findings.ts';
import { call } from './calls.ts';

/** A call of `conv` at `ms` (+ `i` seconds), with its context and window when given. */
export function callAt(
  conv: string,
  ms: number,
  i: number,
  fields: Partial<LlmCall> & { context?: number | null; window?: number | null } = {},
): LlmCall {
  const { context, window, ...rest } = fields;
  const startNs = (BigInt(ms + i * 1000) * 1_000_000n).toString();
  return call(conv, i, {
    spanId: `${conv}-${i}`,
    startNs,
    endNs: startNs,
    ...(context !== undefined ? { contextTokens: context, inputTokensRaw: context } : {}),
    ...(window !== undefined ? { contextWindow: window } : {}),
    ...rest,
  });
}

let anchor = 0;

/** A warning of `detector` on `conv` (each with an anchor of its own). */
export async function seedFinding(
  db: Db,
  conv: string,
  detector: FindingDraft['detector'],
  workspace = 'default',
): Promise<void> {
  await upsertFinding(db, workspace, {
    detector,
    anchor: `a${anchor++}`,
    severity: 'warning',
    kind: null,
    conversationId: conv,
    streamKey: conv,
    runId: `run-${conv}`,
    traceId: `trace-${conv}`,
    spanId: 'span',
    model: null,
    summary: 'seeded',
    details: {},
  });
}
