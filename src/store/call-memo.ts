/**
 * The calls this process stored, kept in memory until its evaluator judges them (issue 39: judge
 * new calls as they commit, the database the checkpoint, not the working set). Ingest hands the
 * calls it inserted to the memo as it commits them; the evaluator, claiming a conversation, takes
 * its new calls from here instead of reading them back, when the memo can prove they are exactly
 * the stored rows.
 *
 * The proof is a token per conversation (`conversations.calls_token`, migration 0210), an epoch:
 * - an evaluation that read every call after its position from the database (and settled) stores
 *   a new token with that position, and the memo's entry starts there: no call after it, the
 *   compactions after it that the read saw;
 * - a new conversation's row is created with a token of this process, and its entry holds the
 *   calls of that first write;
 * - an ingest write of this process that only inserted new calls into a conversation (no
 *   replacement, no merge, no change to stored calls or compactions: `IngestMark.fresh`) keeps the
 *   row's token if it is the entry's (`noteConversations`), and its calls join the entry when it
 *   commits;
 * - every other write of the conversation's items (another process, a merge, content or windows
 *   given to stored calls, compactions, an earlier version's write: `calls_noted_at`) sets the
 *   token to null, or to one no entry holds.
 * So a row whose token is its entry's has exactly the entry's calls after the entry's base. An
 * entry with a write under way (`writing`: begun, not yet committed and added) is not used: its
 * calls may have committed already. The tokens are random: another process never holds the same.
 *
 * Bounded: at most `limit` conversations and `limitCalls` calls in all, the least recently used
 * dropped first (an evicted conversation's calls are read from the database, as before).
 */
import type { Compaction, LlmCall } from '../model/calls.ts';
import { randomToken } from './conversations.ts';
import {
  readBack,
  type PrefetchedPage,
  type TimelinePosition,
  type WrittenCall,
} from './timeline.ts';

interface Entry {
  /** The row's `calls_token` while this entry is exact. */
  token: string;
  /** Every stored call of the conversation after this position is in `calls` (null: every call). */
  base: TimelinePosition | null;
  calls: LlmCall[];
  /** The stored compactions after `base`'s start, when an evaluation saw them. */
  compactions: Compaction[];
  /** Writes under `token` begun and not yet settled. */
  writing: number;
}

/** An ingest transaction's writes to the memo: the tokens to store, settled after the commit. */
export interface MemoWrite {
  /** By conversation id: the token its `conversations` row keeps (or is created with). */
  tokens: ReadonlyMap<string, string>;
  /** The transaction committed: its calls join their entries. */
  committed(): void;
  /**
   * The write did not happen (`applied` false: rolled back) or may have happened (`applied`
   * 'unknown': the commit's outcome is not known): its entries are left, or forgotten.
   */
  abandoned(applied: false | 'unknown'): void;
}

/** What the memo did, for tests and benchmarks. */
export interface MemoStats {
  /** Conversations whose new calls came from the memo. */
  used: number;
  /** Of those, compared with the stored rows (verification on). */
  verified: number;
  /** Of those, found different from the stored rows: a bug. */
  differed: number;
}

export const newCallsToken = randomToken;

const keyOf = (workspaceId: string, conversationId: string) =>
  `${workspaceId}\u0000${conversationId}`;

/** (a.ns, a.spanId) < (b.ns, b.spanId): start first, then span id. */
function before(a: TimelinePosition, b: TimelinePosition): boolean {
  const an = BigInt(a.ns);
  const bn = BigInt(b.ns);
  return an < bn || (an === bn && a.spanId < b.spanId);
}

const positionOf = (call: LlmCall): TimelinePosition => ({ ns: call.startNs, spanId: call.spanId });

/** The calls after `position` (every one when null). */
const callsAfter = (calls: readonly LlmCall[], position: TimelinePosition | null) =>
  position === null ? [...calls] : calls.filter((c) => before(position, positionOf(c)));

/** The compactions after `position`'s start (every one when null). */
function compactionsAfter(compactions: readonly Compaction[], position: TimelinePosition | null) {
  const ns = position === null ? null : BigInt(position.ns);
  return compactions.filter((c) => ns === null || BigInt(c.atNs) > ns);
}

export class CallMemo {
  readonly #entries = new Map<string, Entry>();
  #calls = 0;
  readonly stats: MemoStats = { used: 0, verified: 0, differed: 0 };

