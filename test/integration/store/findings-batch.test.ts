/**
 * The evaluator writes a batch's findings together (issue 39): `upsertFindings` must store and
 * answer exactly what `upsertFinding` one draft at a time in `(detector, anchor)` order does:
 * created, updated, escalated, unchanged; severity never lowered; a second draft of an anchor in
 * the same batch applied after the first; `createdAt` and `late` on new findings only. A
 * property over random rounds of drafts, run against two databases side by side, one written
 * each way. On PGlite, or on PostgreSQL with DATABASE_URL.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FindingDraft, Severity } from '../../../src/model/findings.ts';
import {
  upsertFinding,
  upsertFindings,
  type FindingUpsert,
  type UpsertResult,
} from '../../../src/store/findings.ts';
import type { Db } from '../../../src/store/db.ts';
import { ensureWorkspace } from '../../../src/store/workspaces.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';

let batched: TestStore;
let oneByOne: TestStore;
beforeAll(async () => {
  [batched, oneByOne] = await Promise.all([createTestStore(), createTestStore()]);
}, 120_000);
afterAll(async () => {
  await Promise.all([batched?.close(), oneByOne?.close()]);
});

const DETECTORS = ['context_too_full', 'history_lost', 'tool_takeover'] as const;
const SEVERITIES: Severity[] = ['info', 'warning', 'critical'];

const draftOf = (
  d: number,
  anchor: number,
  severity: Severity,
  variant: number,
  ws: string,
): FindingUpsert['draft'] => ({
  detector: DETECTORS[d]!,
  anchor: `${ws}-a${anchor}`,
  severity,
  kind: variant === 2 ? null : `kind-${variant}`,
  conversationId: `${ws}-conv-${anchor % 3}`,
  streamKey: 'main',
  runId: `run-${anchor}`,
  traceId: `trace-${anchor}`,
  spanId: `span-${anchor}-${variant}`,
  model: variant === 1 ? null : 'claude-sonnet-4-5',
  summary: `summary ${variant}`,
  details: { variant, nested: { b: 1, a: [variant] } },
});

const upsertArb = fc.record({
  d: fc.integer({ min: 0, max: 2 }),
  anchor: fc.integer({ min: 0, max: 5 }),
  severity: fc.constantFrom(...SEVERITIES),
  variant: fc.integer({ min: 0, max: 2 }),
  history: fc.boolean(),
  late: fc.boolean(),
});
type Spec = typeof upsertArb extends fc.Arbitrary<infer T> ? T : never;

const toUpsert = (spec: Spec, ws: string): FindingUpsert => ({
  draft: draftOf(spec.d, spec.anchor, spec.severity, spec.variant, ws),
  createdAt: spec.history ? new Date(Date.UTC(2020, 0, 1, 0, spec.anchor)) : undefined,
  late: spec.late,
});

const compare = (a: FindingDraft, b: FindingDraft) =>
  a.detector < b.detector
    ? -1
    : a.detector > b.detector
      ? 1
      : a.anchor < b.anchor
        ? -1
        : a.anchor > b.anchor
          ? 1
          : 0;

/** The reference: one `upsertFinding` per draft, in `(detector, anchor)` order, stable. */
async function oneAtATime(db: Db, ws: string, upserts: FindingUpsert[]): Promise<UpsertResult[]> {
  const order = upserts
    .map((_, i) => i)
    .sort((a, b) => compare(upserts[a]!.draft, upserts[b]!.draft) || a - b);
  const results: UpsertResult[] = new Array(upserts.length);
  for (const i of order) {
    const { draft, createdAt, late } = upserts[i]!;
    results[i] = await upsertFinding(db, ws, draft, {
      ...(createdAt ? { createdAt } : {}),
      ...(late ? { late: true } : {}),
    });
  }
  return results;
}

/** The stored findings of a workspace, without what each database numbers or dates itself. */
async function stored(db: Db, ws: string) {
  const rows = await db
    .selectFrom('findings')
    .select([
      'detector',
      'anchor',
      'severity',
      'kind',
      'conversation_id',
      'trace_id',
      'span_id',
      'model',
      'summary',
      'details',
      'late',
    ])
    .select((eb) => eb.fn<number>('date_part', [eb.val('year'), eb.ref('created_at')]).as('year'))
    .where('workspace_id', '=', ws)
    .orderBy('detector')
    .orderBy('anchor')
    .execute();
  return rows.map((row) => ({ ...row, year: Number(row.year) }));
}

describe('upsertFindings', () => {
  it('stores and answers what upsertFinding one draft at a time does', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(upsertArb, { maxLength: 8 }), { minLength: 1, maxLength: 4 }),
        async (rounds) => {
          const ws = `ws${run++}`;
          await ensureWorkspace(batched.db, ws);
          await ensureWorkspace(oneByOne.db, ws);
          for (const round of rounds) {
            const upserts = round.map((spec) => toUpsert(spec, ws));
            const got = await batched.db
              .transaction()
              .execute((trx) => upsertFindings(trx, ws, upserts));
            const want = await oneByOne.db
              .transaction()
              .execute((trx) => oneAtATime(trx, ws, upserts));
            expect(got.map(({ outcome, severity }) => ({ outcome, severity }))).toEqual(
              want.map(({ outcome, severity }) => ({ outcome, severity })),
            );
            // the same draft's results name the same finding
            const ids = new Map<string, string>();
            got.forEach((result, i) => {
              const key = `${upserts[i]!.draft.detector}/${upserts[i]!.draft.anchor}`;
              expect(ids.get(key) ?? result.id).toBe(result.id);
              ids.set(key, result.id);
            });
          }
          expect(await stored(batched.db, ws)).toEqual(await stored(oneByOne.db, ws));
        },
      ),
      { numRuns: 25 },
    );
  }, 120_000);

  it('writes nothing and answers nothing for no drafts', async () => {
    expect(await upsertFindings(batched.db, 'default', [])).toEqual([]);
  });
});
