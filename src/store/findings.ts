/**
 * Findings: upserted by `(workspace_id, detector, anchor)` — never duplicated, never
 * retracted, severity never lowered — and listed newest first with cursor pagination.
 * Every function takes the database handle first; the caller owns the transaction.
 */
import { sql, type Selectable } from 'kysely';
import {
  SEVERITY_RANK,
  type DetectorId,
  type Finding,
  type FindingDraft,
  type Severity,
} from '../model/findings.ts';
import { projectsOf } from './conversations.ts';
import type { Db } from './db.ts';
import { PREPARED } from './prepared.ts';
import type { FindingsTable } from './schema.ts';

/** What an upsert did. `escalated`: an existing finding was raised to critical. */
export type UpsertOutcome = 'created' | 'escalated' | 'updated' | 'unchanged';

export interface UpsertResult {
  id: string;
  outcome: UpsertOutcome;
  /** The stored severity after the upsert (never lower than before). */
  severity: Severity;
}

/** A `findings` row with its conversation's project (read by {@link withProjects}). */
export type FindingRow = Selectable<FindingsTable> & { project: string | null };

/**
 * Maps a `findings` row to the model Finding, which is the Finding JSON of DESIGN §8: the one
 * mapper behind the API's answers and every channel's payload (src/notifier/payload.ts).
 */
export function toFinding(row: FindingRow): Finding {
  return {
    id: String(row.id),
    workspace: row.workspace_id,
    detector: row.detector as DetectorId,
    anchor: row.anchor,
    severity: row.severity,
    kind: row.kind,
    conversationId: row.conversation_id,
    streamKey: row.stream_key,
    runId: row.run_id,
    traceId: row.trace_id,
    spanId: row.span_id,
    model: row.model,
    summary: row.summary,
    details: (row.details ?? {}) as Record<string, unknown>,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
    late: row.late,
    project: row.project,
    acknowledgedAt: row.acknowledged_at ? new Date(row.acknowledged_at).toISOString() : null,
    acknowledgedNote: row.acknowledged_note,
  };
}

/**
 * Findings rows with their conversations' projects. The project is the conversation's (the
 * latest its producer reported), read when the finding is, not copied onto it, so a finding made
 * before the project was known names it once it is. Read for the rows of a page in one indexed
 * query after the page is chosen, so a page costs what it did without projects (a join in the
 * page's query made the planner filter every remaining row: 15x slower at 10,000 findings).
 */
async function withProjects(
  db: Db,
  workspaceId: string,
  rows: ReadonlyArray<Selectable<FindingsTable>>,
): Promise<Finding[]> {
  const projects = await projectsOf(db, workspaceId, [
    ...new Set(rows.map((row) => row.conversation_id)),
  ]);
  return rows.map((row) =>
    toFinding({ ...row, project: projects.get(row.conversation_id) ?? null }),
  );
}

const INT8_MAX = 9_223_372_036_854_775_807n;

/** True when `id` is a decimal bigint id (what finding ids look like). */
export function isFindingId(id: string): boolean {
  return /^\d{1,19}$/.test(id) && BigInt(id) <= INT8_MAX && BigInt(id) > 0n;
}

function maxSeverity(a: Severity, b: Severity): Severity {
  return SEVERITY_RANK[a] >= SEVERITY_RANK[b] ? a : b;
}

/** JSON with object keys sorted, to compare jsonb values read back with drafts. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : v,
  );
}

/** A draft's columns in the `findings` table, its details as they are (not yet JSON text). */
function draftColumns(draft: FindingDraft) {
  return {
    detector: draft.detector,
    anchor: draft.anchor,
    severity: draft.severity,
    kind: draft.kind,
    conversation_id: draft.conversationId,
    stream_key: draft.streamKey,
    run_id: draft.runId,
    trace_id: draft.traceId,
    span_id: draft.spanId,
    model: draft.model,
    summary: draft.summary,
    details: draft.details,
  };
}

/**
 * The `findings` row of a new finding: dated `createdAt` (else now), `late` when found by judging
 * calls again.
 */
function findingRow(workspaceId: string, { draft, createdAt, late }: FindingUpsert) {
  return {
    workspace_id: workspaceId,
    ...draftColumns(draft),
    details: JSON.stringify(draft.details),
    created_at: createdAt ?? sql<Date>`now()`,
    late: late ?? false,
  };
}

