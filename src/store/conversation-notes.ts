/**
 * What the jobs of one ingest transaction tell their conversations (new items, projects, an
 * import's evaluation hold), gathered while the jobs run and written once, just before COMMIT,
 * in one order for the whole transaction: workspace, then conversation id.
 *
 * Why not each job on its own: group commit runs several requests in one transaction and two
 * transactions at once. Each job wrote its conversations in id order, but the order across a
 * group was not global (job 1 locks A and C, job 2 B; the other group's job locks B then C),
 * so two groups sharing conversations deadlocked (issue 33: 1.7% of batches answered 500 with
 * no fault at all). Written together, every transaction takes the conversation rows it needs
 * in the same order, and holds them only for the last statement before its COMMIT.
 */
import type { ConversationProject } from '../model/calls.ts';
import type { CallMemo, MemoWrite } from './call-memo.ts';
import type { Db } from './db.ts';
import { holdEvaluation, noteConversations, type IngestMark } from './conversations.ts';

interface WorkspaceNotes {
  marks: IngestMark[];
  projects: ConversationProject[];
  /** Evaluation holds (ms) of conversations, the longest asked. */
  holds: Map<string, number>;
}

export class ConversationNotes {
  readonly #byWorkspace = new Map<string, WorkspaceNotes>();
  /** The memory of new calls the last {@link write} handed its calls to, to settle after COMMIT. */
  #memoWrites: MemoWrite[] = [];

  #of(workspaceId: string): WorkspaceNotes {
    let notes = this.#byWorkspace.get(workspaceId);
    if (!notes) {
      notes = { marks: [], projects: [], holds: new Map() };
      this.#byWorkspace.set(workspaceId, notes);
    }
    return notes;
  }

  /** New items of conversations and where conversations run (see noteConversations). */
  note(
    workspaceId: string,
    marks: readonly IngestMark[],
    projects: readonly ConversationProject[] = [],
  ): void {
    if (marks.length === 0 && projects.length === 0) return;
    const notes = this.#of(workspaceId);
    // one by one: a spread of a 100,000-call batch's marks would pass them all as arguments
    for (const mark of marks) notes.marks.push(mark);
    for (const project of projects) notes.projects.push(project);
  }

  /** Holds the evaluator loops off these conversations for `ms` (see holdEvaluation). */
  hold(workspaceId: string, conversationIds: readonly string[], ms: number): void {
    if (conversationIds.length === 0) return;
    const { holds } = this.#of(workspaceId);
    for (const id of conversationIds) holds.set(id, Math.max(holds.get(id) ?? 0, ms));
  }

  /** Adds what another job noted (a job's notes join the transaction's once the job succeeded). */
  absorb(other: ConversationNotes): void {
    for (const [workspaceId, theirs] of other.#byWorkspace) {
      this.note(workspaceId, theirs.marks, theirs.projects);
      for (const [id, ms] of theirs.holds) this.hold(workspaceId, [id], ms);
    }
  }

  /** The transaction committed: the new calls it wrote join the memory they were handed to. */
  committed(): void {
    for (const handed of this.#memoWrites) handed.committed();
    this.#memoWrites = [];
  }

  /**
   * The write was rolled back (`applied` false), or its commit's outcome is not known
   * ('unknown'): see MemoWrite.abandoned.
   */
  abandoned(applied: false | 'unknown'): void {
    for (const handed of this.#memoWrites) handed.abandoned(applied);
    this.#memoWrites = [];
  }

  get empty(): boolean {
    return this.#byWorkspace.size === 0;
  }

  /**
   * Writes everything noted, workspace by workspace in id order, at most
   * {@link CONVERSATIONS_PER_STATEMENT} conversations a statement (each in id order too: PGlite
   * binds at most 32,767 parameters), then the holds on rows this transaction now holds. With
   * `memo`, the new calls are handed to it (./call-memo.ts): settle them with {@link committed}
   * or {@link abandoned} once the transaction ends. Written again (a retry after a lost race),
   * what the earlier write handed over is abandoned first.
   */
  async write(db: Db, memo?: CallMemo): Promise<void> {
    this.abandoned(false);
    const workspaces = [...this.#byWorkspace.keys()].sort();
    for (const workspaceId of workspaces) {
      const { marks, projects } = this.#byWorkspace.get(workspaceId)!;
      const ids = [...new Set([...marks, ...projects].map((note) => note.conversationId))];
      const tokens =
        memo &&
        ((fresh: Parameters<CallMemo['begin']>[1]) => {
          const handed = memo.begin(workspaceId, fresh);
          this.#memoWrites.push(handed);
          return handed.tokens;
        });
      if (ids.length <= CONVERSATIONS_PER_STATEMENT) {
        await noteConversations(db, workspaceId, marks, projects, tokens);
        continue;
      }
      const chunkOf = new Map(
        ids.sort().map((id, i) => [id, Math.floor(i / CONVERSATIONS_PER_STATEMENT)]),
      );
      const chunks = Array.from(
        { length: Math.ceil(ids.length / CONVERSATIONS_PER_STATEMENT) },
        () => ({ marks: [] as IngestMark[], projects: [] as ConversationProject[] }),
      );
      for (const mark of marks) chunks[chunkOf.get(mark.conversationId)!]!.marks.push(mark);
      for (const project of projects)
        chunks[chunkOf.get(project.conversationId)!]!.projects.push(project);
      for (const chunk of chunks)
        await noteConversations(db, workspaceId, chunk.marks, chunk.projects, tokens);
    }
    for (const workspaceId of workspaces) {
      const byMs = new Map<number, string[]>();
      for (const [id, ms] of this.#byWorkspace.get(workspaceId)!.holds) {
        const ids = byMs.get(ms) ?? [];
        ids.push(id);
        byMs.set(ms, ids);
      }
      for (const [ms, ids] of byMs)
        for (let at = 0; at < ids.length; at += CONVERSATIONS_PER_STATEMENT)
          await holdEvaluation(
            db,
            workspaceId,
            ids.slice(at, at + CONVERSATIONS_PER_STATEMENT),
            ms,
          );
    }
  }
}

/** Conversations one statement writes (10 parameters each: well within PGlite's 32,767). */
export const CONVERSATIONS_PER_STATEMENT = 2_000;
