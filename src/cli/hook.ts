/**
 * `rotscope hook`: Claude Code's compaction hooks (JSON on stdin, conventions §5.4); its
 * PreToolUse and PostToolUse calls go to the tool-result guard (./guard.ts).
 *
 * - `PreCompact` appends one line to the compaction log (ROTSCOPE_COMPACTION_LOG, default
 *   `~/.rotscope/compactions.log`):
 *   `2026-09-04 03:07:33  trigger=auto  tokens=807,693  transcript=566.5MB  session=80 days`
 *   (tokens from the transcript's tail, the session's age from its head), and shows it in the
 *   tmux status bar when run inside tmux (`$TMUX`).
 * - With a rotscope server configured (ROTSCOPE_URL, ROTSCOPE_TOKEN), `SessionStart` with
 *   `source=compact` or `PostCompact` sends one compaction span over OTLP/HTTP JSON:
 *   `gen_ai.operation.name=compaction`, `session.id` (the conversation), trigger, tokens before
 *   and after, the summary's size, and its text only when ROTSCOPE_CAPTURE_CONTENT=1. Both hooks
 *   derive the same span id from the compaction, so the server stores it once. A server that is
 *   down costs at most 1 s (ROTSCOPE_HOOK_TIMEOUT_MS sets another bound): the span then waits in
 *   `unsent/` beside the log and goes with the next hook run that reaches the server (oldest
 *   first, at most a week old), never dropped silently. PreCompact's `pending/` notes are removed once they are a day old.
 * - With a server configured, `SessionStart` of any other source (startup, resume, clear) sends one
 *   `rotscope.session` span: `session.id` and the working directory (`process.working_directory`
 *   on its resource, as on the compaction span), so the console shows where the conversation runs.
 *   Same bound and same `unsent/` rule as the compaction span.
 * - With a server configured, every `SessionStart` also fetches the workspace's knobs
 *   (`GET /api/agent-knobs`, in the same second) into the knobs file (`~/.rotscope/knobs.json`,
 *   ROTSCOPE_KNOBS_FILE): the status line's colours and the guard's budget then follow the
 *   detectors' knobs. A server that does not answer leaves the last file in place.
 *
 * - With a server configured, every run sends the window Claude Code reported for the session
 *   (the status line's note, ./statusline.ts: `model.id` and `context_window.context_window_size`)
 *   as one `rotscope.window` span, once per pair (the guard does the same on tool calls).
 *
 * It never blocks compaction: the exit code is always 0, and every error is written to the log.
 *
 * This file wires the hook's jobs, one module each: the log (./hook-log.ts), reading the
 * transcript (./hook-transcript.ts), the spans and their POST (./hook-otlp.ts), the files that
 * carry work to a later run (./hook-outbox.ts), tmux (./hook-tmux.ts) and the knobs fetch
 * (./hook-knobs.ts).
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { guardCommand, windowSpan } from './guard.ts';
import {
  compactionLogPath,
  formatAge,
  formatBytes,
  type Env,
  type HookLog,
  logTimestamp,
} from './hook-log.ts';
import { withKnobs } from './hook-knobs.ts';
import { compactionSpan, sendSpan, sessionSpan } from './hook-otlp.ts';
import { cleanPending, readPending, sendOrKeep, sendUnsent, writePending } from './hook-outbox.ts';
import { tmuxMessage } from './hook-tmux.ts';
import { lastBoundary, sessionStart, transcriptSize } from './hook-transcript.ts';
import { lastUsage, obj, readWindowNote, str, writeWindowNote } from './statusline.ts';

type Obj = Record<string, unknown>;

/** PreCompact: the log line (and tmux), and what the post-compaction hook needs. */
async function preCompact(input: Obj, env: Env, log: HookLog, now: Date) {
  const transcript = str(input.transcript_path);
  const trigger = str(input.trigger) ?? 'unknown';
  let tokens: number | null = null;
  let size: number | null = null;
  let started: Date | null = null;
  if (transcript !== undefined) {
    try {
      tokens = lastUsage(transcript)?.tokens ?? null;
      size = transcriptSize(transcript);
      started = sessionStart(transcript);
    } catch (error) {
      log(`error=PreCompact: cannot read ${transcript}: ${(error as Error).message}`);
    }
  }
  const line = [
    `trigger=${trigger}`,
    `tokens=${tokens === null ? 'unknown' : tokens.toLocaleString('en-US')}`,
    `transcript=${size === null ? 'unknown' : formatBytes(size)}`,
    `session=${started === null ? 'unknown' : formatAge(now.getTime() - started.getTime())}`,
  ].join('  ');
  log(line);
  const tmuxError = await tmuxMessage(`rotscope: compaction ${line}`, env);
  if (tmuxError) log(`error=${tmuxError}`);
  const sessionId = str(input.session_id);
  if (str(env.ROTSCOPE_URL) && sessionId !== undefined)
    writePending(env, sessionId, { trigger, tokensBefore: tokens, atMs: now.getTime() });
}

