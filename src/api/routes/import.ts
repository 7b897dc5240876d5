/**
 * `rotscope import` through a running server (`ingest` scope; `admin` too): the command finds
 * the embedded data directory held by this server, so it sends each file's text here instead
 * of writing underneath it. `POST /api/import` normalizes one file as the command would
 * (src/receiver/import.ts) and stores it idempotently, as history; `POST /api/import/evaluate`
 * evaluates the conversations the files changed, once they are all in. Same rows, same
 * summary as an import with the server stopped. The server reads no file: the path only
 * names the file (a Codex `rollout-*.jsonl`, a sub-agent's `subagents/agent-*.jsonl`).
 * With a token, only the token's workspace; open on loopback with no token yet, any.
 */
import { z } from 'zod';
import { msToNs } from '../../ingest/attrs.ts';
import { evaluateImported } from '../../evaluator/now.ts';
import {
  IMPORT_BODY_LIMIT,
  IMPORT_EVALUATE_BATCH,
  importCutoffNs,
  importText,
} from '../../receiver/import.ts';
import { IngestPipeline } from '../../receiver/pipeline.ts';
import { ensureWorkspace, WORKSPACE_ID_PATTERN } from '../../store/workspaces.ts';
import { errorSchema } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { withInputRules } from '../validation.ts';
import { ownWorkspace } from './tokens.ts';

const workspace = z
  .string()
  .regex(new RegExp(WORKSPACE_ID_PATTERN))
  .optional()
  .describe("Default: the caller's workspace (a token may only name its own)");

const importBody = z.strictObject({
  workspace,
  path: z
    .string()
    .min(1)
    .max(4096)
    .describe("The file's path where the command read it: named in messages, never read"),
  text: z.string().describe("The file's text (UTF-8)"),
  historyBefore: z
    .string()
    .regex(/^[0-9]{1,20}$/)
    .optional()
    .describe(
      "The import's start (Unix ns; default and at most now): findings on calls before it are history, not sent",
    ),
});

const importedFile = z.object({
  workspace: z.string(),
  calls: z.number(),
  toolResults: z.number(),
  compactions: z.number(),
  conversations: z.number().describe('Conversations of its calls'),
  merged: z.number().describe('Calls stored already (by telemetry): merged, not added'),
  olderThanRetention: z.number().describe("Calls older than the server's retention window"),
  retentionDays: z.number().describe("The server's ROTSCOPE_RETENTION_DAYS (0 keeps everything)"),
  touched: z.array(z.string()).describe('Conversations it changed: evaluate them afterwards'),
});

const evaluateBody = z.strictObject({
  workspace,
  conversations: z.array(z.string().min(1).max(1024)).max(IMPORT_EVALUATE_BATCH),
});

const evaluation = z.object({
  fromHistory: z
    .number()
    .describe('Findings on imported history: stored with their time, not sent'),
  live: z.number().describe("Findings on calls after the import's start"),
  failed: z
    .array(z.object({ conversationId: z.string(), message: z.string() }))
    .describe("Conversations whose evaluation failed: the server's evaluator retries them"),
});

export const importRoutes = withInputRules<ApiDeps>(async (app, deps) => {
  const db = deps.store.db;
  const pipeline = deps.pipeline ?? new IngestPipeline(deps.store, deps.config);

  /** The workspace a request imports into, or the 403 message when its token may not. */
  const target = (
    request: Parameters<typeof ownWorkspace>[0],
    named: string | undefined,
  ): { workspace: string } | { refusal: string } => {
    const chosen = named ?? request.workspaceId;
    const own = ownWorkspace(request);
    return own !== undefined && chosen !== own
      ? {
          refusal: `this token belongs to workspace "${own}"; it cannot import into "${chosen}" (pass --workspace ${own}, or a token of "${chosen}")`,
        }
      : { workspace: chosen };
  };

  app.post(
    '/api/import',
    {
      config: { scope: 'ingest' },
      bodyLimit: IMPORT_BODY_LIMIT,
      schema: {
        body: importBody,
        response: { 200: importedFile, 400: errorSchema, 403: errorSchema },
      },
    },
    async (request, reply) => {
      const chosen = target(request, request.body.workspace);
      if ('refusal' in chosen)
        return reply.code(403).send({ error: 'forbidden', message: chosen.refusal });
      const now = BigInt(msToNs(Date.now()));
      const asked = request.body.historyBefore;
      const historyBefore = asked === undefined || BigInt(asked) > now ? now : BigInt(asked);
      await ensureWorkspace(db, chosen.workspace);
      const imported = await importText(
        pipeline,
        chosen.workspace,
        { path: request.body.path, text: request.body.text },
        {
          historyBeforeNs: historyBefore.toString(),
          cutoffNs: importCutoffNs(deps.config.retentionDays, Number(historyBefore / 1_000_000n)),
        },
      );
      if (!imported.ok)
        return reply.code(400).send({ error: 'unsupported_file', message: imported.error });
      request.log.debug(
        { workspace: chosen.workspace, calls: imported.file.calls },
        'import: file stored',
      );
      return {
        workspace: chosen.workspace,
        ...imported.file,
        retentionDays: deps.config.retentionDays,
      };
    },
  );

  app.post(
    '/api/import/evaluate',
    {
      config: { scope: 'ingest' },
      schema: {
        body: evaluateBody,
        response: { 200: evaluation, 403: errorSchema },
      },
    },
    async (request, reply) => {
      const chosen = target(request, request.body.workspace);
      if ('refusal' in chosen)
        return reply.code(403).send({ error: 'forbidden', message: chosen.refusal });
      const evaluated = await evaluateImported(
        deps.store,
        chosen.workspace,
        request.body.conversations,
      );
      for (const { conversationId, message } of evaluated.failed)
        request.log.warn(
          { workspace: chosen.workspace, conversationId, message },
          'import: evaluation failed',
        );
      // the reason is in the server's log: a client is not told the database's own messages
      return {
        ...evaluated,
        failed: evaluated.failed.map(({ conversationId }) => ({
          conversationId,
          message: "see the server's log",
        })),
      };
    },
  );
});
