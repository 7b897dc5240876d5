/**
 * What the hook (./hook.ts) reads of a Claude Code transcript without reading all of it: its
 * size, when the session began (the head) and the last compaction written in it (the tail: its
 * boundary and summary). The context size of the last call is the status line's
 * (`lastUsage`, ./statusline.ts).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { obj, str } from './statusline.ts';

type Obj = Record<string, unknown>;

/** How much of the transcript's head and tail is read for the session's start and the boundary. */
const HEAD_BYTES = 64 * 1024;
const TAIL_BYTES = 2 * 1024 * 1024;

const int = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) ? Math.round(v) : null;

/** Bytes [start, start+length) of a file, as complete lines (the cut first or last line dropped). */
function readLines(
  file: string,
  from: 'head' | 'tail',
  length: number,
): { lines: string[]; size: number } {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const start = from === 'head' ? 0 : Math.max(0, size - length);
    const buffer = Buffer.alloc(Math.min(length, size - start));
    readSync(fd, buffer, 0, buffer.length, start);
    const lines = buffer.toString('utf8').split('\n');
    if (from === 'head' && start + buffer.length < size) lines.pop();
    if (from === 'tail' && start > 0) lines.shift();
    return { lines, size };
  } finally {
    closeSync(fd);
  }
}

function parse(line: string): Obj | undefined {
  try {
    return obj(JSON.parse(line));
  } catch {
    return undefined;
  }
}

/** The transcript's size in bytes. */
export function transcriptSize(transcript: string): number {
  return readLines(transcript, 'head', 0).size;
}

/** When the session began: the first timestamp in the transcript's head. */
export function sessionStart(transcript: string): Date | null {
  for (const line of readLines(transcript, 'head', HEAD_BYTES).lines) {
    const ts = str(parse(line)?.timestamp);
    if (ts !== undefined && !Number.isNaN(Date.parse(ts))) return new Date(ts);
  }
  return null;
}

/** The last compaction written in the transcript's tail: its boundary and summary. */
export interface Boundary {
  uuid: string | null;
  trigger: string | null;
  preTokens: number | null;
  postTokens: number | null;
  summary: string | null;
}

export function lastBoundary(transcript: string): Boundary | null {
  const { lines } = readLines(transcript, 'tail', TAIL_BYTES);
  let found: Boundary | null = null;
  for (const line of lines) {
    if (line.includes('"compact_boundary"')) {
      const entry = parse(line);
      if (entry?.subtype !== 'compact_boundary' || entry.isSidechain === true) continue;
      const meta = obj(entry.compactMetadata);
      found = {
        uuid: str(entry.uuid) ?? null,
        trigger: str(meta?.trigger) ?? null,
        preTokens: int(meta?.preTokens),
        postTokens: int(meta?.postTokens),
        summary: null,
      };
    } else if (found && found.summary === null && line.includes('"isCompactSummary"')) {
      const content = obj(parse(line)?.message)?.content;
      found.summary =
        typeof content === 'string'
          ? content
          : Array.isArray(content)
            ? content.map((part) => str(obj(part)?.text) ?? '').join('')
            : null;
    }
  }
  return found;
}
