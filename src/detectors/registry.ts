/** The four context-rot detectors of DESIGN §6, in DETECTOR_IDS order, and what each needs. */
import type { DetectorId } from '../model/findings.ts';
import { contextTooFull } from './context-too-full.ts';
import { historyLost } from './history-lost.ts';
import { outputCutOff } from './output-cut-off.ts';
import { toolTakeover } from './tool-takeover.ts';
import type { Detector } from './types.ts';

/** The four detectors, in DETECTOR_IDS order. */
export const DETECTORS: readonly Detector<unknown>[] = Object.freeze([
  contextTooFull as Detector<unknown>,
  toolTakeover as Detector<unknown>,
  historyLost as Detector<unknown>,
  outputCutOff as Detector<unknown>,
]);

/** What a detector needs of each call, and what to send when its calls lack it (the Coverage page). */
export interface DetectorNeeds {
  /** What the calls must carry, in a few words. */
  needs: string;
  /**
   * What to send so the detector sees the calls it misses (the "quiet or blind?" answer), for a
   * producer without its own knob (src/model/producer-advice.ts has the coding agents' words).
   */
  hint: string;
}

/** What each detector needs, by id. */
export const DETECTOR_NEEDS: Readonly<Record<DetectorId, DetectorNeeds>> = Object.freeze({
  context_too_full: {
    needs: 'token counts and a known context window',
    hint: 'send gen_ai.usage.input_tokens (and the cache read/write token counts) on every chat span, with gen_ai.request.model; for a model rotscope does not know, add a window override on the alert page',
  },
  tool_takeover: {
    needs: 'sizes of tool results in the input (message content or tool spans)',
    hint: 'turn on content capture (gen_ai.input.messages) or use @rotscope/sdk recordContextSizes, so the size of each tool result in the input is known without its text',
  },
  history_lost: {
    needs:
      'token counts on consecutive calls; compaction markers tell compacted from lost (see compactions)',
    hint: 'send gen_ai.usage.input_tokens and gen_ai.conversation.id on every chat span; mark compactions (@rotscope/sdk markCompaction, or rotscope claude-code install) so a compaction is not reported as lost history',
  },
  output_cut_off: {
    needs: 'finish reasons',
    hint: 'send gen_ai.response.finish_reasons on every chat span',
  },
});
