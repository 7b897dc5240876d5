/**
 * `rotscope import FILE...`: reads Claude Code session transcripts (JSONL, with their
 * sub-agent files) and OTLP/JSON trace files into the store, read as `rotscope analyze` reads
 * them (src/cli/input-file.ts), as if their calls had arrived over OTLP; the evaluator of a running `serve` (or the next
 * one started) evaluates them. Re-importing a file creates no duplicates. On the embedded
 * database it refuses while another process (a running server) holds the data directory.
 */
import { IngestPipeline } from '../receiver/pipeline.ts';
import type { Config } from '../config.ts';
import { migrate } from '../store/migrate.ts';
import { ensureWorkspace } from '../store/workspaces.ts';
import { openStoreOrHolder, refuseHeld } from './held-data-dir.ts';
import { loadInputFile, withSubagentFiles } from './input-file.ts';

export async function importCommand(
  files: readonly string[],
  workspace: string,
  config: Config,
  io: { stdout: (text: string) => void; stderr: (text: string) => void },
): Promise<number> {
  if (files.length === 0) {
    io.stderr('usage: rotscope import FILE.jsonl... [--workspace W]\n');
    return 2;
  }
  const { store, locked } = await openStoreOrHolder(config);
  if (locked) return refuseHeld('import', locked, io);
  let failed = 0;
  try {
    await migrate(store.db);
    await ensureWorkspace(store.db, workspace);
    const pipeline = new IngestPipeline(store, config);
    const context = await pipeline.context(workspace);
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
      await pipeline.ingestNormalized(workspace, normalized);
      const conversations = new Set(normalized.calls.map((call) => call.conversationId));
      io.stdout(
        `${file}: ${normalized.calls.length} calls, ${normalized.toolResults.length} tool results, ` +
          `${normalized.compactions.length} compactions in ${conversations.size} conversation(s)\n`,
      );
    }
  } finally {
    await store.close();
  }
  return failed > 0 ? 1 : 0;
}