/**
 * Inserts a finding, or updates the one with the same `(detector, anchor)`: the severity is
 * raised but never lowered; kind, summary, details, model and the anchoring call are replaced.
 * An update that changes nothing is skipped (`unchanged`). Safe under concurrency: a
 * concurrent insert of the same anchor turns this into an update of that row. `createdAt`
 * dates a new finding (a finding from imported history carries its call's time); default now.
 * `late` marks a new finding as found by judging calls again (an existing one keeps its mark).
 */
export async function upsertFinding(
  db: Db,
  workspaceId: string,
  draft: FindingDraft,
  options: { createdAt?: Date; late?: boolean } = {},
): Promise<UpsertResult> {
  for (let attempt = 0; ; attempt++) {
    const existing = await db
      .selectFrom('findings')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('detector', '=', draft.detector)
      .where('anchor', '=', draft.anchor)
      .forUpdate()
      .executeTakeFirst();
    if (existing) return updateExisting(db, existing, draft);

    const inserted = await db
      .insertInto('findings')
      .values(findingRow(workspaceId, { draft, ...options }))
      .onConflict((oc) => oc.columns(['workspace_id', 'detector', 'anchor']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted) return { id: String(inserted.id), outcome: 'created', severity: draft.severity };
    // Another transaction inserted the same anchor and committed; update its row instead.
    if (attempt >= 2)
      throw new Error(`finding ${draft.detector}/${draft.anchor} neither inserted nor found`);
  }
}

/**
 * What upserting `draft` over the stored `existing` changes: null when nothing (an update
 * that changes nothing is skipped), else the severity to store (never lowered) and the outcome.
 */
function findingChange(
  existing: Selectable<FindingsTable>,
  draft: FindingDraft,
): { severity: Severity; outcome: 'escalated' | 'updated' } | null {
  const severity = maxSeverity(existing.severity, draft.severity);
  const same =
    severity === existing.severity &&
    draft.kind === existing.kind &&
    draft.summary === existing.summary &&
    draft.model === existing.model &&
    draft.traceId === existing.trace_id &&
    draft.spanId === existing.span_id &&
    canonicalJson(draft.details) === canonicalJson(existing.details);
  if (same) return null;
  const escalated = severity === 'critical' && existing.severity !== 'critical';
  return { severity, outcome: escalated ? 'escalated' : 'updated' };
}

async function updateExisting(
  db: Db,
  existing: Selectable<FindingsTable>,
  draft: FindingDraft,
): Promise<UpsertResult> {
  const id = String(existing.id);
  const change = findingChange(existing, draft);
  if (!change) return { id, outcome: 'unchanged', severity: existing.severity };
  await db
    .updateTable('findings')
    .set({
      severity: change.severity,
      kind: draft.kind,
      trace_id: draft.traceId,
      span_id: draft.spanId,
      model: draft.model,
      summary: draft.summary,
      details: JSON.stringify(draft.details),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .execute();
  return { id, ...change };
}

/** Filters of a findings listing; all optional, combined with AND. */
export interface FindingFilter {
  detector?: DetectorId | undefined;
  severity?: Severity | undefined;
  conversationId?: string | undefined;
  runId?: string | undefined;
  /** The model the finding names (exact match). */
  model?: string | undefined;
  /** Created at or after this time. */
  since?: Date | undefined;
  /** Created before this time. */
  until?: Date | undefined;
  /** Its conversation's project, exactly as stored. */
  project?: string | undefined;
  /** Only acknowledged findings (true) or only those not acknowledged yet (false). */
  acknowledged?: boolean | undefined;
}

/**
 * Where a page of findings ends: the last item's `created_at` in microseconds since the epoch
 * and its id, both decimal.
 */
export type FindingKey = readonly [createdMicros: string, id: string];

export interface FindingPage {
  items: Finding[];
  /** Pass as `after` to get the next page; null on the last page. */
  next: FindingKey | null;
}

/** Largest page `listFindings` returns. */
export const MAX_FINDINGS_PAGE = 200;

/**
 * Lists a workspace's findings newest first (`created_at`, then id), `limit` at a time
 * (1..200). `after` continues after the last item of a previous page.
 */
export async function listFindings(
  db: Db,
  workspaceId: string,
  filter: FindingFilter,
  page: { limit: number; after?: FindingKey | undefined },
): Promise<FindingPage> {
  const limit = Math.min(Math.max(1, Math.trunc(page.limit)), MAX_FINDINGS_PAGE);
  let query = db
    .selectFrom('findings')
    .selectAll()
    .select(sql<string>`floor(extract(epoch FROM created_at) * 1000000)::bigint`.as('created_us'))
    .where('workspace_id', '=', workspaceId);
  if (filter.detector) query = query.where('detector', '=', filter.detector);
  if (filter.severity) query = query.where('severity', '=', filter.severity);
  if (filter.conversationId) query = query.where('conversation_id', '=', filter.conversationId);
  if (filter.runId) query = query.where('run_id', '=', filter.runId);
  if (filter.model) query = query.where('model', '=', filter.model);
  if (filter.since) query = query.where('created_at', '>=', filter.since);
  if (filter.until) query = query.where('created_at', '<', filter.until);
  if (filter.project !== undefined)
    query = query.where('conversation_id', 'in', (eb) =>
      eb
        .selectFrom('conversations')
        .select('conversations.id')
        .where('conversations.workspace_id', '=', workspaceId)
        .where('conversations.project', '=', filter.project!),
    );
  if (filter.acknowledged !== undefined)
    query = query.where('acknowledged_at', filter.acknowledged ? 'is not' : 'is', null);
  if (page.after !== undefined) {
    const [micros, id] = page.after;
    query = query.where(
      sql<boolean>`(created_at, id) < (timestamptz 'epoch' + ${micros}::bigint * interval '1 microsecond', ${id}::bigint)`,
    );
  }
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  const last = shown.at(-1);
  return {
    items: await withProjects(
      db,
      workspaceId,
      shown.map(({ created_us: _created, ...row }) => row),
    ),
    next: more && last ? [String(last.created_us), String(last.id)] : null,
  };
}

/** A finding by id within a workspace; undefined when absent or in another workspace. */
export async function getFinding(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<Finding | undefined> {
  if (!isFindingId(id)) return undefined;
  const row = await db
    .selectFrom('findings')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? (await withProjects(db, workspaceId, [row]))[0] : undefined;
}

/** Longest note an acknowledgement keeps (characters). */
export const MAX_ACKNOWLEDGEMENT_NOTE = 2000;

/**
 * Marks a finding acknowledged with a note, now (the database's clock); acknowledging again
 * replaces the note and the time. Returns the finding as it is after, or undefined when it
 * does not exist in the workspace.
 */
export async function acknowledgeFinding(
  db: Db,
  workspaceId: string,
  id: string,
  note: string,
): Promise<Finding | undefined> {
  if (!isFindingId(id)) return undefined;
  const updated = await db
    .updateTable('findings')
    .set({ acknowledged_at: sql<Date>`now()`, acknowledged_note: note })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) return undefined;
  return getFinding(db, workspaceId, id);
}

/**
 * Takes a finding's acknowledgement back (it lists as not acknowledged again). Returns the
 * finding as it is after, or undefined when it does not exist in the workspace.
 */
export async function unacknowledgeFinding(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<Finding | undefined> {
  if (!isFindingId(id)) return undefined;
  const updated = await db
    .updateTable('findings')
    .set({ acknowledged_at: null, acknowledged_note: null })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) return undefined;
  return getFinding(db, workspaceId, id);
}

/** One draft to upsert with {@link upsertFindings}, with the options of {@link upsertFinding}. */
export interface FindingUpsert {
  draft: FindingDraft;
  createdAt?: Date | undefined;
  late?: boolean | undefined;
}

const anchorKey = (draft: { detector: string; anchor: string }) =>
  `${draft.detector}\u0000${draft.anchor}`;
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * {@link upsertFinding} for many drafts of one workspace at once (an evaluator's batch), with
 * the same outcomes, in at most three statements whatever their number: the stored rows read
 * and locked together in `(detector, anchor)` order (the one lock order of every evaluator, so
 * batches cannot deadlock), the new ones inserted together, the changed ones updated together.
 * A draft another transaction inserted meanwhile, or a second draft of the same anchor, goes
 * through {@link upsertFinding} after the rest. Results are in the order of `upserts`.
 */
export async function upsertFindings(
  db: Db,
  workspaceId: string,
  upserts: readonly FindingUpsert[],
): Promise<UpsertResult[]> {
  const results: Array<UpsertResult | undefined> = new Array(upserts.length);
  if (upserts.length === 0) return [];
  const order = upserts
    .map((_, i) => i)
    .sort(
      (a, b) =>
        compareText(upserts[a]!.draft.detector, upserts[b]!.draft.detector) ||
        compareText(upserts[a]!.draft.anchor, upserts[b]!.draft.anchor) ||
        a - b,
    );
  const first = new Map<string, number>();
  const later: number[] = [];
  for (const i of order) {
    const key = anchorKey(upserts[i]!.draft);
    if (first.has(key)) later.push(i);
    else first.set(key, i);
  }
  const batch = [...first.values()];
  const detectors = batch.map((i) => upserts[i]!.draft.detector);
  const anchors = batch.map((i) => upserts[i]!.draft.anchor);
  const existingRows = await sql<Selectable<FindingsTable>>`
    SELECT f.* FROM findings f
     WHERE f.workspace_id = ${workspaceId}
       AND (f.detector, f.anchor) IN (SELECT * FROM unnest(${detectors}::text[], ${anchors}::text[]))
     ORDER BY f.detector, f.anchor FOR UPDATE`.execute(db);
  const existing = new Map(existingRows.rows.map((row) => [anchorKey(row), row]));

  const inserts: number[] = [];
  const updates: Array<{ i: number; id: string; severity: Severity }> = [];
  for (const i of batch) {
    const { draft } = upserts[i]!;
    const row = existing.get(anchorKey(draft));
    if (!row) {
      inserts.push(i);
      continue;
    }
    const id = String(row.id);
    const change = findingChange(row, draft);
    results[i] = change ? { id, ...change } : { id, outcome: 'unchanged', severity: row.severity };
    if (change) updates.push({ i, id, severity: change.severity });
  }

  if (inserts.length > 0) {
    // one JSON parameter for the rows: no array literal to escape, details parsed once
    const rows = inserts.map((i) => {
      const { draft, createdAt, late } = upserts[i]!;
      return {
        ...draftColumns(draft),
        created_at: createdAt?.toISOString() ?? null,
        late: late ?? false,
      };
    });
    const inserted = await sql<{ id: string; detector: string; anchor: string }>`
      INSERT INTO findings (workspace_id, detector, anchor, severity, kind, conversation_id,
        stream_key, run_id, trace_id, span_id, model, summary, details, created_at, late)
      SELECT ${workspaceId}, v.detector, v.anchor, v.severity, v.kind, v.conversation_id,
        v.stream_key, v.run_id, v.trace_id, v.span_id, v.model, v.summary, v.details,
        COALESCE(v.created_at, now()), v.late
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(detector text, anchor text,
        severity text, kind text, conversation_id text, stream_key text, run_id text,
        trace_id text, span_id text, model text, summary text, details jsonb,
        created_at timestamptz, late boolean)
      ON CONFLICT (workspace_id, detector, anchor) DO NOTHING
      RETURNING id, detector, anchor ${PREPARED}`.execute(db);
    const insertedIds = new Map(inserted.rows.map((row) => [anchorKey(row), String(row.id)]));
    for (const i of inserts) {
      const { draft } = upserts[i]!;
      const id = insertedIds.get(anchorKey(draft));
      // inserted by another transaction since the read: updated after the rest
      if (id === undefined) later.push(i);
      else results[i] = { id, outcome: 'created', severity: draft.severity };
    }
  }

  if (updates.length > 0) {
    const rows = updates.map(({ i, id, severity }) => {
      const { draft } = upserts[i]!;
      return {
        id,
        severity,
        kind: draft.kind,
        trace_id: draft.traceId,
        span_id: draft.spanId,
        model: draft.model,
        summary: draft.summary,
        details: draft.details,
      };
    });
    await sql`
      UPDATE findings f SET severity = v.severity, kind = v.kind, trace_id = v.trace_id,
        span_id = v.span_id, model = v.model, summary = v.summary, details = v.details,
        updated_at = now()
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(id int8, severity text,
        kind text, trace_id text, span_id text, model text, summary text, details jsonb)
      WHERE f.id = v.id ${PREPARED}`.execute(db);
  }

  for (const i of later.sort((a, b) => order.indexOf(a) - order.indexOf(b))) {
    const { draft, createdAt, late } = upserts[i]!;
    results[i] = await upsertFinding(db, workspaceId, draft, {
      ...(createdAt ? { createdAt } : {}),
      ...(late ? { late: true } : {}),
    });
  }
  return results.map((result) => result!);
}
