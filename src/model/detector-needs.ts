/**
 * What each detector of DESIGN §6 needs of a call, written once as data: the Coverage page's
 * words (`needsText`, src/detectors/registry.ts DETECTOR_NEEDS) and the SQL filter that counts
 * the calls carrying it (src/store/coverage.ts) are both derived from it.
 */
import type { DetectorId } from './findings.ts';

/** A field of a call a detector needs known (not null). */
export type NeededField = 'contextTokens' | 'contextWindow' | 'finishReasonRaw';

/**
 * What tells the sizes of the tool results a call's input holds. A call can carry that without
 * naming a tool: the first call of a session has no tool results yet, and a Claude Code call's
 * parts hold only the results logged since its stream's previous call (the detector holds
 * earlier ones).
 */
export type ToolSizesEvidence =
  /** Its input parts name a tool (their results' size is known). */
  | 'partsNameATool'
  /** Its parts come from message content: an empty tool list is then a fact. */
  | 'partsFromMessages'
  /** Another call of its conversation has parts that name a tool: the producer sends the sizes. */
  | 'conversationSizesTools'
  /** It came from a producer that logs every tool result (given by the reader, which knows them). */
  | 'producerLogsToolSizes';

/** One thing a call must carry, and how the Coverage page says it. */
export type CallNeed =
  | { field: NeededField; notNull: true; words: string }
  | { anyOf: readonly ToolSizesEvidence[]; words: string };

export interface DetectorCallNeeds {
  /** What a call must carry: all of them. */
  needs: readonly CallNeed[];
  /** Said after the needs (what else the detector reads, not counted). */
  note?: string;
  /**
   * What to send so the detector sees the calls it misses (the "quiet or blind?" answer), for a
   * producer without its own knob (src/model/producer-advice.ts has the coding agents' words).
   */
  hint: string;
}

/** What each detector needs, by id, in DETECTOR_IDS order. */
export const DETECTOR_CALL_NEEDS: Readonly<Record<DetectorId, DetectorCallNeeds>> = Object.freeze({
  context_too_full: {
    needs: [
      { field: 'contextTokens', notNull: true, words: 'token counts' },
      { field: 'contextWindow', notNull: true, words: 'a known context window' },
    ],
    hint: 'send gen_ai.usage.input_tokens (and the cache read/write token counts) on every chat span, with gen_ai.request.model; for a model rotscope does not know, add a window override on the alert page',
  },
  tool_takeover: {
    needs: [
      {
        anyOf: [
          'partsNameATool',
          'partsFromMessages',
          'conversationSizesTools',
          'producerLogsToolSizes',
        ],
        words: 'sizes of tool results in the input (message content or tool spans)',
      },
    ],
    hint: 'turn on content capture (gen_ai.input.messages) or use @rotscope/sdk recordContextSizes, so the size of each tool result in the input is known without its text',
  },
  history_lost: {
    needs: [{ field: 'contextTokens', notNull: true, words: 'token counts on consecutive calls' }],
    note: 'compaction markers tell compacted from lost (see compactions)',
    hint: 'send gen_ai.usage.input_tokens and gen_ai.conversation.id on every chat span; mark compactions (@rotscope/sdk markCompaction, or rotscope claude-code install) so a compaction is not reported as lost history',
  },
  output_cut_off: {
    needs: [{ field: 'finishReasonRaw', notNull: true, words: 'finish reasons' }],
    hint: 'send gen_ai.response.finish_reasons on every chat span',
  },
});

/** A detector's needs in a few words: the needs joined by "and", then the note. */
export function needsText(needs: DetectorCallNeeds): string {
  const words = needs.needs.map((need) => need.words).join(' and ');
  return needs.note === undefined ? words : `${words}; ${needs.note}`;
}
