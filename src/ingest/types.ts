/** Inputs shared by every normalizer. */
import type { Normalized } from '../model/calls.ts';
import type { WindowOverride } from '../model/window-overrides.ts';

/** What a normalizer needs to know about the workspace. */
export interface NormalizeContext {
  workspaceId: string;
  /** Keep message content on stored spans and logs (sizes are always kept). */
  captureContent: boolean;
  windowOverrides: readonly WindowOverride[];
}

/**
 * The reader of one agent's session files: the `sessionFileReader` its module exports (the module
 * its profile names, `sessionFiles.reader`; ./session-files.ts loads it).
 */
export interface SessionFileReader {
  /** True when a parsed record (the file's first that parses) is one of the agent's. */
  isEntry(record: Record<string, unknown>): boolean;
  /** True for the agent's file name (an empty file of that name is the agent's, without calls). */
  isPath?(path: string): boolean;
  normalize(text: string, ctx: NormalizeContext, path: string): Normalized;
}
