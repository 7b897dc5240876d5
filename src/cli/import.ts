/**
 * `rotscope import FILE...`: reads Claude Code session transcripts (JSONL) into the store,
 * as if their calls had arrived over OTLP; the evaluator of a running `serve` (or the next
 * one started) evaluates them. Re-importing a file creates no duplicates. On the embedded
 * database it refuses while another process (a running server) holds the data directory.
 */
import { readFile } from 'node:fs/promises';
import { IngestPipeline } from '../api/ingest-pipeline.ts';
import type { Config } from '../config.ts';
import { normalizeTranscript, transcriptOptionsForPath } from '../ingest/index.ts';
import { migrate } from '../store/migrate.ts';
import { ensureWorkspace } from '../store/workspaces.ts';
import { openStoreOrHolder, refuseHeld } from './held-data-dir.ts';

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
    for (const file of files) {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        io.stderr(
          `${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? String(error)})\n`,
        );
        failed++;
        continue;
      }
      const normalized = normalizeTranscript(text, context, transcriptOptionsForPath(file));
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
