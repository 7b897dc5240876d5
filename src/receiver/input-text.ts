/**
 * How `rotscope import` and `rotscope analyze` tell an input file's text apart and normalize it
 * (a Claude Code transcript, JSONL; a Codex session file, `rollout-*.jsonl`,
 * src/ingest/codex-sessions.ts; Copilot CLI's, Qwen Code's and Gemini CLI's session files; OTLP/JSON traces: a request, an array of them, a Tempo export,
 * JSON lines), by its first record; anything else is refused with the same message. Shared by
 * the command, which reads the files (src/cli/input-file.ts), and the server that `rotscope
 * import` sends their text to beside it (POST /api/import).
 */
import {
  normalizeSpans,
  normalizeTranscript,
  transcriptOptionsForPath,
  type NormalizeContext,
} from '../ingest/index.ts';
import type { Normalized } from '../model/calls.ts';
import { decodeTraceJsonFile } from '../otlp/decode.ts';
import {
  isCodexSessionEntry,
  isCodexSessionPath,
  normalizeCodexSession,
} from '../ingest/codex-sessions.ts';
import {
  isCopilotSessionEntry,
  isCopilotSessionPath,
  normalizeCopilotSession,
} from '../ingest/copilot-sessions.ts';

import {
  isGeminiSessionEntry,
  isGeminiSessionPath,
  normalizeGeminiSession,
} from '../ingest/gemini-sessions.ts';
import { isQwenSessionEntry, normalizeQwenSession } from '../ingest/qwen-sessions.ts';

export type InputFormat =
  | 'claude_code_transcript'
  | 'codex_session'
  | 'copilot_session'
  | 'gemini_session'
  | 'qwen_session'
  | 'otlp_json';

/** One input file, normalized. */
export interface InputFile {
  path: string;
  format: InputFormat;
  normalized: Normalized;
  /** Spans the OTLP decoder refused (0 for transcripts). */
  rejectedSpans: number;
}

export type LoadedInput =
  | { ok: true; file: InputFile }
  /** `readCode`: the file system's error code when the file could not be read. */
  | { ok: false; error: string; readCode?: string };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

type Format = InputFormat | 'otlp_logs';

/** The format of one sample record: a trace request, a transcript line, or neither. */
function formatOfRecord(v: unknown): Format | null {
  if (!isObject(v)) return null;
  if ('resourceSpans' in v || 'resource_spans' in v || 'batches' in v) return 'otlp_json';
  if ('resourceLogs' in v || 'resource_logs' in v) return 'otlp_logs';
  if (isCodexSessionEntry(v)) return 'codex_session';
  if (isCopilotSessionEntry(v)) return 'copilot_session';
  if (isQwenSessionEntry(v)) return 'qwen_session';
  if (isGeminiSessionEntry(v)) return 'gemini_session';
  return typeof v.type === 'string' ? 'claude_code_transcript' : null;
}

/**
 * Tells OTLP/JSON from a Claude Code transcript by the first record that parses; null when it
 * is neither. Empty files are transcripts without calls.
 */
export function inputFormatOf(text: string): Format | null {
  if (text.trim() === '') return 'claude_code_transcript';
  try {
    const whole = JSON.parse(text) as unknown;
    if (Array.isArray(whole)) return whole.length === 0 ? 'otlp_json' : formatOfRecord(whole[0]);
    return formatOfRecord(whole);
  } catch {
    // not one JSON document: JSON lines; judge by the first line that parses
  }
  let start = 0;
  for (let n = 0; n < 50 && start < text.length; n++) {
    const end = text.indexOf('\n', start);
    const line = text.slice(start, end < 0 ? text.length : end).trim();
    start = end < 0 ? text.length : end + 1;
    if (line === '') continue;
    try {
      return formatOfRecord(JSON.parse(line));
    } catch {
      continue;
    }
  }
  return null;
}

/**
 * Normalizes the text of one input file, told apart by its first record (and by its name: a
 * Codex `rollout-*.jsonl`, a sub-agent transcript under `subagents/`), or says why it cannot.
 * `path` is only named, never read: a server normalizes the files `rotscope import` sends it
 * (POST /api/import) as the command would.
 */
export function readInputText(
  path: string,
  text: string,
  ctx: NormalizeContext,
  command: 'analyze' | 'import',
): LoadedInput {
  // an empty `rollout-*.jsonl` is a Codex session file without calls
  const format =
    isCodexSessionPath(path) && text.trim() === ''
      ? 'codex_session'
      : isCopilotSessionPath(path) && text.trim() === ''
        ? 'copilot_session'
        : isGeminiSessionPath(path) && text.trim() === ''
          ? 'gemini_session'
          : inputFormatOf(text);
  if (format === null) {
    return {
      ok: false,
      error: `${path}: neither OTLP/JSON traces, a Claude Code transcript nor an agent's session file (Codex, Copilot CLI, Gemini CLI, Qwen Code)`,
    };
  }
  if (format === 'codex_session') {
    const normalized = normalizeCodexSession(text, ctx, path);
    return { ok: true, file: { path, format, normalized, rejectedSpans: 0 } };
  }
  if (format === 'copilot_session') {
    const normalized = normalizeCopilotSession(text, ctx, path);
    return { ok: true, file: { path, format, normalized, rejectedSpans: 0 } };
  }
  if (format === 'gemini_session') {
    const normalized = normalizeGeminiSession(text, ctx);
    return { ok: true, file: { path, format, normalized, rejectedSpans: 0 } };
  }
  if (format === 'qwen_session') {
    const normalized = normalizeQwenSession(text, ctx);
    return { ok: true, file: { path, format, normalized, rejectedSpans: 0 } };
  }
  if (format === 'otlp_logs') {
    return {
      ok: false,
      error: `${path}: OTLP logs are not supported by ${command}; pass trace files`,
    };
  }
  if (format === 'otlp_json') {
    const decoded = decodeTraceJsonFile(text);
    if (!decoded.ok)
      return { ok: false, error: `${path}: not OTLP/JSON traces: ${decoded.reason}` };
    const { normalized } = normalizeSpans(decoded.value.items, ctx);
    return {
      ok: true,
      file: { path, format, normalized, rejectedSpans: decoded.value.rejected.length },
    };
  }
  const normalized = normalizeTranscript(text, ctx, transcriptOptionsForPath(path));
  return { ok: true, file: { path, format, normalized, rejectedSpans: 0 } };
}
