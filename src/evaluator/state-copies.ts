/**
 * The evaluator's keyed state (issue 39): the detectors' state of each conversation this
 * process evaluated last, kept in memory with the token it was stored under
 * (`conversations.state_token`, migration 0170), so the next evaluation of that conversation
 * starts from memory instead of reading and parsing the stored state. The database stays the
 * checkpoint: every evaluation still stores its position and state with a new token, and a copy
 * counts only while its token is the row's, so a conversation another process evaluated since,
 * a restart or a kill -9 simply reads the row as before. At most `limit` conversations are
 * kept, the least recently evaluated dropped first. The states are never mutated (the detectors
 * return new ones), so holding them costs no copy.
 */
import type { StateCopies as StateLookup } from '../store/conversations.ts';

export class StateCopies implements StateLookup {
  readonly #copies = new Map<string, { token: string; state: unknown }>();

  constructor(readonly limit = 10_000) {}

  #key(workspaceId: string, conversationId: string): string {
    return `${workspaceId}\u0000${conversationId}`;
  }

  /** The state stored under `token` for the conversation, if this is the copy held. */
  get(workspaceId: string, conversationId: string, token: string): unknown {
    const copy = this.#copies.get(this.#key(workspaceId, conversationId));
    return copy?.token === token ? copy.state : undefined;
  }

  /** Keeps the state just stored (committed) under `token`. */
  set(workspaceId: string, conversationId: string, token: string, state: unknown): void {
    const key = this.#key(workspaceId, conversationId);
    this.#copies.delete(key);
    this.#copies.set(key, { token, state });
    if (this.#copies.size > this.limit) {
      const oldest = this.#copies.keys().next();
      if (!oldest.done) this.#copies.delete(oldest.value);
    }
  }

  get size(): number {
    return this.#copies.size;
  }
}
