/**
 * @rotscope/sdk: tell rotscope which context drops were deliberate. Register
 * `RotscopeSpanProcessor` with your tracer provider, call `markCompaction()` where your agent
 * compacts its history. See README.md.
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
  measureContext,
  recordContextSizes,
  type ChatRequest,
  type ContextSizes,
} from './context-sizes.js';
export { configure, type RotscopeSdkOptions } from './config.js';
export { RotscopeSpanProcessor, type StartingSpan } from './processor.js';
export * from './attributes.js';
