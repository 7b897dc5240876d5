/**
 * `rotscope import FILE...`: reads Claude Code session transcripts (JSONL, with their
 * sub-agent files; a folder such as `~/.claude/projects` stands for the transcripts under it),
 * Codex session files and OTLP/JSON trace files into the store, read as `rotscope analyze`
 * reads them (src/cli/input-file.ts), as if their calls had arrived over OTLP. Re-importing a
 * file creates no duplicates, and a call or compaction telemetry stored already is one row with
 * what the file adds (src/receiver/merge-rules.ts).
 *
 * On the embedded database a running server owns the data directory: the import then goes
 * through that server (POST /api/import per file, POST /api/import/evaluate at the end, with an
 * ingest or admin token once tokens exist: --token or ROTSCOPE_TOKEN), which stores the same
 * rows and answers the same counts, so the summary is the one an import with the server stopped
 * prints. It refuses only beside a holder that serves no HTTP (another command, a server still
 * starting), saying what to do. A file the server has no room for yet (429 or 503: other imports
 * in progress, its memory budget taken) is sent again after the Retry-After it names, for up to
 * {@link BUSY_WAIT_MS}; a file over its size limit (413) is named, with what to do.
 *
 * Imported history is history: the import evaluates the conversations it changed before it
 * exits, and the findings anchored on calls before its start carry their call's time and are
 * not pushed to channels (it says how many). With `--notify`, what is recent is not history: the
 * findings on calls of the last {@link DEFAULT_NOTIFY_HOURS} hours (`--notify-hours H` to change,
 * at most {@link MAX_NOTIFY_HOURS}) are sent to the alert's channels as live ones would have
 * been (a session that ran while the server was down alerts when it is imported); older ones
 * stay history. A finding stored already (telemetry saw the session) is not sent again. Retention ages rows by their own time, so calls
 * older than its window are removed whole (with their tool results and compactions) at its
 * next run; the import says so, the findings stay.
 */
import { readFile } from 'node:fs/promises';
import type { Config } from '../config.ts';
import { msToNs } from '../ingest/attrs.ts';
import { parseRetryAfter } from '../notifier/policy.ts';
import type { ImportEvaluation } from '../evaluator/now.ts';
import type { ImportedFile } from '../receiver/import.ts';
import type { DataDirLockedError } from '../store/data-dir-lock.ts';
import { withSubagentFiles } from './input-file.ts';
import type { ServerElsewhereError } from './held-data-dir.ts';
import { plural } from '../model/plural.ts';

