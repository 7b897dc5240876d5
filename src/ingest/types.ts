/** Inputs shared by every normalizer. */
import type { WindowOverride } from './windows.ts';

export type { WindowOverride } from './windows.ts';

/** What a normalizer needs to know about the workspace. */
export interface NormalizeContext {
  workspaceId: string;
  /** Keep message content on stored spans and logs (sizes are always kept). */
  captureContent: boolean;
  windowOverrides: readonly WindowOverride[];
}
