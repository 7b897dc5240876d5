/** Inputs shared by every normalizer. */
import type { WindowOverride } from '../model/window-overrides.ts';

/** What a normalizer needs to know about the workspace. */
export interface NormalizeContext {
  workspaceId: string;
  /** Keep message content on stored spans and logs (sizes are always kept). */
  captureContent: boolean;
  windowOverrides: readonly WindowOverride[];
}