interface Out {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** How long one file waits, in all, for a server that keeps answering 429 or 503. */
export const BUSY_WAIT_MS = 30 * 60_000;

export const IMPORT_USAGE =
  'usage: rotscope import FILE.jsonl|FOLDER... [--workspace W] [--token TOKEN] [--notify [--notify-hours H]]\n';

/** `--notify`: findings on calls this recent (hours) are sent; older ones stay history. */
export const DEFAULT_NOTIFY_HOURS = 24;
/** The longest `--notify-hours` (a month): beyond it, nobody is waiting for the alert. */
export const MAX_NOTIFY_HOURS = 720;

/**
 * `--notify-hours` as a number of hours, or the reason it is not one (0 < H ≤ 720; fractions
 * allowed, e.g. 0.5).
 */
export function parseNotifyHours(text: string | undefined): { hours: number } | { error: string } {
  if (text === undefined) return { hours: DEFAULT_NOTIFY_HOURS };
  const hours = Number(text);
  if (text.trim() === '' || !Number.isFinite(hours) || hours <= 0 || hours > MAX_NOTIFY_HOURS)
    return {
      error: `--notify-hours must be a number of hours above 0 and at most ${MAX_NOTIFY_HOURS}, got "${text}"`,
    };
  return { hours };
}

/** Where the files go: the store this process opened, or the server holding it. */
interface ImportTarget {
  /** The retention the server applies (ROTSCOPE_RETENTION_DAYS), for the closing note. */
  retentionDays(): number;
  /**
   * Stores one file's text. `error`: the file is none the import reads (the command goes on);
   * `stop`: the target cannot go on (already said why).
   */
  file(
    path: string,
    text: string,
  ): Promise<{ file: ImportedFile } | { error: string } | { stop: true }>;
  evaluate(conversationIds: readonly string[]): Promise<ImportEvaluation | undefined>;
  close(): Promise<void>;
}

/**
 * `workspace`: `--workspace`; without it `default` or, through a server, the token's workspace
 * (`default` too while the server needs no token).
 */
export async function importCommand(
  files: readonly string[],
  workspace: string | undefined,
  config: Config,
  io: Out,
  options: {
    now?: () => number;
    token?: string | undefined;
    /** `--notify`: findings on calls of the last this many hours are sent. */
    notifyHours?: number | undefined;
    /** A running server to import through instead of creating a store (held-data-dir.ts). */
    elsewhere?: ServerElsewhereError | undefined;
  } = {},
): Promise<number> {
  if (files.length === 0) {
    io.stderr(IMPORT_USAGE);
    return 2;
  }
  const startedMs = (options.now ?? Date.now)();
  const notifyHours = options.notifyHours;
  // what is history: calls before the import's start, or (--notify) before the recent hours
  const historyBeforeNs = msToNs(
    notifyHours === undefined ? startedMs : startedMs - Math.round(notifyHours * 3_600_000),
  );
  const { openStoreOrHolder } = await import('./held-data-dir.ts');
  const { store, locked } = await openStoreOrHolder(config, options.elsewhere);
  const target = locked
    ? await serverTarget(locked, { workspace, historyBeforeNs, token: options.token }, io)
    : await storeTarget(store, {
        workspace: workspace ?? 'default',
        config,
        startedMs,
        historyBeforeNs,
      });
  if (target === undefined) return 1;
  let failed = 0;
  try {
    const touched = new Set<string>();
    let beyondRetention = 0;
    for (const file of await withSubagentFiles(files)) {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? String(error);
        io.stderr(
          code === 'EISDIR'
            ? `${file}: a folder with no session files in it (Claude Code transcripts *.jsonl, Codex rollout-*.jsonl, Copilot CLI session-state/*/events.jsonl; compressed files are not read)\n`
            : `${file}: cannot read (${code})\n`,
        );
        failed++;
        continue;
      }
      const stored = await target.file(file, text);
      if ('stop' in stored) return 1;
      if ('error' in stored) {
        io.stderr(`rotscope import: ${stored.error}\n`);
        failed++;
        continue;
      }
      const imported = stored.file;
      for (const c of imported.touched) touched.add(c);
      beyondRetention += imported.olderThanRetention;
      io.stdout(
        `${file}: ${plural(imported.calls, 'call')}, ${plural(imported.toolResults, 'tool result')}, ` +
          `${plural(imported.compactions, 'compaction')} in ${plural(imported.conversations, 'conversation')}` +
          (imported.merged > 0
            ? ` (${plural(imported.merged, 'call')} stored already, by telemetry: merged, not added)`
            : '') +
          '\n',
      );
    }
    if (touched.size > 0) {
      const evaluated = await target.evaluate([...touched]);
      if (evaluated === undefined) return 1;
      const { fromHistory, live } = evaluated;
      io.stdout(
        notifyHours === undefined
          ? `${plural(fromHistory, 'finding')} from history, not sent` +
              (live > 0 ? `; ${live} new` : '') +
              '\n'
          : `${plural(live, 'finding')} from the last ${notifyHours} h sent to the alert's channels ` +
              `(--notify); ${plural(fromHistory, 'finding')} older, not sent\n`,
      );
      for (const { conversationId, message } of evaluated.failed)
        io.stderr(
          `rotscope import: evaluating ${conversationId} failed (${message}); ` +
            'a server evaluates it later\n',
        );
    }
    if (beyondRetention > 0)
      io.stdout(
        `note: ${beyondRetention} of the calls are older than the retention window ` +
          `(${target.retentionDays()} days, ROTSCOPE_RETENTION_DAYS): a server's retention removes ` +
          'them, with their tool results and compactions, at its next run; their findings stay ' +
          '(ROTSCOPE_RETENTION_DAYS=0 keeps everything)\n',
      );
  } finally {
    await target.close();
  }
  return failed > 0 ? 1 : 0;
}

