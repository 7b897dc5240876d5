/** Log record event names. */
import type { LogRecord } from '../model/telemetry.ts';

/**
 * The event's full name. Claude Code sends `event.name` without its prefix (`api_request`)
 * and the prefixed name as the body; both spellings are accepted.
 */
export function eventNameOf(log: LogRecord): string {
  const n = log.eventName;
  if (n.startsWith('claude_code.') || n.startsWith('gen_ai.')) return n;
  if (typeof log.body === 'string' && log.body.startsWith('claude_code.')) return log.body;
  if (
    n !== '' &&
    (log.scope.name.includes('claude_code') || log.resource['service.name'] === 'claude-code')
  ) {
    return `claude_code.${n}`;
  }
  return n;
}
