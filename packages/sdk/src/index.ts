/**
 * @rotscope/sdk: tell rotscope which context drops were deliberate. Register
 * `RotscopeSpanProcessor` with your tracer provider, register your provider clients once with
 * `instrumentAnthropic` / `instrumentOpenAI` (the provider's own compactions and clears are
 * reported), and call `markCompaction()` where your own code compacts its history. Apps on the
 * Claude Agent SDK report its windows with `observeAgentMessages(query(...))`. See README.md.
 */
export {
  COMPACTION_KINDS,
  COMPACTION_TRIGGERS,
  markCompaction,
  type CompactionKind,
  type CompactionMark,
  type CompactionTrigger,
} from './compaction.js';
export {
  AGENT_SDK_REPORTER,
  observeAgentMessages,
  reportAgentResult,
  type AgentResultMessage,
} from './agent-sdk.js';
export {
  measureContext,
  recordContextSizes,
  type ChatRequest,
  type ContextSizes,
} from './context-sizes.js';
export { configure, type RotscopeSdkOptions } from './config.js';
export { RotscopeSpanProcessor, type StartingSpan } from './processor.js';
export {
  instrumentAnthropic,
  instrumentOpenAI,
  rotscopeAnthropicMiddleware,
  rotscopeFetch,
  type AnthropicMiddlewareRequest,
} from './clients.js';
export {
  ATTR_COMPACTION_EDIT,
  ATTR_COMPACTION_ITEMS_CLEARED,
  ATTR_COMPACTION_SOURCE,
  ATTR_COMPACTION_TOKENS_CLEARED,
  EVENT_COMPACTION,
} from './provider-reports.js';
export * from './attributes.js';
