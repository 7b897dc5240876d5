/**
 * What differs between the coding agents rotscope reads, declared once per agent (one file each
 * in this folder, listed in ./index.ts): how the agent is named, which producer ids its data
 * comes under, which of its signals arrive apart, its session files, how its compaction markers
 * are named to people, and the advice and coverage hints in its own words. The readers of its
 * telemetry and files are code (src/ingest/), the rules are the detectors'; everything the rest
 * of rotscope needs to know about an agent is read from here, so a new agent is its profile, its
 * reader, its installer and its tests.
 */
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
   * The module of src/ingest/ that reads them (its name without `.ts`): it exports them as
   * `sessionFileReader` (src/ingest/types.ts `SessionFileReader`), loaded by src/ingest/session-files.ts.
   */
  reader: string;
  /**
   * How a session read from both its telemetry and its files is counted once: `request_id` when
   * a call carries an id both share (the receiver merges the two rows, src/receiver/merge-rules.ts);
   * `session` when none is shared (a session the telemetry stored is not taken from its file:
   * src/receiver/pipeline.ts), naming the telemetry's producer.
   */
  countedOnce: { by: 'request_id' } | { by: 'session'; telemetryProducer: string };
}

/**
 * How the agent's own telemetry is told apart from every other producer's: a span (or, for the
 * resource-only fields, a log record) is the agent's when any one field matches. ./index.ts
 * `agentOfSpan` tries the profiles in their order, before the library producers' rules
 * (src/ingest/spans.ts `producerOf`).
 */
export interface AgentRecognition {
  /** The producer id of the calls read from its telemetry. */
  producer: string;
  /** Its resource's `service.name`, exactly. */
  serviceNames?: readonly string[];
  /** What its resource's `service.name` starts with (Codex: `codex_exec`, `codex_cli_rs`, ...). */
  serviceNamePrefixes?: readonly string[];
  /** Its instrumentation scope's name, exactly. */
  scopeNames?: readonly string[];
  /** What its span names start with. */
  spanNamePrefixes?: readonly string[];
}

/**
 * Where the agent's telemetry says what the readers need, where that is a plain attribute key or
 * event name (how a value is parsed stays in the agent's reader, src/ingest/).
 */
export interface AgentTelemetry {
  /** Attributes that hold the conversation id, tried before the generic ones (conventions §9.2). */
  conversationKeys?: readonly string[];
  /**
   * Each call of the agent makes its own trace (or each prompt does): the run is the session, not
   * the trace.
   */
  runIsSession?: boolean;
  /** Its own window, as it reports it (src/ingest/agent-windows.ts). */
  window?: {
    /** On the call's span: a JSON-string attribute and the field of it that holds the window. */
    onCall?: { attribute: string; field: string };
    /** On an ancestor span of the calls of a run: the last event of this name, its attribute. */
    onRunEvent?: { event: string; attribute: string };
  };
  /**
   * Its log events (read by the agent's log reader): the request, the response (tokens, finish
   * reasons, side calls), errors, tool calls (name and size), and the compaction events (kind:
   * `summarize` or `clear_tool_results`).
   */
  logEvents?: {
    apiRequest: string;
    apiResponse: string;
    apiError: string;
    toolCall: string;
    compactions: Readonly<Record<string, 'summarize' | 'clear_tool_results'>>;
  };
  /** The attributes of its tool-call log event: the tool's name, the call's id, the result's size. */
  toolCallKeys?: { name: string; callId?: string; size: string };
  /** The attributes of its compaction log events: the tokens before and after. */
  compactionKeys?: { tokensBefore: string; tokensAfter: string };
  /** Span events that are not a compaction of its own though their names say compaction. */
  compactionEvents?: {
    /** The compaction starting (its end is counted). */
    start: string;
    /** The compaction done: a failed one has `successAttribute` false. */
    complete: string;
    successAttribute: string;
  };
  /** Texts that open a side call's prompt (the reader says where it looks), by what they mark. */
  sideCallMarkers?: Readonly<Record<string, string>>;
}

/** An agent's install command, as src/entry.ts finds and lists it. */
export interface AgentInstallerEntry {
  /** The command: `rotscope <command> install`. */
  command: string;
  /** The module of src/cli/ that exports the installer. */
  module: string;
  /** Its entry in `rotscope --help`. */
  usage: string;
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
  /**
   * Its installer, `rotscope <command> install`: the module of src/cli/ (its name without `.ts`)
   * that exports it as `installer` (src/cli/install-shared.ts `AgentInstaller`), loaded only when
   * the command runs (src/entry.ts), and its entry in `rotscope --help`.
   */
  installer?: AgentInstallerEntry;
  /** How its telemetry is recognized. */
  recognize: AgentRecognition;
  /** Where its telemetry carries what the readers need. */
  telemetry?: AgentTelemetry;
  sessionFiles?: AgentSessionFiles;
  /**
   * Its compaction markers as people read them, by evidence id: these ids are the agent's part of
   * `CompactionEvidence` (../calls.ts), the evidence its readers give its compactions.
   */
  compactionEvidence?: Readonly<Record<string, string>>;
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
