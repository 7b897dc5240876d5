/** Plain words for the run view: detectors, parts, how a compaction was seen. */
import type { StripFinding } from './types.ts';

/** A finding's name as a person reads it. */
export function findingTitle(f: Pick<StripFinding, 'detector' | 'kind'>): string {
  switch (f.detector) {
    case 'history_lost':
      return f.kind === 'compacted' ? 'Context compacted' : 'History lost';
    case 'output_cut_off':
      return 'Output cut off';
    case 'tool_takeover':
      return 'Tool takeover';
    case 'context_too_full':
      return 'Context too full';
    default:
      return f.detector;
  }
}

/** A strip part name (`system`, `messages`, `other`, `tool:<name>`) in words. */
export function partLabel(part: string): string {
  if (part.startsWith('tool:')) return `${part.slice(5)} results`;
  if (part === 'system') return 'system prompt';
  if (part === 'messages') return 'messages';
  return 'other (not measured)';
}

/** A part lost at a drop (`earlier_messages`, `system`, `tool` + name) in words. */
export function lostPartLabel(p: { part: string; name: string | null }): string {
  if (p.part === 'tool') return `${p.name ?? 'a tool'}’s results`;
  if (p.part === 'system') return 'the system prompt';
  return 'earlier messages';
}

const EVIDENCE: Record<string, string> = {
  span: 'a compaction span',
  span_event: 'a compaction event',
  flag: 'the call’s own compaction flag',
  message_part: 'a compaction part in the messages',
  finish_reason: 'a finish reason that says so',
  claude_code_event: 'Claude Code’s compaction event',
  claude_code_side_call: 'Claude Code’s compaction call',
  transcript_boundary: 'a compaction boundary in the transcript',
};

/** How a compaction was seen, in words (no internal names on the page). */
export function evidenceLabel(evidence: string): string {
  return EVIDENCE[evidence] ?? 'a compaction marker';
}
