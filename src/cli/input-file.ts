/**
 * The input files of `rotscope analyze` and `rotscope import`, read the same way by both: the
 * text of each is told apart and normalized by src/receiver/input-text.ts (which a server
 * that `rotscope import` sends them to uses too). A session's sub-agent transcripts
 * (`<session>/subagents/agent-*.jsonl`, beside the session's `<session>.jsonl`) are read with
 * it; a folder stands for the session files under it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { NormalizeContext } from '../ingest/index.ts';
import { isCodexSessionPath } from '../ingest/codex-sessions.ts';
import { isCopilotSessionPath } from '../ingest/copilot-sessions.ts';
import { isGeminiSessionPath } from '../ingest/gemini-sessions.ts';
import { readInputText, type LoadedInput } from '../receiver/input-text.ts';

export {
  inputFormatOf,
  readInputText,
  type InputFile,
  type InputFormat,
  type LoadedInput,
} from '../receiver/input-text.ts';

const READ_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'is a directory',
};

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
  return readInputText(path, text, ctx, command);
}

/** The session files under a folder (Codex `rollout-*.jsonl`, Copilot CLI `session-state/<id>/events.jsonl`, Gemini CLI `tmp/<project>/chats/session-*.jsonl`), recursively and sorted; null when `path` is not a folder. */
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
    else if (isCodexSessionPath(p) || isCopilotSessionPath(p) || isGeminiSessionPath(p))
      out.push(p);
  }
  return out.sort();
}

/**
 * The `*.jsonl` files under a folder (Claude Code keeps a session's transcript as
 * `~/.claude/projects/<project>/<session>.jsonl`), recursively and sorted, but none under a
 * `subagents` folder: those follow their session's transcript. Null when `path` is not a folder.
 */
async function transcriptsUnder(path: string): Promise<string[] | null> {
  let entries;
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch {
    return null;
  }
  const out: string[] = [];
  for (const e of entries) {
    const p = join(path, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'subagents') out.push(...((await transcriptsUnder(p)) ?? []));
    } else if (e.name.endsWith('.jsonl')) out.push(p);
  }
  return out.sort();
}

/**
 * The given paths plus, after each `<session>.jsonl`, its sub-agent transcripts
 * (`<session>/subagents/agent-*.jsonl`, sorted); a folder is replaced by the Codex session
 * files under it or, with none, by the transcripts under it (`rotscope import
 * ~/.claude/projects`); each path once, in order.
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
    // a folder (e.g. `$CODEX_HOME/sessions`) stands for the Codex session files under it, else
    // for the transcripts under it (`~/.claude/projects`); one without either is read as the
    // path, and refused as a folder
    const sessions = await codexSessionFilesUnder(p);
    if (sessions !== null && sessions.length > 0) {
      sessions.forEach(add);
      continue;
    }
    const transcripts = sessions === null ? [] : ((await transcriptsUnder(p)) ?? []);
    if (transcripts.length > 0) {
      for (const t of await withSubagentFiles(transcripts)) add(t);
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
