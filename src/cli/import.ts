/**
 * `rotscope import FILE...`: reads Claude Code session transcripts (JSONL, with their
 * sub-agent files) and OTLP/JSON trace files into the store, read as `rotscope analyze` reads
 * them (src/cli/input-file.ts), as if their calls had arrived over OTLP. Re-importing a file
 * creates no duplicates, and a call or compaction telemetry stored already is one row with
 * what the file adds (src/store/merge.ts). On the embedded database it refuses while another
 * process (a running server) holds the data directory.
 *
 * Imported history is history: the import evaluates the conversations it changed before it
 * exits, and the findings anchored on calls before its start carry their call's time and are
 * not pushed to channels (it says how many). Retention ages rows by their own time, so calls
 * older than its window are removed whole (with their tool results and compactions) at its
 * next run; the import says so, the findings stay.
 */
import { IngestPipeline } from '../receiver/pipeline.ts';
import type { Config } from '../config.ts';
import { evaluateNow } from '../evaluator/now.ts';
import { msToNs } from '../ingest/attrs.ts';
import { migrate } from '../store/migrate.ts';
import { retentionCutoffMs } from '../store/retention.ts';
import { ensureWorkspace } from '../store/workspaces.ts';
import { openStoreOrHolder, refuseHeld } from './held-data-dir.ts';
import { loadInputFile, withSubagentFiles } from './input-file.ts';

export async function importCommand(
  files: readonly string[],
  workspace: string,
  config: Config,
  io: { stdout: (text: string) => void; stderr: (text: string) => void },
  now: () => number = Date.now,
): Promise<number> {
  if (files.length === 0) {
    io.stderr('usage: rotscope import FILE.jsonl... [--workspace W]\n');
    return 2;
  }
  const startedMs = now();
  const historyBeforeNs = msToNs(startedMs);
  const { store, locked } = await openStoreOrHolder(config);
  if (locked) return refuseHeld('import', locked, io);
  let failed = 0;
  try {
    await migrate(store.db);
    await ensureWorkspace(store.db, workspace);
    const pipeline = new IngestPipeline(store, config);
    const context = await pipeline.context(workspace);
    const touched = new Set<string>();
    const cutoffNs =
      config.retentionDays > 0
        ? BigInt(retentionCutoffMs(config.retentionDays, startedMs)) * 1_000_000n
        : null;
    let beyondRetention = 0;
    for (const file of await withSubagentFiles(files)) {
      // the same reading as `rotscope analyze`: transcripts and OTLP/JSON traces, nothing else
      const loaded = await loadInputFile(file, context, 'import');
      if (!loaded.ok) {
        io.stderr(
          loaded.readCode !== undefined
            ? `${file}: cannot read (${loaded.readCode})\n`
            : `rotscope import: ${loaded.error}\n`,
        );
        failed++;
        continue;
      }
      const { normalized } = loaded.file;
      const { merged } = await pipeline.ingestNormalized(workspace, normalized, {
        historyBeforeNs,
      });
      const conversations = new Set(normalized.calls.map((call) => call.conversationId));
      for (const c of conversations) touched.add(c);
      for (const c of normalized.compactions) touched.add(c.conversationId);
      if (cutoffNs !== null)
        beyondRetention += normalized.calls.filter(
          (call) => BigInt(call.startNs) < cutoffNs,
        ).length;
      io.stdout(
        `${file}: ${normalized.calls.length} calls, ${normalized.toolResults.length} tool results, ` +
          `${normalized.compactions.length} compactions in ${conversations.size} conversation(s)` +
          (merged > 0 ? ` (${merged} calls stored already, by telemetry: merged, not added)` : '') +
          '\n',
      );
    }
    if (touched.size > 0) {
      const evaluated = await evaluateNow(store, workspace, touched);
      const fromHistory = evaluated.results.reduce((n, r) => n + r.findingsFromHistory, 0);
      const live = evaluated.results.reduce(
        (n, r) => n + r.findingsCreated + r.findingsEscalated - r.findingsFromHistory,
        0,
      );
      io.stdout(
        `${fromHistory} finding${fromHistory === 1 ? '' : 's'} from history, not sent` +
          (live > 0 ? `; ${live} new` : '') +
          '\n',
      );
      for (const { conversationId, error } of evaluated.failed)
        io.stderr(
          `rotscope import: evaluating ${conversationId} failed (${(error as Error).message}); ` +
            'a server evaluates it later\n',
        );
    }
    if (beyondRetention > 0)
      io.stdout(
        `note: ${beyondRetention} of the calls are older than the retention window ` +
          `(${config.retentionDays} days, ROTSCOPE_RETENTION_DAYS): a server's retention removes ` +
          'them, with their tool results and compactions, at its next run; their findings stay ' +
          '(ROTSCOPE_RETENTION_DAYS=0 keeps everything)\n',
      );
  } finally {
    await store.close();
  }
  return failed > 0 ? 1 : 0;
}
