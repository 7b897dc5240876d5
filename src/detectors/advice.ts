/**
 * How findings read: every summary says what happened in plain words, what is known of the
 * cause, and ends with one line of what to do (`… What to do: …`). No internal names (evidence
 * kinds, detector ids, window sources) and no ids in the prose: ids stay in the finding's
 * structured fields. Channels put the advice on a line of its own (src/notifier).
 */
import type { CompactionEvidence } from '../model/calls.ts';
import { AGENT_PROFILES } from '../model/agents/index.ts';

/** What separates what happened from the advice in a summary. */
export const ADVICE_MARK = ' What to do: ';

/** A summary: the sentence(s) of what happened, then the advice. */
export function summaryWithAdvice(happened: string, advice: string): string {
  const sentence = /[.!?]$/.test(happened) ? happened : `${happened}.`;
  return `${sentence}${ADVICE_MARK}${advice}${/[.!?]$/.test(advice) ? '' : '.'}`;
}

/**
 * Where a compaction marker came from, in words (never the evidence's internal name): the generic
 * markers here, each agent's own in its profile (src/model/agents/).
 */
const EVIDENCE_WORDS: Partial<Record<CompactionEvidence, string>> = {
  span: 'a compaction span',
  span_event: 'a compaction event on the call’s span',
  flag: 'the call’s compacted flag',
  message_part: 'a compaction part in the messages',
  finish_reason: 'a compaction finish reason',
  ...Object.assign(
    {},
    ...AGENT_PROFILES.map((p): Partial<Record<CompactionEvidence, string>> =>
      'compactionEvidence' in p ? p.compactionEvidence : {},
    ),
  ),
};

/** The evidence of a compaction marker as people read it. */
export function evidenceWords(evidence: CompactionEvidence | null): string {
  return evidence === null
    ? 'a compaction marker'
    : (EVIDENCE_WORDS[evidence] ?? 'a compaction marker');
}

/** Where a call ran, for summaries, without its id: "the main thread" or "a sub-agent". */
export function threadWords(agentId: string | null): string {
  return agentId === null ? 'the main thread' : 'a sub-agent';
}

/** Tools that read files, run commands, search or fetch, by the names producers give them. */
const TOOL_KINDS: Array<[RegExp, string]> = [
  [
    /^(read|read_?file|file_?read|view|cat|open_?file|get_?file|notebook_?read)$/i,
    'read files in ranges (an offset and a limit, or the lines you need) instead of whole files',
  ],
  [
    /^(bash|shell|sh|exec|run|run_?command|execute|terminal|run_?tests?|powershell)$/i,
    'cut the command’s output before it reaches the model (head, tail, grep, a quieter flag)',
  ],
  [
    /^(grep|glob|search|find|ripgrep|rg|ls|list_?dir|list_?files)$/i,
    'narrow the search (a path, a tighter pattern, a result limit)',
  ],
  [
    /^(web_?fetch|fetch|http|browse|web_?search|curl)$/i,
    'fetch less: extract the part of the page you need before returning it',
  ],
];

/** One line of what to do about a tool whose results fill the context. */
export function toolAdvice(tool: string): string {
  const known = TOOL_KINDS.find(([pattern]) => pattern.test(tool));
  return known
    ? `${known[1]}, or clear old ${tool} results from the history`
    : `have ${tool} return less (a summary, a range, a limit), or clear its old results from the history`;
}
