/**
 * Server logs a person reads on a terminal: `12:04:05 INFO  rotscope listening on http://…
 * address=… database=pglite`, one line per record, instead of pino's JSON. Only the format
 * changes (the same records and fields, none dropped), and only where a person watches:
 * `logFormat: 'auto'` picks it when stdout is a terminal, JSON stays the default for pipes,
 * files and log collectors. Nothing here throws: a line that is not JSON passes through as is.
 */

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};

/** pino's own fields, shown in the line's head or not at all (`service` is always rotscope). */
const HEAD = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'service', 'v']);

/** A field's value as the reader types it: bare when it is one word, else JSON. */
function shown(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (value !== null && typeof value === 'object' && 'stack' in value) {
    const stack = (value as { stack?: unknown }).stack;
    if (typeof stack === 'string') return `\n  ${stack.split('\n').join('\n  ')}`;
  }
  return JSON.stringify(value);
}

/** One pino JSON line as a human line (with its trailing newline). */
export function prettyLine(line: string): string {
  let record: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return line;
    record = parsed as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = typeof record.time === 'number' ? new Date(record.time) : new Date();
  const clock = time.toTimeString().slice(0, 8);
  const level = LEVELS[Number(record.level)] ?? String(record.level ?? '').padEnd(5);
  const fields = Object.entries(record)
    .filter(([key]) => !HEAD.has(key))
    .map(([key, value]) => `${key}=${shown(value)}`);
  const msg = typeof record.msg === 'string' ? record.msg : '';
  return `${clock} ${level} ${msg}${fields.length > 0 ? `  ${fields.join(' ')}` : ''}\n`;
}

/** A destination for pino that writes each record as `prettyLine` to `out`. */
export function prettyStream(out: { write(text: string): unknown }): {
  write(chunk: string): void;
} {
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line !== '') out.write(prettyLine(line));
    },
  };
}

/** Whether logs are written for a person: `pretty`, or `auto` on a terminal. */
export function wantsPrettyLogs(format: 'auto' | 'json' | 'pretty', stdoutIsTty: boolean): boolean {
  return format === 'pretty' || (format === 'auto' && stdoutIsTty);
}
