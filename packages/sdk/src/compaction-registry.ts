/**
 * The provider compactions this process has seen, by identity (Anthropic block signature,
 * OpenAI item id, response id, conversation id): whether the call they belong to is already
 * reported, or whether the next call that sends them back (or continues that state) still has
 * to be. Keyed by what the requests carry, not by async context, so parallel flows never take
 * each other's marks. Bounded: the oldest entries are forgotten first.
 */
import type { Attributes } from '@opentelemetry/api';

const MAX_ENTRIES = 4096;

/** `reported`: nothing more to do; otherwise the attributes to report on the next call. */
type Entry = 'reported' | { pending: Attributes };

const entries = new Map<string, Entry>();

function put(key: string, entry: Entry): void {
  entries.delete(key);
  entries.set(key, entry);
  if (entries.size > MAX_ENTRIES) {
    const oldest = entries.keys().next().value;
    if (oldest !== undefined) entries.delete(oldest);
  }
}

/** The compaction under `keys` is reported on the call it happened in. */
export function markReported(keys: readonly string[]): void {
  for (const k of keys) put(k, 'reported');
}

/** The next call sending back (or continuing) one of `keys` gets these attributes. */
export function markPending(keys: readonly string[], attributes: Attributes): void {
  for (const k of keys) put(k, { pending: attributes });
}

/**
 * What a request sending back `key` must report: the pending attributes, `unseen` for a
 * compaction this process never saw (reported now, once), or null when already reported.
 * Every key read is reported from then on.
 */
export function takeFor(key: string): Attributes | 'unseen' | null {
  const e = entries.get(key);
  put(key, 'reported');
  if (e === undefined) return 'unseen';
  return e === 'reported' ? null : e.pending;
}

/** Like `takeFor`, for state a request continues: only pending entries report. */
export function takePendingFor(key: string): Attributes | null {
  const e = entries.get(key);
  if (e === undefined || e === 'reported') return null;
  put(key, 'reported');
  return e.pending;
}

/** Forgets everything (tests). */
export function clearRegistry(): void {
  entries.clear();
}
