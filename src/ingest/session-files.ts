/**
 * The readers of the agents' session files, by input format (each agent's profile,
 * src/model/agents/, declares its files: format, name, where, producer): how a file's record is
 * told for the agent's, how its name is, and how its text becomes calls. src/receiver/input-text.ts
 * tries them in the profiles' order; a Claude Code transcript is the fallback, as any JSON line
 * with a `type` may be one.
 */
import type { Normalized } from '../model/calls.ts';
import {
  isCodexSessionEntry,
  isCodexSessionPath,
  normalizeCodexSession,
} from './codex-sessions.ts';
import {
  isCopilotSessionEntry,
  isCopilotSessionPath,
  normalizeCopilotSession,
} from './copilot-sessions.ts';
import {
  isGeminiSessionEntry,
  isGeminiSessionPath,
  normalizeGeminiSession,
} from './gemini-sessions.ts';
import { isQwenSessionEntry, normalizeQwenSession } from './qwen-sessions.ts';
import { normalizeTranscript, transcriptOptionsForPath } from './transcript.ts';
import type { NormalizeContext } from './types.ts';

export interface SessionFileReader {
  /** True when a parsed record (the file's first that parses) is one of the agent's. */
  isEntry(record: Record<string, unknown>): boolean;
  /** True for the agent's file name (an empty file of that name is the agent's, without calls). */
  isPath?(path: string): boolean;
  normalize(text: string, ctx: NormalizeContext, path: string): Normalized;
}

export const SESSION_FILE_READERS: Readonly<Record<string, SessionFileReader>> = {
  claude_code_transcript: {
    isEntry: (v) => typeof v['type'] === 'string',
    normalize: (text, ctx, path) => normalizeTranscript(text, ctx, transcriptOptionsForPath(path)),
  },
  codex_session: {
    isEntry: isCodexSessionEntry,
    isPath: isCodexSessionPath,
    normalize: normalizeCodexSession,
  },
  copilot_session: {
    isEntry: isCopilotSessionEntry,
    isPath: isCopilotSessionPath,
    normalize: normalizeCopilotSession,
  },
  gemini_session: {
    isEntry: isGeminiSessionEntry,
    isPath: isGeminiSessionPath,
    normalize: (text, ctx) => normalizeGeminiSession(text, ctx),
  },
  qwen_session: {
    isEntry: isQwenSessionEntry,
    normalize: (text, ctx) => normalizeQwenSession(text, ctx),
  },
};

/** The format that is any JSON line with a `type`, tried last. */
export const FALLBACK_FORMAT = 'claude_code_transcript' as const;
