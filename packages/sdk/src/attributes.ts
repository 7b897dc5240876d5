/**
 * The attribute names this package writes. rotscope reads them (conventions §9.8, DESIGN §5);
 * `gen_ai.*` names are OpenTelemetry GenAI semantic conventions, `rotscope.*` are this
 * package's own where the conventions have no name yet.
 */

/** Standard: on an LLM span, "this call's context was compacted" (semconv GenAI). */
export const ATTR_CONVERSATION_COMPACTED = 'gen_ai.conversation.compacted';
export const ATTR_OPERATION_NAME = 'gen_ai.operation.name';
export const ATTR_CONVERSATION_ID = 'gen_ai.conversation.id';
/** The operation name of a compaction span. */
export const OPERATION_COMPACTION = 'compaction';

export const ATTR_COMPACTION_KIND = 'rotscope.compaction.kind';
export const ATTR_COMPACTION_TRIGGER = 'rotscope.compaction.trigger';
export const ATTR_COMPACTION_TOKENS_BEFORE = 'rotscope.compaction.tokens_before';
export const ATTR_COMPACTION_TOKENS_AFTER = 'rotscope.compaction.tokens_after';
export const ATTR_COMPACTION_MESSAGES_KEPT = 'rotscope.compaction.messages_kept';
/** The summary text: only when content capture is on. */
export const ATTR_COMPACTION_SUMMARY = 'rotscope.compaction.summary';
/** The summary's size in characters (UTF-16 code units): always, when a summary is given. */
export const ATTR_COMPACTION_SUMMARY_SIZE = 'rotscope.compaction.summary_size';

/** On an LLM span: the sizes of the input's parts, a JSON object of numbers (never text). */
export const ATTR_INPUT_SIZES = 'rotscope.input.sizes';

/** A window reported apart from the calls (the Claude Agent SDK's `contextWindow`): span name. */
export const WINDOW_SPAN_NAME = 'rotscope.window';
/** On a window span: the session, as Claude Code's own spans carry it (beside `gen_ai.conversation.id`). */
export const ATTR_SESSION_ID = 'session.id';
/** On a window span: the model id the window is for. */
export const ATTR_WINDOW_MODEL = 'rotscope.window.model';
/** On a window span: the window, tokens (a positive integer). */
export const ATTR_WINDOW_TOKENS = 'rotscope.window.tokens';
/** On a window span: who reported it (`claude-agent-sdk`). */
export const ATTR_WINDOW_REPORTER = 'rotscope.window.reporter';
