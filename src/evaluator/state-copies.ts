/**
 * The evaluator's keyed state (issue 39): the detectors' state of each conversation this
 * process evaluated last, kept in memory with the token it was stored under
 * (`conversations.state_token`, migration 0170), so the next evaluation of that conversation
 * starts from memory instead of reading and parsing the stored state. The database stays the
 * checkpoint: every evaluation still stores its position and state with a new token, and a copy
 * counts only while its token is the row's, so a conversation another process evaluated since,
 * a restart or a kill -9 simply reads the row as before. At most `limit` conversations, and
 * states of at most `limitBytes` in all (their size as stored, JSON characters: a state in memory
 * takes a few times that), are kept, the least recently evaluated dropped first. The states are
 * never mutated (the detectors return new ones), so holding them costs no copy.
 *
 * A copy also names the position it was stored with (`at`), and counts only at that position:
 * a process of an earlier version, still running during an upgrade, stores a new position and
 * state without a new token, and the copy must not stand in for what it stored.
 */
import type { StateCopies as StateLookup } from '../store/conversations.ts';

export class StateCopies implements StateLookup {
  readonly #copies = new Map<
    string,
    { token: string; bytes: number; at: string | null; state: unknown }
  >();
  #bytes = 0;

  constructor(
    readonly limit = 10_000,
    readonly limitBytes = 16 * 1024 * 1024,
  ) {}

  #key(workspaceId: string, conversationId: string): string {
    return `${workspaceId}\u0000${conversationId}`;
  }

  /**
   * The state stored under `token` at position `at` (`ns:spanId`, null before any call) for the
   * conversation, if this is the copy held.
   */
  get(
    workspaceId: string,
    conversationId: string,
    token: string,
    at: string | null = null,
  ): unknown {
    const copy = this.#copies.get(this.#key(workspaceId, conversationId));
    return copy?.token === token && copy.at === at ? copy.state : undefined;
  }

  /** Keeps the state just stored (committed) under `token` at `at`, `bytes` long as stored. */
  set(
    workspaceId: string,
    conversationId: string,
    stored: { token: string; bytes: number; at?: string | null },
    state: unknown,
  ): void {
    const key = this.#key(workspaceId, conversationId);
    this.#drop(key);
    if (stored.bytes > this.limitBytes) return;
    this.#copies.set(key, {
      token: stored.token,
      bytes: stored.bytes,
      at: stored.at ?? null,
      state,
    });
    this.#bytes += stored.bytes;
    for (const oldest of this.#copies.keys()) {
      if (this.#copies.size <= this.limit && this.#bytes <= this.limitBytes) break;
      this.#drop(oldest);
    }
  }

  #drop(key: string): void {
    const copy = this.#copies.get(key);
    if (!copy) return;
    this.#copies.delete(key);
    this.#bytes -= copy.bytes;
  }

  /** The size of the states kept, as stored (JSON characters). */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#copies.size;
  }
}
