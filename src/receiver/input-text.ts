/**
 * How `rotscope import` and `rotscope analyze` tell an input file's text apart and normalize it
 * (a Claude Code transcript, JSONL; a Codex session file, `rollout-*.jsonl`,
 * src/ingest/codex-sessions.ts; Copilot CLI's, Qwen Code's and Gemini CLI's session files; OTLP/JSON traces: a request, an array of them, a Tempo export,
 * JSON lines), by its first record; anything else is refused with the same message. Shared by
 * the command, which reads the files (src/cli/input-file.ts), and the server that `rotscope
 * import` sends their text to beside it (POST /api/import).
 */
import { normalizeSpans, type NormalizeContext } from '../ingest/index.ts';
import { FALLBACK_FORMAT, SESSION_FILE_READERS } from '../ingest/session-files.ts';
import type { Normalized } from '../model/calls.ts';
import { AGENT_PROFILES, SESSION_FILES } from '../model/agents/index.ts';
import { decodeTraceJsonFile } from '../otlp/decode.ts';

/** An agent's session-file format (its profile's `sessionFiles.format`, src/model/agents/). */
export type SessionFormat = Extract<
  (typeof AGENT_PROFILES)[number],
  { sessionFiles: object }
>['sessionFiles']['format'];

export type InputFormat = SessionFormat | 'otlp_json';

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

/** The session-file formats in the profiles' order, the transcript (any line with a `type`) last. */
const SESSION_FORMATS = [
  ...SESSION_FILES.map((f) => f.format as SessionFormat).filter((f) => f !== FALLBACK_FORMAT),
  FALLBACK_FORMAT,
] as const satisfies readonly SessionFormat[];

/** "Codex, Gemini CLI, ...": the agents whose session files are read, for the refusal. */
const FILE_AGENTS = AGENT_PROFILES.filter((p) => 'sessionFiles' in p && p.id !== 'claude_code')
  .map((p) => p.name)
  .join(', ');

/** The format of one sample record: a trace request, an agent's session record, or neither. */
function formatOfRecord(v: unknown): Format | null {
  if (!isObject(v)) return null;
  if ('resourceSpans' in v || 'resource_spans' in v || 'batches' in v) return 'otlp_json';
  if ('resourceLogs' in v || 'resource_logs' in v) return 'otlp_logs';
  return SESSION_FORMATS.find((f) => SESSION_FILE_READERS[f]?.isEntry(v)) ?? null;
}

/**
 * Tells OTLP/JSON from a Claude Code transcript by the first record that parses; null when it
 * is neither. Empty files are transcripts without calls.
 */
export function inputFormatOf(text: string): Format | null {
  if (text.trim() === '') return FALLBACK_FORMAT;
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
  // an empty `rollout-*.jsonl` is a Codex session file without calls (and so on for each
  // agent's file names)
  const format =
    text.trim() === ''
      ? (SESSION_FORMATS.find((f) => SESSION_FILE_READERS[f]?.isPath?.(path)) ??
        inputFormatOf(text))
      : inputFormatOf(text);
  if (format === null) {
    return {
      ok: false,
      error: `${path}: neither OTLP/JSON traces, a Claude Code transcript nor an agent's session file (${FILE_AGENTS})`,
    };
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
  const reader = SESSION_FILE_READERS[format];
  if (reader === undefined) return { ok: false, error: `${path}: no reader for ${format}` };
  const normalized = reader.normalize(text, ctx, path);
  return { ok: true, file: { path, format, normalized, rejectedSpans: 0 } };
}