  constructor(
    readonly limit = 10_000,
    readonly limitCalls = 50_000,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  /** Calls held, in all entries. */
  get calls(): number {
    return this.#calls;
  }

  /**
   * Ingest, just before it writes its conversations' rows: `fresh` holds, by conversation, the
   * rows of the calls the transaction inserted, for the conversations it changed in no other
   * way. Returns the tokens to write; settle the result after the transaction ends.
   */
  begin(workspaceId: string, fresh: ReadonlyMap<string, readonly WrittenCall[]>): MemoWrite {
    const tokens = new Map<string, string>();
    const begun: Array<{ key: string; entry: Entry; token: string; calls: readonly LlmCall[] }> =
      [];
    for (const [conversationId, rows] of fresh) {
      const calls = rows.map(readBack);
      const key = keyOf(workspaceId, conversationId);
      let entry = this.#entries.get(key);
      if (!entry) {
        // holds the calls of the conversation only if this write creates its row (the row keeps
        // this token then); an existing row gets null from a token it does not hold
        entry = { token: newCallsToken(), base: null, calls: [], compactions: [], writing: 0 };
        this.#entries.set(key, entry);
      }
      entry.writing += 1;
      tokens.set(conversationId, entry.token);
      begun.push({ key, entry, token: entry.token, calls });
    }
    let settled = false;
    const settle = (outcome: 'committed' | false | 'unknown') => {
      if (settled) return;
      settled = true;
      for (const { key, entry, token, calls } of begun) {
        const current = this.#entries.get(key) === entry && entry.token === token;
        if (!current) continue; // a new epoch began meanwhile, or the entry was dropped
        entry.writing -= 1;
        if (outcome === 'unknown') this.#drop(key);
        else if (outcome === 'committed') {
          for (const call of calls) entry.calls.push(call);
          this.#calls += calls.length;
          this.#touch(key, entry);
        }
      }
      this.#trim();
    };
    return {
      tokens,
      committed: () => settle('committed'),
      abandoned: (applied) => settle(applied),
    };
  }

  /**
   * The evaluator, right after its claim: the conversation's calls (and compactions) after
   * `after` as a prefetched page of at most `limit - 1` calls, when the memo holds exactly the
   * stored ones (the row's `callsToken` is the entry's, and no write is under way); else
   * undefined. Calls sharing a start are left to the database, which orders their span ids by
   * its collation.
   */
  pageFor(
    claimed: { workspaceId: string; conversationId: string; callsToken: string | null },
    after: TimelinePosition | null,
    limit: number,
  ): PrefetchedPage | undefined {
    if (claimed.callsToken === null) return undefined;
    const entry = this.#entries.get(keyOf(claimed.workspaceId, claimed.conversationId));
    if (!entry || entry.token !== claimed.callsToken || entry.writing > 0) return undefined;
    if (entry.base !== null && (after === null || before(after, entry.base))) return undefined;
    const calls = callsAfter(entry.calls, after);
    if (calls.length >= limit) return undefined;
    calls.sort((a, b) => (before(positionOf(a), positionOf(b)) ? -1 : 1));
    for (let i = 0; i < calls.length; i++) {
      const previous = i === 0 ? after?.ns : calls[i - 1]!.startNs;
      if (previous !== undefined && BigInt(previous) === BigInt(calls[i]!.startNs))
        return undefined;
    }
    return { after, limit, calls, compactions: compactionsAfter(entry.compactions, after) };
  }

  /**
   * After an evaluation that took its calls from {@link pageFor} committed at `position`: what
   * it judged is dropped (the entry still holds every stored call after `position`).
   */
  judged(
    key: { workspaceId: string; conversationId: string },
    token: string,
    position: TimelinePosition | null,
  ): void {
    const k = keyOf(key.workspaceId, key.conversationId);
    const entry = this.#entries.get(k);
    if (!entry || entry.token !== token || position === null) return;
    if (entry.base !== null && before(position, entry.base)) return;
    const kept = callsAfter(entry.calls, position);
    this.#calls -= entry.calls.length - kept.length;
    entry.calls = kept;
    entry.base = position;
    entry.compactions = compactionsAfter(entry.compactions, position);
    this.#touch(k, entry);
  }

  /**
   * After an evaluation that read every call after its start from the database committed,
   * settled at `position` with `token` stored: a new epoch, holding no call yet and the
   * compactions after the position it read.
   */
  started(
    key: { workspaceId: string; conversationId: string },
    token: string,
    position: TimelinePosition | null,
    compactions: readonly Compaction[],
  ): void {
    const k = keyOf(key.workspaceId, key.conversationId);
    this.#drop(k);
    this.#entries.set(k, {
      token,
      base: position,
      calls: [],
      compactions: compactionsAfter(compactions, position),
      writing: 0,
    });
    this.#trim();
  }

  #touch(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#calls -= entry.calls.length;
    // writes under way find it gone: their calls are not kept
    entry.token = '';
  }

  #trim(): void {
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.limit && this.#calls <= this.limitCalls) break;
      this.#drop(oldest);
    }
  }
}
