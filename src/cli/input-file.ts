/**
 * The input files of `rotscope analyze` and `rotscope import`, read the same way by both: a
 * Claude Code transcript (JSONL), a Codex session file (`rollout-*.jsonl`, src/ingest/codex-sessions.ts)
 * or OTLP/JSON traces (a request, an array of them, a Tempo
 * export, JSON lines), told apart by the first record; anything else is refused with the same
 * message. A session's sub-agent transcripts (`<session>/subagents/agent-*.jsonl`, beside the
 * session's `<session>.jsonl`) are read with it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
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

export type InputFormat = 'claude_code_transcript' | 'codex_session' | 'otlp_json';

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

const READ_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'is a directory',
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

type Format = InputFormat | 'otlp_logs';

/** The format of one sample record: a trace request, a transcript line, or neither. */
function formatOfRecord(v: unknown): Format | null {
  if (!isObject(v)) return null;
  if ('resourceSpans' in v || 'resource_spans' in v || 'batches' in v) return 'otlp_json';
  if ('resourceLogs' in v || 'resource_logs' in v) return 'otlp_logs';
  if (isCodexSessionEntry(v)) return 'codex_session';
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

/** Reads and normalizes one input file for `command`, or says why it cannot. */
export async function loadInputFile(
  path: string,
  ctx: NormalizeContext,
  command: 'analyze' | 'import',
): Promise<LoadedInput> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    const why = (e.code && READ_ERRORS[e.code]) ?? e.message;
    return { ok: false, error: `cannot read ${path}: ${why}`, readCode: e.code ?? String(error) };
  }
  // an empty `rollout-*.jsonl` is a Codex session file without calls
  const format =
    isCodexSessionPath(path) && text.trim() === '' ? 'codex_session' : inputFormatOf(text);
  if (format === null) {
    return {
      ok: false,
      error: `${path}: neither OTLP/JSON traces, a Claude Code transcript nor a Codex session file`,
    };
  }
  if (format === 'codex_session') {
    const normalized = normalizeCodexSession(text, ctx, path);
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

/** The `rollout-*.jsonl` files under a folder, recursively and sorted; null when `path` is not a folder. */
async function codexSessionFilesUnder(path: string): Promise<string[] | null> {
  let entries;
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch {
    return null; // not a folder (or unreadable: loading it says why)
  }
  const out: string[] = [];
  for (const e of entries) {
    const p = join(path, e.name);
    if (e.isDirectory()) out.push(...((await codexSessionFilesUnder(p)) ?? []));
    else if (isCodexSessionPath(p)) out.push(p);
  }
  return out.sort();
}

/**
 * The given paths plus, after each `<session>.jsonl`, its sub-agent transcripts
 * (`<session>/subagents/agent-*.jsonl`, sorted); a folder is replaced by the Codex session
 * files under it; each path once, in order.
 */
export async function withSubagentFiles(paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (p: string) => {
    if (!seen.has(p)) {
      seen.add(p);
      out.push(p);
    }
  };
  for (const p of paths) {
    // a folder (e.g. `$CODEX_HOME/sessions`) stands for the Codex session files under it (one
    // without any is read as the path, and refused as a folder)
    const sessions = await codexSessionFilesUnder(p);
    if (sessions !== null && sessions.length > 0) {
      sessions.forEach(add);
      continue;
    }
    add(p);
    if (!p.endsWith('.jsonl') || basename(dirname(p)) === 'subagents') continue;
    const dir = join(dirname(p), basename(p, '.jsonl'), 'subagents');
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue; // no sub-agents
    }
    for (const n of names.filter((n) => /^agent-.+\.jsonl$/.test(n)).sort()) add(join(dir, n));
  }
  return out;
}