/** The import on a store this process opened (no server holds it, or PostgreSQL). */
async function storeTarget(
  store: import('../store/db.ts').Store,
  options: { workspace: string; config: Config; startedMs: number; historyBeforeNs: string },
): Promise<ImportTarget> {
  const [{ IngestPipeline }, { migrate }, { ensureWorkspace }, imports, { evaluateImported }] =
    await Promise.all([
      import('../receiver/pipeline.ts'),
      import('../store/migrate.ts'),
      import('../store/workspaces.ts'),
      import('../receiver/import.ts'),
      import('../evaluator/now.ts'),
    ]);
  const { workspace, config } = options;
  try {
    await migrate(store.db);
    await ensureWorkspace(store.db, workspace);
  } catch (error) {
    await store.close();
    throw error;
  }
  const pipeline = new IngestPipeline(store, config);
  const cutoffNs = imports.importCutoffNs(config.retentionDays, options.startedMs);
  return {
    retentionDays: () => config.retentionDays,
    async file(path, text) {
      const stored = await imports.importText(
        pipeline,
        workspace,
        { path, text },
        { historyBeforeNs: options.historyBeforeNs, cutoffNs },
      );
      return stored.ok ? { file: stored.file } : { error: stored.error };
    },
    evaluate: (ids) => evaluateImported(store, workspace, ids),
    close: () => store.close(),
  };
}

/**
 * The POST /api/import body of one file: JSON with every character past ASCII escaped
 * (`\uXXXX`), so the server decodes it to a one-byte string rather than a two-byte one (V8 keeps
 * a string of Latin-1 characters in one byte each): one non-ASCII character in a 100 MiB
 * transcript would double what the body takes while it is parsed.
 */
