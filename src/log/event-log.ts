/**
 * Log lines for events of note (data received, a request refused, a finding created, a
 * delivery's outcome), rate-limited: at most one line per kind of event and key (usually the
 * workspace) per interval. Events in between are not logged but counted, and the next line of
 * that kind and key reports them as `suppressed`. Callers never pass secrets (tokens, webhook
 * URLs, passwords): fields are counts, ids, names and reasons.
 */

/** The logging an event log writes to (pino and fastify loggers fit). */
export interface EventLogSink {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface EventLogOptions {
  /** Least time between two lines of one kind and key (ms). 0 logs every event. */
  intervalMs: number;
  /** Clock (ms). Default Date.now. */
  now?: () => number;
  /** Most kind/key pairs remembered; the oldest is forgotten beyond it. Default 10000. */
  maxKeys?: number;
}

export interface EventLog {
  /**
   * Logs `message` with `fields` plus `event: kind` and `workspace: key`, unless a line of the
   * same kind and key was logged less than the interval ago (then the event is counted).
   * Returns whether a line was written.
   */
  event(
    level: 'info' | 'warn',
    kind: string,
    key: string,
    fields: Record<string, unknown>,
    message: string,
  ): boolean;
}

/** Creates a rate-limited event log over `sink`. */
export function createEventLog(sink: EventLogSink, options: EventLogOptions): EventLog {
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? 10_000;
  const last = new Map<string, { at: number; suppressed: number }>();
  return {
    event(level, kind, key, fields, message) {
      const id = `${kind}\u0000${key}`;
      const at = now();
      const seen = last.get(id);
      if (seen && at - seen.at < options.intervalMs) {
        seen.suppressed += 1;
        return false;
      }
      last.delete(id);
      if (last.size >= maxKeys) last.delete(last.keys().next().value!);
      last.set(id, { at, suppressed: 0 });
      const suppressed = seen?.suppressed ?? 0;
      sink[level](
        { event: kind, workspace: key, ...fields, ...(suppressed > 0 ? { suppressed } : {}) },
        message,
      );
      return true;
    },
  };
}
