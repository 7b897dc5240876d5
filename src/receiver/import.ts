/**
 * What `rotscope import` does with one file's text, shared by the command on a store it opens
 * itself and by the server that holds the embedded data directory (POST /api/import), so an
 * import beside a running server stores the same rows and prints the same summary as one
 * without it. Once its files are in, both evaluate the conversations they changed alike
 * (src/evaluator/now.ts evaluateImported; POST /api/import/evaluate).
 */
import { readInputText } from './input-text.ts';
import { retentionCutoffMs } from '../store/retention.ts';
import type { IngestPipeline } from './pipeline.ts';

/**
 * How long the evaluator loops leave an imported conversation to the import that evaluates it
 * (src/store/conversations.ts holdEvaluation): long enough for a whole `~/.claude/projects`,
 * short enough that an interrupted import's conversations are evaluated soon after.
 */
export const IMPORT_EVALUATION_HOLD_MS = 10 * 60_000;

/**
 * What an import through the server holds in memory, in bytes of its POST /api/import body: the
 * body, the string it decodes to (two bytes a character once the text has one outside Latin-1),
 * the parsed text, then its entries and the normalized calls. Measured with
 * `npm run bench -- import-memory` (docs/scaling.md): a 104 MiB body took the server's RSS up
 * by about 500 MiB. Reserved in the ingest byte budget before the body is read.
 */
export const IMPORT_MEMORY_FACTOR = 5;

/** Conversations per POST /api/import/evaluate. */
export const IMPORT_EVALUATE_BATCH = 200;

/** One imported file, counted as the command's summary line counts it. */
export interface ImportedFile {
  calls: number;
  toolResults: number;
  compactions: number;
  /** Conversations of its calls. */
  conversations: number;
  /** Calls stored already (by telemetry), merged into their rows rather than added. */
  merged: number;
  /** Calls older than the retention window (its next run removes them). */
  olderThanRetention: number;
  /** Conversations it changed (of its calls and of its compactions), to evaluate. */
  touched: string[];
}

/** The retention cutoff (ns) of an import started at `startedMs`; null when nothing ages out. */
export function importCutoffNs(retentionDays: number, startedMs: number): bigint | null {
  return retentionDays > 0
    ? BigInt(retentionCutoffMs(retentionDays, startedMs)) * 1_000_000n
    : null;
}

/**
 * Normalizes one file's text (named `path`, never read here) in the workspace's context and
 * stores it idempotently; `historyBeforeNs` (the import's start) marks what it changed as
 * history. Returns why not when the text is no file the import reads.
 */
export async function importText(
  pipeline: IngestPipeline,
  workspace: string,
  file: { path: string; text: string },
  options: { historyBeforeNs: string; cutoffNs: bigint | null },
): Promise<{ ok: true; file: ImportedFile } | { ok: false; error: string }> {
  const context = await pipeline.context(workspace);
  const loaded = readInputText(file.path, file.text, context, 'import');
  if (!loaded.ok) return { ok: false, error: loaded.error };
  const { normalized } = loaded.file;
  const { merged } = await pipeline.ingestNormalized(workspace, normalized, {
    historyBeforeNs: options.historyBeforeNs,
    holdEvaluationMs: IMPORT_EVALUATION_HOLD_MS,
  });
  const conversations = new Set(normalized.calls.map((call) => call.conversationId));
  const touched = new Set(conversations);
  for (const c of normalized.compactions) touched.add(c.conversationId);
  const { cutoffNs } = options;
  return {
    ok: true,
    file: {
      calls: normalized.calls.length,
      toolResults: normalized.toolResults.length,
      compactions: normalized.compactions.length,
      conversations: conversations.size,
      merged,
      olderThanRetention:
        cutoffNs === null
          ? 0
          : normalized.calls.filter((call) => BigInt(call.startNs) < cutoffNs).length,
      touched: [...touched],
    },
  };
}