export function importRequestBody(fields: {
  workspace: string | undefined;
  path: string;
  text: string;
  historyBefore: string;
}): string {
  return JSON.stringify(fields).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * The import through the server that holds the embedded data directory, or undefined (said
 * why) when the holder serves no HTTP to import through.
 */
async function serverTarget(
  locked: DataDirLockedError,
  options: { workspace: string | undefined; historyBeforeNs: string; token: string | undefined },
  io: Out,
): Promise<ImportTarget | undefined> {
  const { describeHolder } = await import('../store/data-dir-lock.ts');
  const { reachableUrl } = await import('./held-data-dir.ts');
  const { IMPORT_EVALUATE_BATCH } = await import('../receiver/import.ts');
  const holder = locked.holder;
  if (!holder?.url) {
    io.stderr(
      `rotscope import: the data directory ${locked.dataDir} is in use by ${describeHolder(holder)}, ` +
        'which serves no API to import through, and writing underneath it would lose data: ' +
        `wait until it ends${holder ? ` (pid ${holder.pid})` : ''} or, if it is a server starting, until it listens, ` +
        'then run this again (or use DATABASE_URL to share a PostgreSQL)\n',
    );
    return undefined;
  }
  const base = reachableUrl(holder.url);
  const server = `the running server (pid ${holder.pid}, ${base})`;
  io.stderr(
    'wouldCreate' in locked
      ? `rotscope import: importing through ${server}, the server running for this user ` +
          `(no store of its own here: ${String(locked.wouldCreate)})\n`
      : `rotscope import: the data directory ${locked.dataDir} is held by ${server}: importing through it\n`,
  );
  let retentionDays = 0;

  /**
   * POSTs JSON; the answer's status, body and Retry-After (ms), or undefined when the server
   * does not answer (said).
   */
  const post = async (
    path: string,
    body: string,
  ): Promise<
    { status: number; body: Record<string, unknown>; retryAfterMs: number | undefined } | undefined
  > => {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
        body,
        signal: AbortSignal.timeout(10 * 60_000),
      });
    } catch (error) {
      const reason = (error as { cause?: { code?: string } }).cause?.code ?? String(error);
      io.stderr(
        `rotscope import: the data directory ${locked.dataDir} is held by pid ${holder.pid}, ` +
          `but its server at ${base} does not answer (${reason}); what was imported before stays\n`,
      );
      return undefined;
    }
    const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    return {
      status: response.status,
      body: answer,
      retryAfterMs: parseRetryAfter(response.headers.get('retry-after') ?? undefined, Date.now()),
    };
  };
  /**
   * POSTs one file's import, sent again while the server answers 429 or 503 (after the
   * Retry-After it names, said once), for up to {@link BUSY_WAIT_MS}.
   */
  const postFile = async (path: string, body: string) => {
    const deadline = Date.now() + BUSY_WAIT_MS;
    let said = false;
    for (;;) {
      const answer = await post('/api/import', body);
      if (answer === undefined || (answer.status !== 429 && answer.status !== 503)) return answer;
      const waitMs =
        Math.ceil(Math.min(Math.max(answer.retryAfterMs ?? 5_000, 1_000), 60_000) / 1000) * 1000;
      if (Date.now() + waitMs > deadline) return answer;
      if (!said)
        io.stderr(
          `rotscope import: ${server} has no room for ${path} yet (${answer.status}: ${String(answer.body.message ?? 'no message')}); ` +
            `sending it again in ${waitMs / 1000} s\n`,
        );
      said = true;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  };
  /** Says why the server refused (with what to do for a 401 or 403). */
  const refused = (status: number, body: Record<string, unknown>): void => {
    const message = typeof body.message === 'string' ? body.message : 'no message';
    const hint =
      status === 401 || status === 403
        ? `; pass an ingest or admin token of ${options.workspace === undefined ? 'the workspace' : `workspace "${options.workspace}"`} with --token (or ROTSCOPE_TOKEN), or stop the server (pid ${holder.pid}) and run this again`
        : '';
    io.stderr(`rotscope import: ${server} answered ${status}: ${message}${hint}\n`);
  };

  return {
    retentionDays: () => retentionDays,
    async file(path, text) {
      const body = importRequestBody({
        workspace: options.workspace,
        path,
        text,
        historyBefore: options.historyBeforeNs,
      });
      const answer = await postFile(path, body);
      if (answer === undefined) return { stop: true };
      if (answer.status === 413)
        return {
          error:
            `${path}: ${Math.ceil(Buffer.byteLength(body) / 2 ** 20)} MiB to send, more than ${server} takes in one import ` +
            `(${String(answer.body.message ?? 'no message')}): stop the server (pid ${holder.pid}) and import it again`,
        };
      if (answer.status === 200) {
        retentionDays = Number(answer.body.retentionDays ?? 0);
        return { file: answer.body as unknown as ImportedFile };
      }
      if (answer.status === 400 && answer.body.error === 'unsupported_file')
        return { error: String(answer.body.message) };
      if (answer.status === 400)
        return {
          error: `${path}: ${server} refused it (${answer.status}: ${String(answer.body.message ?? 'no message')})`,
        };
      refused(answer.status, answer.body);
      return { stop: true };
    },
    async evaluate(ids) {
      const out: ImportEvaluation = { fromHistory: 0, live: 0, failed: [] };
      for (let i = 0; i < ids.length; i += IMPORT_EVALUATE_BATCH) {
        const answer = await post(
          '/api/import/evaluate',
          JSON.stringify({
            workspace: options.workspace,
            conversations: ids.slice(i, i + IMPORT_EVALUATE_BATCH),
          }),
        );
        if (answer === undefined) return undefined;
        if (answer.status !== 200) {
          refused(answer.status, answer.body);
          return undefined;
        }
        const batch = answer.body as unknown as ImportEvaluation;
        out.fromHistory += batch.fromHistory;
        out.live += batch.live;
        out.failed.push(...batch.failed);
      }
      return out;
    },
    close: async () => {},
  };
}