/** SessionStart(source=compact) / PostCompact: the compaction span to the server. */
async function afterCompact(input: Obj, env: Env, log: HookLog, now: Date) {
  const sessionId = str(input.session_id);
  if (!str(env.ROTSCOPE_URL) || sessionId === undefined) return;
  // null when PreCompact is not installed or its note is gone: the transcript tells the rest
  const pending = readPending(env, sessionId);
  const transcript = str(input.transcript_path);
  const boundary = transcript === undefined ? null : lastBoundary(transcript);
  const summary = str(input.compact_summary) ?? boundary?.summary ?? null;
  const body = compactionSpan({
    sessionId,
    key: boundary?.uuid ?? String(pending?.atMs ?? now.getTime()),
    startMs: pending?.atMs ?? now.getTime(),
    endMs: now.getTime(),
    trigger: pending?.trigger ?? str(input.trigger) ?? boundary?.trigger ?? null,
    tokensBefore: pending?.tokensBefore ?? boundary?.preTokens ?? null,
    tokensAfter: boundary?.postTokens ?? null,
    summary,
    captureContent: env.ROTSCOPE_CAPTURE_CONTENT === '1',
    cwd: str(input.cwd),
  });
  await sendOrKeep(body, 'compaction', sessionId, env, log);
  // The pending file stays: PostCompact and SessionStart(compact) both run and must send the
  // same span (same id); the next PreCompact overwrites it.
}

/** SessionStart (startup, resume, clear): where the session runs, to the server. */
async function sessionStarted(input: Obj, env: Env, log: HookLog, now: Date) {
  const sessionId = str(input.session_id);
  const cwd = str(input.cwd);
  if (!str(env.ROTSCOPE_URL) || sessionId === undefined || cwd === undefined) return;
  await sendOrKeep(
    sessionSpan({ sessionId, cwd, atMs: now.getTime() }),
    'session',
    sessionId,
    env,
    log,
  );
}

/**
 * The window Claude Code reported for the session (the status line's note, ./statusline.ts) to
 * the server, once: marked sent when the server took it, else left for the next hook or guard run.
 */
async function sendWindow(input: Obj, env: Env, log: HookLog, now: Date) {
  const sessionId = str(input.session_id);
  if (!str(env.ROTSCOPE_URL) || sessionId === undefined) return;
  const note = readWindowNote(env, sessionId);
  if (note === undefined || note.sent) return;
  const error = await sendSpan(windowSpan(note, now), env);
  if (error !== null) {
    log(`error=window span not sent (kept for the next run): ${error}  session_id=${sessionId}`);
    return;
  }
  // the status line may have left another pair meanwhile: that one is still to send
  const still = readWindowNote(env, sessionId);
  if (still?.model === note.model && still.window === note.window)
    writeWindowNote(env, { ...note, sent: true });
}

/**
 * The whole command. Always returns 0 (a hook must never block compaction); what goes wrong is
 * appended to the compaction log, and to stderr only when the log itself cannot be written.
 */
export async function hookCommand(
  stdin: string,
  io: { stderr: (text: string) => void; stdout?: (text: string) => void },
  env: Env,
  now: () => Date = () => new Date(),
): Promise<number> {
  // Tool calls go to the guard (src/cli/guard.ts), which answers on stdout and never throws.
  if (/"hook_event_name"\s*:\s*"(PreToolUse|PostToolUse)"/.test(stdin)) {
    const out = guardCommand(stdin, env, now());
    if (out !== '') io.stdout?.(out);
    return 0;
  }
  const logPath = compactionLogPath(env);
  const log = (text: string) => {
    try {
      mkdirSync(path.dirname(logPath), { recursive: true });
      appendFileSync(logPath, `${logTimestamp(now())}  ${text}\n`);
    } catch (error) {
      io.stderr(`rotscope hook: cannot write ${logPath}: ${(error as Error).message}\n${text}\n`);
    }
  };
  let event = 'unknown';
  try {
    const input = obj(JSON.parse(stdin));
    if (!input) throw new Error('hook input is not a JSON object');
    event = str(input.hook_event_name) ?? 'unknown';
    cleanPending(logPath, now().getTime());
    if (str(env.ROTSCOPE_URL)) await sendUnsent(logPath, env, log, now().getTime());
    if (event === 'PreCompact') await preCompact(input, env, log, now());
    else if (event === 'PostCompact') await afterCompact(input, env, log, now());
    else if (event === 'SessionStart')
      await withKnobs(
        env,
        log,
        input.source === 'compact'
          ? afterCompact(input, env, log, now())
          : sessionStarted(input, env, log, now()),
      );
    await sendWindow(input, env, log, now());
  } catch (error) {
    log(`error=${event}: ${(error as Error).message}`);
  }
  return 0;
}
