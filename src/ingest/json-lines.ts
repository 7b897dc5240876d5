/** JSON-lines files (Claude Code transcripts, Codex session files): one JSON object a line. */
import { isObj } from './attrs.ts';

/**
 * The JSON objects of `text`, one a line, in order. Blank lines, lines that do not start with
 * `{` and lines that do not parse are skipped: a torn last line or a stray note costs nothing else.
 */
export function* jsonObjectLines(text: string): Generator<Record<string, unknown>> {
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const raw = text.slice(start, end).trim();
    start = end + 1;
    if (raw === '' || raw.charCodeAt(0) !== 123) continue;
    let line: unknown;
    try {
      line = JSON.parse(raw);
    } catch {
      continue;
    }
    if (isObj(line)) yield line;
  }
}
