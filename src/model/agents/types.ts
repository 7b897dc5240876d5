/**
 * What differs between the coding agents rotscope reads, declared once per agent (one file each
 * in this folder, listed in ./index.ts): how the agent is named, which producer ids its data
 * comes under, which of its signals arrive apart, its session files, how its compaction markers
 * are named to people, and the advice and coverage hints in its own words. The readers of its
 * telemetry and files are code (src/ingest/), the rules are the detectors'; everything the rest
 * of rotscope needs to know about an agent is read from here, so a new agent is its profile, its
 * reader, its installer and its tests.
 */
import type { CompactionEvidence } from '../calls.ts';

/** The detectors whose coverage the Coverage page reports. */
export type CoverageDetector =
  'context_too_full' | 'tool_takeover' | 'history_lost' | 'output_cut_off';

/** An agent's session files, read by `rotscope analyze` and `rotscope import`. */
export interface AgentSessionFiles {
  /** The input format's id (src/receiver/input-text.ts). */
  format: string;
  /** The format as people read it, e.g. "Gemini CLI chat file". */
  name: string;
  /** Where the agent keeps them, as the analyze usage shows it. */
  where: string;
  /** The producer id of the calls read from them. */
  producer: string;
  /**
   * How a session read from both its telemetry and its files is counted once: `request_id` when
   * a call carries an id both share (the store merges the two rows, src/store/merge.ts);
   * `session` when none is shared (a session the telemetry stored is not taken from its file:
   * src/receiver/pipeline.ts), naming the telemetry's producer.
   */
  countedOnce: { by: 'request_id' } | { by: 'session'; telemetryProducer: string };
}

/** One agent, declared. */
export interface AgentProfile {
  /** The agent's id (the Coverage page's and the findings' `agent` key). */
  id: string;
  /** How the agent is named to people. */
  name: string;
  /** Every producer id its calls are stored under (telemetry, logs, session files). */
  producers: readonly string[];
  /**
   * Its producers that send one call's evidence in two signals on separate export schedules
   * (e.g. spans, and logs carrying compactions and side calls): their conversations settle longer
   * before evaluation, so a compaction in the logs is seen before the drop it explains.
   */
  splitEvidence?: readonly string[];
  sessionFiles?: AgentSessionFiles;
  /** Its compaction markers (their evidence ids) as people read them. */
  compactionEvidence?: Partial<Record<CompactionEvidence, string>>;
  /** What to turn on in the agent so a blind detector sees its calls. */
  coverageHints: Record<CoverageDetector, string>;
  /** What the agent cannot send whatever is turned on, said beside its calls on Coverage. */
  limits?: Partial<Record<CoverageDetector, string>>;
  /** What to do about a cut-off output, in the agent's words (else the generic advice). */
  cutOffAdvice?: (toolCall: boolean) => string;
  /**
   * Said of `calls` of its calls cut at the output limit when nothing says whether the cut output
   * was a tool call (an agent that exports nothing for a cut tool call).
   */
  cutToolUnknownHint?: (calls: number) => string;
}
